--[[
open_account: create an account with an opening balance (0 allowed).
The account hash has no TTL, ever.
KEYS[1] account hash
KEYS[2] txn record
KEYS[3] partition journal
KEYS[4] the partition's set of account ids (how restore and reconcile find accounts)
KEYS[5] the partition's member index (optional; see includes/members.lua)
ARGV[1] txn_id
ARGV[2] account_id
ARGV[3] initial_minor
ARGV[4] retention_s
ARGV[5] terminal_id
ARGV[6] cashier_id
ARGV[7] holder_name (optional; shown at the till, journaled as field 'name'; not part of
  the request fingerprint)
ARGV[8] phone (optional, with KEYS[5]; journaled 'ph')
ARGV[9] name key (with KEYS[5])
ARGV[10] pinyin initials (with KEYS[5])
Returns {status, balance_minor, replayed, journal_id}
Statuses: APPLIED, ACCOUNT_EXISTS
Errors: INVALID, TXN_CONFLICT, NOT_INITIALIZED
]]
--@include checks
--@include decisions
--@include journal
--@include members

local bad = check_request(true) or check_holder(ARGV[7])
  or (KEYS[5] and (check_index_key(KEYS[5], string.sub(KEYS[3], 1, -2)) or check_member_args(ARGV[8], ARGV[9], ARGV[10])))
if bad then return bad end
local holder = ARGV[7] or ''
local acct_key, txn_key, jkey, set_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
if set_key ~= string.sub(jkey, 1, -2) .. 'accts' then return invalid('KEYS[4]', 'not the account set of this partition') end
local txn_id, account_id, initial = ARGV[1], ARGV[2], tonumber(ARGV[3])
local ttl_s = ARGV[4]
local fp = 'open|' .. account_id .. '|' .. ARGV[3]

local prior = replay(txn_key, fp)
if prior then return prior end
if not initialized(jkey) then return NOT_INITIALIZED end

local existing = redis.call('HGET', acct_key, 'bal')
if existing then return decide(txn_key, fp, ttl_s, 'ACCOUNT_EXISTS', tonumber(existing)) end

redis.call('HSET', acct_key, 'bal', int_str(initial), 'st', 'active', 'ct', now_ms())
if holder ~= '' then redis.call('HSET', acct_key, 'nm', holder) end
local phone = KEYS[5] and ARGV[8] or ''
if KEYS[5] then index_member(KEYS[5], acct_key, account_id, holder, phone, ARGV[9] or '', ARGV[10] or '') end
redis.call('SADD', set_key, account_id)
local jid = journal(jkey, acct_key, txn_id, 'open', account_id, initial, initial, '',
                    member_fields(holder, phone))
return decide(txn_key, fp, ttl_s, 'APPLIED', initial, jid)
