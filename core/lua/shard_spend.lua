--[[
shard_spend: a deduction or a hold on ONE shard of a split account, in phases.
The ledger visits the shards in an order fixed by the txn id (start = crc32(txn_id) % N,
then the next ones), so a retry visits them in the same order. Phase 0 on every shard,
then (after settling and rebalancing) phase 1 on the start shard only, which decides
for good. At most one shard ever applies a txn id: a shard applies only when no
earlier shard in the order did (each visit leaves its decision in the shard's txn
record, and a later visit of the same txn answers that decision).
KEYS[1] shard account hash   KEYS[2] txn record (in the shard's slot)   KEYS[3] journal
KEYS[4] holds of the shard   KEYS[5] hold expiries of the shard
ARGV[1] txn_id  ARGV[2] shard id ('<account_id>#<k>')  ARGV[3] amount_minor
ARGV[4] retention_s  ARGV[5] terminal_id  ARGV[6] cashier_id
ARGV[7] kind ('deduct' | 'hold')  ARGV[8] phase ('0' | '1')  ARGV[9] shard count N
ARGV[10] others_minor: what the other sub-balances held when the ledger read them
         (balances for deduct, available balances for hold), added to this shard's
         figure so the answer shows the account's total (display only; stored)
ARGV[11] hold ttl_s (kind 'hold'; '0' for deduct)
Returns {status, balance_minor, replayed, journal_id}:
  final (stored, replayed on retry): APPLIED, INSUFFICIENT_FUNDS (phase 1 only),
    ACCOUNT_FROZEN, TOO_MANY_HOLDS (phase 1 only);
  PASS (stored with the phase): this shard does not cover it (phase 0) or is closed;
  STALE (not stored): the shard was split with another shard count: re-read the root.
The fingerprint is the plain script's with the shard id ('deduct|A#k|amount'), so
refund.lua, capture.lua and void.lua work on the shard unchanged.
]]
--@include common

local bad = check_request(false) or check_hold_keys(string.sub(KEYS[3], 1, -2), ARGV[2])
if bad then return bad end
if not root_of(ARGV[2]) then return invalid('account_id', 'not a shard id') end
local kind, phase, shards, others = ARGV[7], ARGV[8], ARGV[9], ARGV[10]
if kind ~= 'deduct' and kind ~= 'hold' then return invalid('kind', 'must be deduct or hold') end
if phase ~= '0' and phase ~= '1' then return invalid('phase', 'must be 0 or 1') end
if type(shards) ~= 'string' or not string.match(shards, '^[1-9][0-9]?$') then return invalid('shards', 'must be 1..99') end
if type(others) ~= 'string' or not string.match(others, '^-?[0-9]+$') or #others > 17 then
  return invalid('others_minor', 'must be a whole number')
end
local ttl_hold = ARGV[11] or '0'
if kind == 'hold' then
  if not string.match(ttl_hold, '^[1-9][0-9]*$') or #ttl_hold > 9 or tonumber(ttl_hold) > tonumber(ARGV[4]) then
    return invalid('ttl_s', 'must be a whole number of seconds, at most the retention')
  end
end
local acct_key, txn_key, jkey, holds_key, expiry_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local txn_id, shard_id, amount, ttl_s = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]
local others_minor = tonumber(others)
local fp = kind .. '|' .. shard_id .. '|' .. ARGV[3]
if kind == 'hold' then fp = fp .. '|' .. ttl_hold end

local rec = redis.call('HMGET', txn_key, 'f', 's', 'b', 'j', 'ph')
if rec[1] then
  if rec[1] ~= fp then return {'TXN_CONFLICT', 0, 0, rec[1]} end
  if rec[2] ~= 'PASS' then return {status_of(rec[2]), tonumber(rec[3]), 1, rec[4] or ''} end
  if tonumber(rec[5] or '0') >= tonumber(phase) then return {'PASS', tonumber(rec[3]), 1, ''} end
end
if not initialized(jkey) then return NOT_INITIALIZED end

local function pass(balance)
  redis.call('HSET', txn_key, 'f', fp, 's', 'PASS', 'b', balance, 'ph', phase)
  redis.call('EXPIRE', txn_key, ttl_s)
  return {'PASS', balance, 0, ''}
end

local acct = redis.call('HMGET', acct_key, 'bal', 'st', 'cl', 'n')
if not acct[1] or acct[3] then return pass(0) end
if acct[4] ~= shards then return {'STALE', 0, 0, acct[4] or ''} end
local balance = tonumber(acct[1])
local now = now_ms()
local held, count = active_holds(holds_key, expiry_key, now)
local shown = balance
if kind == 'hold' then shown = balance - held end
if acct[2] == 'frozen' then return decide(txn_key, fp, ttl_s, 'ACCOUNT_FROZEN', others_minor + shown) end
if kind == 'hold' and count >= MAX_ACTIVE_HOLDS then
  if phase == '0' then return pass(shown) end
  return decide(txn_key, fp, ttl_s, 'TOO_MANY_HOLDS', others_minor + shown)
end
if balance - held < amount then
  if phase == '0' then return pass(shown) end
  return decide(txn_key, fp, ttl_s, 'INSUFFICIENT_FUNDS', others_minor + shown)
end

if kind == 'deduct' then
  local after = redis.call('HINCRBY', acct_key, 'bal', -amount)
  local jid = journal(jkey, acct_key, txn_id, 'deduct', shard_id, -amount, after, '')
  redis.call('HDEL', txn_key, 'ph')
  return decide(txn_key, fp, ttl_s, 'APPLIED', others_minor + after, jid)
end
local expires_ms = tonumber(now) + tonumber(ttl_hold) * 1000
redis.call('HSET', holds_key, txn_id, amount)
redis.call('ZADD', expiry_key, expires_ms, txn_id)
local jid = journal(jkey, acct_key, txn_id, 'hold', shard_id, 0, balance, '', amount, expires_ms)
redis.call('HDEL', txn_key, 'ph')
local reply = decide(txn_key, fp, ttl_s, 'APPLIED', others_minor + balance - held - amount, jid)
redis.call('HSET', txn_key, 'hs', 'active', 'ha', amount, 'hx', expires_ms)
return reply
