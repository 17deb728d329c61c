--[[
audit: journal one back-office management action (who did what, from where), amount 0,
no account, so the audit trail is part of the hash-chained book (core/audit.py).
Journal entry: kind 'audit', acct '~', amt 0, bal 0, term, cash (the web user), orig '',
rec (the record: a JSON object of the action, target, summary, address, refs and a
nonce; the txn id is 'bo-audit-' and the first 32 hex digits of its SHA-256, which the
reconcile service checks). Idempotent by txn id like every script.
KEYS[1] txn record
KEYS[2] journal of the terminal's partition
ARGV[1] txn_id
ARGV[2] terminal_id
ARGV[3] retention_s
ARGV[4] who (the back-office user)
ARGV[5] the record, a JSON object (at most 4096 bytes)
Returns {status, 0, replayed, journal_id}
Statuses: APPLIED
Errors: INVALID, TXN_CONFLICT, NOT_INITIALIZED
]]
--@include checks
--@include decisions

-- core/audit.py has the same limit
local MAX_RECORD_BYTES = 4096

local txn_key, jkey = KEYS[1], KEYS[2]
local txn_id, terminal_id, ttl_s, who, rec = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]

if type(jkey) ~= 'string' or string.sub(jkey, -1) ~= 'j' then return invalid('KEYS[2]', 'not a journal key') end
local prefix = string.sub(jkey, 1, -2)
local bad = check_id(txn_id, 'txn_id') or check_id(terminal_id, 'terminal_id')
    or check_ttl(ttl_s) or check_id(who, 'who')
if bad then return bad end
if txn_key ~= prefix .. 't:' .. txn_id then return invalid('KEYS[1]', 'not the key of this txn_id') end
if not string.match(txn_id, '^bo%-audit%-[0-9a-f]+$') or #txn_id ~= 41 then
  return invalid('txn_id', "must be 'bo-audit-' and 32 hex digits")
end
if type(rec) ~= 'string' or #rec > MAX_RECORD_BYTES then
  return invalid('record', 'missing or longer than 4096 bytes')
end
local ok, record = pcall(cjson.decode, rec)
if not ok or type(record) ~= 'table' or string.sub(rec, 1, 1) ~= '{' then
  return invalid('record', 'not a JSON object')
end

local fp = 'audit|' .. terminal_id .. '|' .. who .. '|' .. redis.sha1hex(rec)
local prior = replay(txn_key, fp)
if prior then return prior end
if not initialized(jkey) then return NOT_INITIALIZED end

local id = redis.call('XADD', jkey, '*', 'txn', txn_id, 'kind', 'audit', 'acct', '~',
  'amt', '0', 'bal', '0', 'term', terminal_id, 'cash', who, 'orig', '', 'rec', rec)
return decide(txn_key, fp, ttl_s, 'APPLIED', 0, id)
