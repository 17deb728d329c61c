--[[
available: read an account's balance and its available balance (balance - active holds)
at one instant. Read-only.
KEYS[1] account hash
KEYS[2] holds of the account
KEYS[3] hold expiries
Returns {balance_minor, available_minor (exact digits), account status, last_journal_id}, or {}
  for an unknown account
Statuses: none
Errors: none
]]
--@flags no-writes
--@include common
--@include holds

local acct = redis.call('HMGET', KEYS[1], 'bal', 'st', 'lj')
if not acct[1] then return {} end
local held = active_holds(KEYS[2], KEYS[3], now_ms())
local bal = tonumber(acct[1])
return {int_str(bal), int_str(bal - held), acct[2] or 'active', acct[3] or ''}
