--[[
void: release an active hold without taking anything.
KEYS[1] account hash
KEYS[2] txn record (of this void)
KEYS[3] partition journal
KEYS[4] holds of the account
KEYS[5] hold expiries
KEYS[6] txn record of the hold
ARGV[1] txn_id
ARGV[2] account_id
ARGV[3] '0'
ARGV[4] retention_s
ARGV[5] terminal_id
ARGV[6] cashier_id
ARGV[7] hold_txn_id
Returns {status, balance_minor, replayed, journal_id}
Statuses: APPLIED, ACCOUNT_NOT_FOUND, HOLD_NOT_FOUND, HOLD_ALREADY_CAPTURED, HOLD_ALREADY_VOIDED, HOLD_EXPIRED
Errors: INVALID, TXN_CONFLICT, NOT_INITIALIZED
]]
--@include checks
--@include decisions
--@include journal
--@include holds
--@include resolve_hold

local prefix = string.sub(KEYS[3] or '', 1, -2)
local bad = check_request(true) or check_hold_keys(prefix, ARGV[2]) or check_hold_ref(prefix, ARGV[7])
if bad then return bad end
if ARGV[3] ~= '0' then return invalid('amount_minor', 'must be 0 for void') end
local acct_key, txn_key, jkey, holds_key, expiry_key, hold_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local account_id, ttl_s, hold_txn = ARGV[2], ARGV[4], ARGV[7]
local fp = 'void|' .. account_id .. '|0|' .. hold_txn

local prior = replay(txn_key, fp)
if prior then return prior end

-- no EXISTS of the journal up front: a decline checks it (decline), the applied path
-- learns it from append_entry's NOMKSTREAM, its first write (as the balance scripts)
local bal = redis.call('HGET', acct_key, 'bal')
if not bal then return decline(jkey, txn_key, fp, ttl_s, 'ACCOUNT_NOT_FOUND', 0) end
local status = hold_state(hold_key, account_id, now_ms())
if status then return decline(jkey, txn_key, fp, ttl_s, status, tonumber(bal)) end

local balance = int_str(bal)
-- the entry journal() wrote (txn, account, terminal, cashier, hold: checked ids, nothing to escape)
local jid = append_entry(jkey, 'void', '0', balance, hold_txn)
if not jid then return NOT_INITIALIZED end
redis.call('HSET', acct_key, 'lj', jid)
redis.call('HDEL', holds_key, hold_txn)
redis.call('ZREM', expiry_key, hold_txn)
redis.call('HSET', hold_key, 'hs', 'voided')
return decide(txn_key, fp, ttl_s, 'APPLIED', balance, jid)
