--[[
Holds of one account: a hash hold txn id -> amount (KEYS[4] of the hold scripts), and a
sorted set hold txn id by expiry in ms (KEYS[5]). A hold counts until its expiry whether
or not anything touches it; expired entries are cleared, and their release journaled, by
expire_holds.lua.
]]
--@include common

local MAX_ACTIVE_HOLDS = 100

local function active_holds(holds_key, expiry_key, now)
  -- most accounts hold nothing: no expiry set at all (Redis deletes an emptied sorted
  -- set), and EXISTS costs half a range read; an expired, unswept hold keeps the set.
  -- `now` (ms digits) may be left out: the time is then read only when there are holds.
  if redis.call('EXISTS', expiry_key) == 0 then return 0, 0 end
  local ids = redis.call('ZRANGEBYSCORE', expiry_key, '(' .. (now or now_ms()), '+inf')
  if #ids == 0 then return 0, 0 end
  local amounts = redis.call('HMGET', holds_key, unpack(ids))
  local sum = 0
  for i = 1, #amounts do sum = sum + tonumber(amounts[i] or '0') end
  return sum, #ids
end

local function check_hold_keys(prefix, account_id)
  if KEYS[4] ~= prefix .. 'h:' .. account_id then return invalid('KEYS[4]', 'not the holds of this account') end
  if KEYS[5] ~= prefix .. 'hx:' .. account_id then return invalid('KEYS[5]', 'not the hold expiries of this account') end
  return nil
end
