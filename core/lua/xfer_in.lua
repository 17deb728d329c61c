--[[
xfer_in: the second half of an internal transfer (see xfer_out.lua). Idempotent by the
transfer id: a second call (a retry, or the settle step after a crash) replays.
Marks the transfer received in the destination's slot (xr:<dest_id>), which is how
Ledger.balance() and the settle step know the in-flight record at the source is done.
KEYS[1] destination account hash   KEYS[2] transfer record (t:<xfer_id>, destination slot)
KEYS[3] destination journal   KEYS[4] received hash of the destination (xr:<dest_id>:
xfer_id -> ms received)
ARGV[1] xfer_id  ARGV[2] destination id  ARGV[3] amount_minor  ARGV[4] retention_s
ARGV[5] '' ARGV[6] ''  ARGV[7] source id  ARGV[8] root account id  ARGV[9] origin txn id
Returns {status, balance_minor (destination after), replayed, journal_id}; APPLIED, or
ACCOUNT_NOT_FOUND (not stored: the settle step tries again).
Journaled as kind 'xfer_in', txn '<xfer_id>.in', amt +amount, with root, peer
(= source), xfer. A transfer never passes the balance limit: the total does not change.
]]
--@include common

local xfer_id, dst, src, root, origin = ARGV[1], ARGV[2], ARGV[7], ARGV[8], ARGV[9] or ''
local bad = check_internal_id(xfer_id, 'xfer_id') or check_account(src, 'source')
  or check_account(dst, 'destination') or check_id(root, 'root')
  or check_amount(ARGV[3], 'amount_minor', false, MAX_BALANCE_MINOR) or check_ttl(ARGV[4])
if bad then return bad end
if (root_of(src) or src) ~= root or (root_of(dst) or dst) ~= root or src == dst then
  return invalid('root', 'source and destination must be two sub-balances of the root account')
end
if origin ~= '' and check_id(origin, 'origin') and check_internal_id(origin, 'origin') then
  return invalid('origin', 'not a txn id')
end
local jkey = KEYS[3]
local prefix = string.sub(jkey or '', 1, -2)
if string.sub(jkey or '', -1) ~= 'j' then return invalid('KEYS[3]', 'not a journal key') end
bad = check_keys(prefix, KEYS[1], KEYS[2], dst, xfer_id)
if bad then return bad end
if KEYS[4] ~= prefix .. 'xr:' .. dst then return invalid('KEYS[4]', 'not the received hash of the destination') end
local acct_key, txn_key, ttl_s, amount = KEYS[1], KEYS[2], ARGV[4], tonumber(ARGV[3])
local fp = 'xfer|' .. src .. '|' .. dst .. '|' .. ARGV[3]

local prior = replay(txn_key, fp)
if prior then return prior end
if not initialized(jkey) then return NOT_INITIALIZED end
if redis.call('EXISTS', acct_key) == 0 then return {'ACCOUNT_NOT_FOUND', 0, 0, ''} end

local after = redis.call('HINCRBY', acct_key, 'bal', amount)
redis.call('HSET', KEYS[4], xfer_id, now_ms())
local jid = journal(jkey, acct_key, xfer_id .. '.in', 'xfer_in', dst, amount, after, origin, nil, nil,
                    {'root', root, 'peer', src, 'xfer', xfer_id})
return decide(txn_key, fp, ttl_s, 'APPLIED', after, jid)
