--[[
Shared by capture.lua and void.lua: find the hold named by ARGV[7] and say whether it
can still be resolved. A hold resolves at most once.
KEYS[6] is the hold's own txn record.
]]
--@include checks

-- Returns (nil, amount) when the hold is active, or (status, nil) when it is not.
local function hold_state(hold_key, account_id, now)
  local h = redis.call('HMGET', hold_key, 'f', 'hs', 'ha', 'hx')
  if not h[2] then return 'HOLD_NOT_FOUND', nil end
  -- the hold's fingerprint starts 'hold|<account>|' (account_id is a checked id: no '|')
  local of_account = 'hold|' .. account_id .. '|'
  if string.sub(h[1], 1, #of_account) ~= of_account then return 'HOLD_NOT_FOUND', nil end
  if h[2] == 'captured' then return 'HOLD_ALREADY_CAPTURED', nil end
  if h[2] == 'voided' then return 'HOLD_ALREADY_VOIDED', nil end
  if h[2] == 'expired' or tonumber(h[4]) <= tonumber(now) then return 'HOLD_EXPIRED', nil end
  return nil, tonumber(h[3])
end

local function check_hold_ref(prefix, hold_txn_id)
  local bad = check_id(hold_txn_id, 'hold_txn_id')
  if bad then return bad end
  if KEYS[6] ~= txn_key_of(prefix, hold_txn_id) then return invalid('KEYS[6]', 'not the record of hold_txn_id') end
  if hold_txn_id == ARGV[1] then return invalid('hold_txn_id', 'must differ from txn_id') end
  return nil
end
