--[[
deduct: take amount_minor from an account when its balance covers it.
KEYS[1] account hash   KEYS[2] txn record   KEYS[3] partition journal
KEYS[4] holds of the account   KEYS[5] hold expiries of the account
The balance must cover the amount *plus* the account's active holds.
ARGV[1] txn_id  ARGV[2] account_id  ARGV[3] amount_minor  ARGV[4] retention_s
KEYS[6] the partition's settings (optional): the spending order of the buckets (buckets.lua);
  the txn record keeps the bonus taken ('tb') for refunds
Returns {status, balance_minor, replayed, journal_id}; statuses: APPLIED,
INSUFFICIENT_FUNDS, ACCOUNT_NOT_FOUND, ACCOUNT_FROZEN (+ INVALID, TXN_CONFLICT,
NOT_INITIALIZED from the shared checks).
]]
--@include common
--@include members
--@include buckets

local bad = check_request(false) or check_hold_keys(string.sub(KEYS[3], 1, -2), ARGV[2])
  or check_settings_key(KEYS[6], string.sub(KEYS[3], 1, -2))
if bad then return bad end
local acct_key, txn_key, jkey = KEYS[1], KEYS[2], KEYS[3]
local txn_id, account_id, amount = ARGV[1], ARGV[2], tonumber(ARGV[3])
local ttl_s = ARGV[4]
local fp = 'deduct|' .. account_id .. '|' .. ARGV[3]

local prior = replay(txn_key, fp)
if prior then return prior end
if not initialized(jkey) then return NOT_INITIALIZED end

local acct = redis.call('HMGET', acct_key, 'bal', 'st', 'bo')
if not acct[1] then return decide(txn_key, fp, ttl_s, 'ACCOUNT_NOT_FOUND', 0) end
if acct[2] == 'closed' then return decide(txn_key, fp, ttl_s, 'ACCOUNT_CLOSED', 0) end   -- 退卡: see close_account.lua
local balance = tonumber(acct[1])
if acct[2] == 'frozen' then return decide(txn_key, fp, ttl_s, 'ACCOUNT_FROZEN', balance) end
local held = active_holds(KEYS[4], KEYS[5], now_ms())
if balance - held < amount then return decide(txn_key, fp, ttl_s, 'INSUFFICIENT_FUNDS', balance) end

local bonus = tonumber(acct[3] or '0')
local take_p, take_b = split_take(amount, balance, bonus, KEYS[6])
local after
if take_b > 0 then after = set_buckets(acct_key, balance - amount, bonus - take_b)
else after = redis.call('HINCRBY', acct_key, 'bal', int_str(-amount)) end
local jid = journal(jkey, acct_key, txn_id, 'deduct', account_id, -amount, after, '', nil, nil,
                    bucket_fields(-take_p, -take_b))
return decide(txn_key, fp, ttl_s, 'APPLIED', after, jid, take_b)
