--[[
cashier_pin_attempt: count PIN failures of one cashier and lock the cashier after
too many (used by core/cashiers.py, not by the ledger; it never touches balances).
Outcomes:
  check: how long the cashier is still locked (0 = not locked); changes nothing.
  fail : one more failure inside the window; at max_failures the cashier is locked
         for ARGV[4] ms and the counter starts again.
  ok   : clears the counter.
Numbers go out as exact digits (int_str), like every script's; an unknown outcome is a
Redis error reply.
KEYS[1] failure counter of the cashier (cs:cashier:{<id>}:fails: the cashier's hash tag)
KEYS[2] lock key of the cashier (cs:cashier:{<id>}:lock, the same slot)
ARGV[1] outcome: 'check' | 'fail' | 'ok'
ARGV[2] max_failures
ARGV[3] failure window in ms
ARGV[4] lock time in ms
Returns {failures_so_far, lock_ms_left}
Statuses: none
Errors: none
]]
--@include common

local fails_key, lock_key = KEYS[1], KEYS[2]
local outcome = ARGV[1]
local max_failures, window_ms, lock_ms = tonumber(ARGV[2]), int_str(ARGV[3]), int_str(ARGV[4])

local left = redis.call('PTTL', lock_key)
if left < 0 then left = 0 end
if outcome == 'check' then
  return {int_str(redis.call('GET', fails_key) or '0'), int_str(left)}
end
if outcome == 'ok' then
  redis.call('DEL', fails_key)
  return {'0', int_str(left)}
end
if outcome ~= 'fail' then return redis.error_reply('outcome must be check, fail or ok') end
local fails = redis.call('INCR', fails_key)
if fails == 1 then redis.call('PEXPIRE', fails_key, window_ms) end
if fails >= max_failures then
  redis.call('SET', lock_key, '1', 'PX', lock_ms)
  redis.call('DEL', fails_key)
  return {int_str(fails), lock_ms}
end
return {int_str(fails), int_str(left)}
