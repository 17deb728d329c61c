--[[
minimal_deduct_sharded_records: minimal_deduct.lua with the idempotency record layout
designed for issue 30 item 4 (docs/ledger.md, "Records of at most 160 bytes"), to measure
that layout before the product is moved to it (`python -m bench.record_layout`). Not the
product. Records are fields of two static hashes per shard, rotated by age inside the
calls: no key and no EXPIRE per record.
KEYS[1] account hash   KEYS[2] current records of the txn id's shard (<p>tc:<last 2 chars>)
KEYS[3] journal stream KEYS[4] previous records of the shard (<p>to:<last 2 chars>)
ARGV[1] txn_id  ARGV[2] account_id  ARGV[3] amount_minor  ARGV[4] retention_s
A record: field <txn_id> = 'fingerprint|status|balance|journal id'. The current hash holds
'@born' (the second it was started); a call that finds it older than the retention first
makes it the previous hash (UNLINK the old previous, RENAME, EXPIRE retention) and starts a
new one: a record lives at least the retention and at most twice it.
Returns {status, balance_minor, replayed, journal_id}.
]]
local fp = ARGV[2] .. '|' .. ARGV[3]
local rec = redis.call('HMGET', KEYS[2], ARGV[1], '@born')
local v = rec[1] or redis.call('HGET', KEYS[4], ARGV[1])
if v then
  local f, s, b, j = string.match(v, '^([^|]*|[^|]*)|([^|]*)|([^|]*)|(.*)$')
  if f ~= fp then return {'TXN_CONFLICT', 0, 0, f} end
  return {s, tonumber(b), 1, j}
end
local function record(value, now_s)
  local born = rec[2]
  if born and tonumber(now_s) - tonumber(born) >= tonumber(ARGV[4]) then
    redis.call('UNLINK', KEYS[4])
    redis.call('RENAME', KEYS[2], KEYS[4])
    redis.call('EXPIRE', KEYS[4], ARGV[4])
    born = nil
  end
  if born then
    redis.call('HSET', KEYS[2], ARGV[1], value)
  else
    redis.call('HSET', KEYS[2], ARGV[1], value, '@born', now_s)
  end
end
local bal = redis.call('HGET', KEYS[1], 'bal')
if not bal then return {'ACCOUNT_NOT_FOUND', 0, 0, ''} end
if tonumber(bal) < tonumber(ARGV[3]) then
  record(fp .. '|INSUFFICIENT_FUNDS|' .. bal .. '|', redis.call('TIME')[1])
  return {'INSUFFICIENT_FUNDS', tonumber(bal), 0, ''}
end
local after = redis.call('HINCRBY', KEYS[1], 'bal', -tonumber(ARGV[3]))
local jid = redis.call('XADD', KEYS[3], '*', 'txn', ARGV[1], 'kind', 'deduct', 'acct', ARGV[2],
                       'amt', '-' .. ARGV[3], 'bal', after)
-- the entry id's milliseconds are the server's time: no TIME call on the applied path
record(fp .. '|A|' .. after .. '|' .. jid, string.match(jid, '^(%d+)%d%d%d%-'))
return {'APPLIED', after, 0, jid}
