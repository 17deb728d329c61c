--[[
member_code_use: mark one time step of a member's dynamic member code (会员码, RFC 6238)
as used, once (used by core/member_codes.py, not by the ledger; it never touches
balances). A code is accepted only for a step after the last one used, so a code works
once; the same step asked again by the same txn id is that charge's retry (its reply was
lost before core decided): accepted again, so a retry needs no second code.
KEYS[1] the member's last used step (cs:mpin:{<account_id>}:step, the account's hash tag)
ARGV[1] the time step of the code (whole number)
ARGV[2] the txn id of the charge the code confirms
ARGV[3] how long the mark is kept, in ms (longer than a code lives)
Returns {'ok' | 'used', last_step}
Statuses: none
Errors: none
]]
--@include common

local step_key = KEYS[1]
local step, txn_id, keep_ms = int_str(ARGV[1]), ARGV[2], int_str(ARGV[3])

local last = redis.call('GET', step_key)
if last then
  local sep = string.find(last, ':', 1, true)
  local last_step, last_txn = string.sub(last, 1, sep - 1), string.sub(last, sep + 1)
  if last_step == step and last_txn == txn_id then return {'ok', last_step} end
  if tonumber(last_step) >= tonumber(step) then return {'used', last_step} end
end
redis.call('SET', step_key, step .. ':' .. txn_id, 'PX', keep_ms)
return {'ok', step}
