--[[
xfer_clear: forget settled transfers: remove their entries from one in-flight hash
(x:<source_id>, at the source) or one received hash (xr:<dest_id>, at the destination).
Called by Ledger.settle_transfers only after it saw the destination's received mark,
some seconds old (so a concurrent balance() read never misses the money), and always
source first. Changes no balance, so no journal entry.
KEYS[1] the in-flight or received hash   ARGV[1..] xfer ids
Returns {removed_count}.
]]
--@include common

local key = KEYS[1]
if type(key) ~= 'string' or not (string.match(key, '^cs:{[^}]+}:x:[^:]') or string.match(key, '^cs:{[^}]+}:xr:')) then
  return invalid('KEYS[1]', 'not an in-flight or received hash')
end
for i = 1, #ARGV do
  local bad = check_internal_id(ARGV[i], 'xfer_id')
  if bad then return bad end
end
if #ARGV == 0 then return {0} end
return {redis.call('HDEL', key, unpack(ARGV))}
