--[[
refund: give back part or all of an earlier deduction on the same account.
Several partial refunds add up; together they never exceed the original.
A refund is allowed on a frozen account: it returns the customer's own money.
Each bucket gets back its share of what the original took (its record's 'tb', see
buckets.lua split_refund): never more than was taken from a bucket.
The original's record lives as long as the retention: older deductions are
refunded by a back-office credit.
KEYS[1] account hash
KEYS[2] txn record
KEYS[3] partition journal
KEYS[4] txn record of the original deduction
ARGV[1] txn_id
ARGV[2] account_id
ARGV[3] amount_minor
ARGV[4] retention_s
ARGV[5] terminal_id
ARGV[6] cashier_id
ARGV[7] original_txn_id
Returns {status, balance_minor, replayed, journal_id}
Statuses: APPLIED, ACCOUNT_NOT_FOUND, ACCOUNT_CLOSED, ORIGINAL_NOT_FOUND, REFUND_EXCEEDS_ORIGINAL, BALANCE_LIMIT_EXCEEDED
Errors: INVALID, TXN_CONFLICT, NOT_INITIALIZED
]]
--@include checks
--@include decisions
--@include journal
--@include accounts
--@include buckets

local bad = check_request(false)
if bad then return bad end
local acct_key, txn_key, jkey, orig_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local txn_id, account_id, amount = ARGV[1], ARGV[2], tonumber(ARGV[3])
local ttl_s, original = ARGV[4], ARGV[7]
bad = check_id(original, 'original_txn_id')
if bad then return bad end
if original == txn_id then return invalid('original_txn_id', 'must differ from txn_id') end
if orig_key ~= txn_key_of(string.sub(jkey, 1, -2), original) then return invalid('KEYS[4]', 'not the key of original_txn_id') end
local fp = 'refund|' .. account_id .. '|' .. ARGV[3] .. '|' .. original

local prior = replay(txn_key, fp)
if prior then return prior end

local acct, refused = account_of(acct_key, 'bo')
if refused then return decline(jkey, txn_key, fp, ttl_s, refused, 0) end
local balance = tonumber(acct[1])

-- The original must be an applied deduction (or capture) of this very account.
local orig = redis.call('HMGET', orig_key, 'f', 's', 'r', 'tb')
local okind, oacct, oamount = nil, nil, nil
if orig[1] then okind, oacct, oamount = string.match(orig[1], '^([a-z]+)|([^|]+)|([0-9]+)') end
if status_of(orig[2]) ~= 'APPLIED' or oacct ~= account_id or (okind ~= 'deduct' and okind ~= 'capture') then
  return decline(jkey, txn_key, fp, ttl_s, 'ORIGINAL_NOT_FOUND', balance)
end
local refunded = tonumber(orig[3] or '0')
if refunded + amount > tonumber(oamount) then
  return decline(jkey, txn_key, fp, ttl_s, 'REFUND_EXCEEDS_ORIGINAL', balance)
end
if balance + amount > MAX_BALANCE_MINOR then return decline(jkey, txn_key, fp, ttl_s, 'BALANCE_LIMIT_EXCEEDED', balance) end

local give_p, give_b = split_refund(amount, refunded, tonumber(oamount), tonumber(orig[4] or '0'))
local after = int_str(balance + amount)
local jid = append_entry(jkey, 'refund', ARGV[3], after, original, bucket_fields(give_p, give_b))
if not jid then return NOT_INITIALIZED end
redis.call('HINCRBY', orig_key, 'r', ARGV[3])   -- keeps the original's TTL
set_balance(acct_key, after, jid, give_b > 0 and tonumber(acct[3] or '0') + give_b or nil)
return decide(txn_key, fp, ttl_s, 'APPLIED', after, jid)
