--[[
sub_balance: read one sub-balance of an account (the root 'A' or a shard 'A#k') at one
instant, with its transfers in flight. Read-only. Used by balance()/available() of
split accounts, by the settle step and by merge.
KEYS[1] account hash   KEYS[2] holds   KEYS[3] hold expiries
KEYS[4] in-flight hash (x:<id>)   KEYS[5] received hash (xr:<id>)
Returns {} for an unknown id, else {balance_minor, available_minor, status, closed (0/1),
shard count n ('' for the root), last_journal_id, in_flight (flat xfer_id, 'amount|dest|ms'
list), received (flat xfer_id, ms list), sh ('' unless split), msh, mx}.
]]
--@include common

local acct = redis.call('HMGET', KEYS[1], 'bal', 'st', 'cl', 'n', 'lj', 'sh', 'msh', 'mx')
if not acct[1] then return {} end
local held = active_holds(KEYS[2], KEYS[3], now_ms())
local bal = tonumber(acct[1])
local closed = 0
if acct[3] then closed = 1 end
return {bal, bal - held, acct[2] or 'active', closed, acct[4] or '', acct[5] or '',
        redis.call('HGETALL', KEYS[4]), redis.call('HGETALL', KEYS[5]),
        acct[6] or '', acct[7] or '', acct[8] or ''}
