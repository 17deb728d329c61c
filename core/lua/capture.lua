--[[
capture: take up to the held amount of an active hold; the rest of the hold is released.
A capture completes a sale authorised earlier, so it goes through on a frozen account.
A capture can be refunded like a deduction.
KEYS[1] account hash
KEYS[2] txn record (of this capture)
KEYS[3] partition journal
KEYS[4] holds of the account
KEYS[5] hold expiries
KEYS[6] txn record of the hold
KEYS[7] the partition's settings (optional): the spending order of the buckets, as deduct
ARGV[1] txn_id
ARGV[2] account_id
ARGV[3] amount_minor
ARGV[4] retention_s
ARGV[5] terminal_id
ARGV[6] cashier_id
ARGV[7] hold_txn_id
Returns {status, balance_minor, replayed, journal_id}
Statuses: APPLIED, ACCOUNT_NOT_FOUND, HOLD_NOT_FOUND, HOLD_ALREADY_CAPTURED, HOLD_ALREADY_VOIDED, HOLD_EXPIRED, CAPTURE_EXCEEDS_HOLD
Errors: INVALID, TXN_CONFLICT, NOT_INITIALIZED
]]
--@include checks
--@include decisions
--@include journal
--@include accounts
--@include holds
--@include buckets
--@include resolve_hold

local prefix = string.sub(KEYS[3] or '', 1, -2)
local bad = check_request(false) or check_hold_keys(prefix, ARGV[2]) or check_hold_ref(prefix, ARGV[7])
  or check_settings_key(KEYS[7], prefix)
if bad then return bad end
local acct_key, txn_key, jkey, holds_key, expiry_key, hold_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local txn_id, account_id, amount, ttl_s, hold_txn = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], ARGV[7]
local fp = 'capture|' .. account_id .. '|' .. ARGV[3] .. '|' .. hold_txn

local prior = replay(txn_key, fp)
if prior then return prior end

local acct = redis.call('HMGET', acct_key, 'bal', 'bo')
if not acct[1] then return decline(jkey, txn_key, fp, ttl_s, 'ACCOUNT_NOT_FOUND', 0) end
local balance = tonumber(acct[1])
local now = now_ms()
local status, held = hold_state(hold_key, account_id, now)
if status then return decline(jkey, txn_key, fp, ttl_s, status, balance) end
if amount > held then return decline(jkey, txn_key, fp, ttl_s, 'CAPTURE_EXCEEDS_HOLD', balance) end

local bonus = acct[2] and tonumber(acct[2]) or 0
local take_p, take_b = split_take(amount, balance, bonus, KEYS[7])
local after = int_str(balance - amount)
-- ARGV[3] is canonical digits (checked): '-' .. it is the exact signed amount
local jid = append_entry(jkey, 'capture', '-' .. ARGV[3], after, hold_txn, bucket_fields(-take_p, -take_b))
if not jid then return NOT_INITIALIZED end
redis.call('HDEL', holds_key, hold_txn)
redis.call('ZREM', expiry_key, hold_txn)
redis.call('HSET', hold_key, 'hs', 'captured', 'hc', ARGV[3])
set_balance(acct_key, after, jid, take_b > 0 and bonus - take_b or nil)
return decide(txn_key, fp, ttl_s, 'APPLIED', after, jid, take_b)
