--[[
minimal_deduct: the smallest script with the deduct contract, the yardstick of issue 17
(not the product: bench/parts/server_cost.py runs it beside the product's scripts).
It checks, decrements, records the first answer under the txn id and journals, in one
script, and replays the stored answer for a known txn id; it validates nothing, knows no
holds, no frozen state and no exact formatting beyond what Redis gives.
KEYS[1] account hash   KEYS[2] txn record   KEYS[3] journal stream
ARGV[1] txn_id  ARGV[2] account_id  ARGV[3] amount_minor  ARGV[4] retention_s
Returns {status, balance_minor, replayed, journal_id}.
]]
local rec = redis.call('HMGET', KEYS[2], 'f', 's', 'b', 'j')
local fp = ARGV[2] .. '|' .. ARGV[3]
if rec[1] then
  if rec[1] ~= fp then return {'TXN_CONFLICT', 0, 0, rec[1]} end
  return {rec[2], tonumber(rec[3]), 1, rec[4] or ''}
end
local bal = redis.call('HGET', KEYS[1], 'bal')
if not bal then return {'ACCOUNT_NOT_FOUND', 0, 0, ''} end
if tonumber(bal) < tonumber(ARGV[3]) then
  redis.call('HSET', KEYS[2], 'f', fp, 's', 'INSUFFICIENT_FUNDS', 'b', bal)
  redis.call('EXPIRE', KEYS[2], ARGV[4])
  return {'INSUFFICIENT_FUNDS', tonumber(bal), 0, ''}
end
local after = redis.call('HINCRBY', KEYS[1], 'bal', -tonumber(ARGV[3]))
local jid = redis.call('XADD', KEYS[3], '*', 'txn', ARGV[1], 'kind', 'deduct', 'acct', ARGV[2],
                       'amt', '-' .. ARGV[3], 'bal', after)
redis.call('HSET', KEYS[2], 'f', fp, 's', 'A', 'b', after, 'j', jid)
redis.call('EXPIRE', KEYS[2], ARGV[4])
return {'APPLIED', after, 0, jid}
