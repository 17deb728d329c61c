--[[
shard_admin: open, close, freeze or unfreeze one shard of a split account.
KEYS[1] shard account hash   KEYS[2] txn record (internal id)   KEYS[3] shard's journal
KEYS[4] the shard partition's set of account ids
ARGV[1] internal txn id ('#' + 24 hex, derived by the ledger from the split, merge,
        freeze or unfreeze txn and the shard number)
ARGV[2] shard id ('<account_id>#<k>')  ARGV[3] '0'  ARGV[4] retention_s  ARGV[5] '' ARGV[6] ''
ARGV[7] op: 'open' | 'close' | 'freeze' | 'unfreeze'
ARGV[8] open: shard count N     ARGV[9] open: status of the root ('active' | 'frozen')
ARGV[10] origin txn id (the split, merge, freeze or unfreeze)
  open    : creates the shard (bal 0, st, n = N) and adds it to the account set, or
            reopens a closed one with n = N. Journaled as 'shard_open' (amount 0).
  close   : marks the shard closed (cl): it takes no new deductions, holds or credits
            (their visits PASS / answer SHARD_CLOSED); merge moves its money to the root.
            Journaled as 'shard_close' (amount 0).
  freeze / unfreeze: the root's status, copied to the shard. Journaled as 'freeze' /
            'unfreeze' (amount 0) when it changes the shard.
Every entry carries root = the account id. Returns {status, balance_minor, replayed, journal_id};
APPLIED, or ACCOUNT_NOT_FOUND (close/freeze/unfreeze of a shard never opened).
]]
--@include common

local txn_id, shard_id, op = ARGV[1], ARGV[2], ARGV[7]
local bad = check_internal_id(txn_id, 'txn_id') or check_account(shard_id, 'account_id') or check_ttl(ARGV[4])
if bad then return bad end
local root = root_of(shard_id)
if not root then return invalid('account_id', 'not a shard id') end
if op ~= 'open' and op ~= 'close' and op ~= 'freeze' and op ~= 'unfreeze' then return invalid('op', 'unknown') end
local origin = ARGV[10] or ''
if check_id(origin, 'origin') and check_internal_id(origin, 'origin') then return invalid('origin', 'not a txn id') end
local jkey = KEYS[3]
if string.sub(jkey or '', -1) ~= 'j' then return invalid('KEYS[3]', 'not a journal key') end
local prefix = string.sub(jkey, 1, -2)
bad = check_keys(prefix, KEYS[1], KEYS[2], shard_id, txn_id)
if bad then return bad end
if KEYS[4] ~= prefix .. 'accts' then return invalid('KEYS[4]', 'not the account set of this partition') end
local acct_key, txn_key, ttl_s = KEYS[1], KEYS[2], ARGV[4]
local fp = 'shard_' .. op .. '|' .. shard_id .. '|' .. (ARGV[8] or '')

local prior = replay(txn_key, fp)
if prior then return prior end
if not initialized(jkey) then return NOT_INITIALIZED end
local acct = redis.call('HMGET', acct_key, 'bal', 'st')

if op == 'open' then
  local n, st = ARGV[8], ARGV[9]
  if type(n) ~= 'string' or not string.match(n, '^[1-9][0-9]?$') then return invalid('shards', 'must be 1..99') end
  if st ~= 'active' and st ~= 'frozen' then return invalid('status', 'must be active or frozen') end
  if acct[1] then
    redis.call('HDEL', acct_key, 'cl')
    redis.call('HSET', acct_key, 'n', n, 'st', st)
  else
    redis.call('HSET', acct_key, 'bal', 0, 'st', st, 'ct', now_ms(), 'n', n)
    redis.call('SADD', KEYS[4], shard_id)
  end
  local bal = tonumber(acct[1] or '0')
  local jid = journal(jkey, acct_key, txn_id, 'shard_open', shard_id, 0, bal, origin)
  return decide(txn_key, fp, ttl_s, 'APPLIED', bal, jid)
end

if not acct[1] then return decide(txn_key, fp, ttl_s, 'ACCOUNT_NOT_FOUND', 0) end
local bal = tonumber(acct[1])
if op == 'close' then
  redis.call('HSET', acct_key, 'cl', '1')
  local jid = journal(jkey, acct_key, txn_id, 'shard_close', shard_id, 0, bal, origin)
  return decide(txn_key, fp, ttl_s, 'APPLIED', bal, jid)
end
local want = 'active'
if op == 'freeze' then want = 'frozen' end
if acct[2] == want then return decide(txn_key, fp, ttl_s, 'APPLIED', bal) end
redis.call('HSET', acct_key, 'st', want)
local jid = journal(jkey, acct_key, txn_id, op, shard_id, 0, bal, origin)
return decide(txn_key, fp, ttl_s, 'APPLIED', bal, jid)
