--[[
The account hash (KEYS[1] of the balance scripts): bal (exact digits), st (active |
frozen | closed; absent = active), bo (the bonus bucket, buckets.lua), lj (last journal
id), nm / ph / nk / pi (the member, members.lua), ct (created, ms), dt (the open offline
debt, minor units, absent = 0: offline_deduct.lua; while it is open the member cannot
spend, and a top-up pays it first).
]]
--@include common

-- The account's fields bal, st and then `...` (HMGET), and the status every operation
-- answers when the account is missing (ACCOUNT_NOT_FOUND) or closed (ACCOUNT_CLOSED:
-- 退卡, see close_account.lua); nil when the operation may go on (a frozen account's
-- rules differ per operation: each script checks st itself).
local function account_of(acct_key, ...)
  local acct = redis.call('HMGET', acct_key, 'bal', 'st', ...)
  if not acct[1] then return acct, 'ACCOUNT_NOT_FOUND' end
  if acct[2] == 'closed' then return acct, 'ACCOUNT_CLOSED' end
  return acct, nil
end

-- Balance (exact digits) and last journal id of an account in one HSET; with
-- `bonus_after` (a change that moved the bonus bucket, buckets.lua) the bonus too ('bo',
-- absent when 0).
local function set_balance(acct_key, balance_after, journal_id, bonus_after)
  if bonus_after == nil then
    redis.call('HSET', acct_key, 'bal', balance_after, 'lj', journal_id)
  elseif bonus_after > 0 then
    redis.call('HSET', acct_key, 'bal', balance_after, 'bo', int_str(bonus_after), 'lj', journal_id)
  else
    redis.call('HSET', acct_key, 'bal', balance_after, 'lj', journal_id)
    redis.call('HDEL', acct_key, 'bo')
  end
end

-- DEBT_OPEN when the account owes an offline debt (field dt, read by the caller as
-- `debt_field`), else nil: no deduction, hold or sale while a debt is open.
local function debt_refusal(debt_field)
  if debt_field and debt_field ~= '0' then return 'DEBT_OPEN' end
  return nil
end
