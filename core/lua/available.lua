--[[
available: read an account's balance and its available balance (balance - active holds)
at one instant. Read-only.
KEYS[1] account hash   KEYS[2] holds of the account   KEYS[3] hold expiries
Returns {balance_minor, available_minor, status, last_journal_id, sh, msh, mx} or {} for an
unknown account; sh / msh / mx ('' when absent) say the account is or was split (the ledger
then adds up its sub-balances).
]]
--@include common

local acct = redis.call('HMGET', KEYS[1], 'bal', 'st', 'lj', 'sh', 'msh', 'mx')
if not acct[1] then return {} end
local held = active_holds(KEYS[2], KEYS[3], now_ms())
local bal = tonumber(acct[1])
return {bal, bal - held, acct[2] or 'active', acct[3] or '', acct[4] or '', acct[5] or '', acct[6] or ''}
