--[[
split: mark an account as split into N shards (its root hash gets sh = N). The ledger
opens the shards (shard_admin.lua) before, and moves the root's balance into them with
transfers (xfer_out.lua / xfer_in.lua) after; from now on the root answers SPLIT to
deductions, holds and credits, which the ledger runs on the shards.
KEYS[1] account hash (root)   KEYS[2] txn record   KEYS[3] partition journal
KEYS[4] holds of the account   KEYS[5] hold expiries of the account
ARGV[1] txn_id  ARGV[2] account_id  ARGV[3] '0'  ARGV[4] retention_s  ARGV[5] terminal_id
ARGV[6] cashier_id  ARGV[7] shard count N (2..16)
Returns {status, balance_minor, replayed, journal_id}; statuses: APPLIED,
ACCOUNT_NOT_FOUND, ALREADY_SPLIT, ACCOUNT_HAS_HOLDS (active holds on the root: resolve
them first). Journaled as kind 'split' with amount 0 and shards = N.
]]
--@include common

local bad = check_request(true) or check_hold_keys(string.sub(KEYS[3], 1, -2), ARGV[2])
if bad then return bad end
if root_of(ARGV[2]) then return invalid('account_id', 'a shard cannot be split') end
local n = ARGV[7]
if type(n) ~= 'string' or not string.match(n, '^[0-9]+$') or tonumber(n) < 2 or tonumber(n) > 16 then
  return invalid('shards', 'must be 2..16')
end
local acct_key, txn_key, jkey = KEYS[1], KEYS[2], KEYS[3]
local txn_id, account_id, ttl_s = ARGV[1], ARGV[2], ARGV[4]
local fp = 'split|' .. account_id .. '|' .. n

local prior = replay(txn_key, fp)
if prior then return prior end
if not initialized(jkey) then return NOT_INITIALIZED end
local acct = redis.call('HMGET', acct_key, 'bal', 'sh', 'msh')
if not acct[1] then return decide(txn_key, fp, ttl_s, 'ACCOUNT_NOT_FOUND', 0) end
local balance = tonumber(acct[1])
if acct[2] then return decide(txn_key, fp, ttl_s, 'ALREADY_SPLIT', balance) end
local held, count = active_holds(KEYS[4], KEYS[5], now_ms())
if count > 0 then return decide(txn_key, fp, ttl_s, 'ACCOUNT_HAS_HOLDS', balance) end

local most = tonumber(n)
if acct[3] and tonumber(acct[3]) > most then most = tonumber(acct[3]) end
redis.call('HSET', acct_key, 'sh', n, 'msh', most)
local jid = journal(jkey, acct_key, txn_id, 'split', account_id, 0, balance, '', nil, nil,
                    {'root', account_id, 'shards', n})
return decide(txn_key, fp, ttl_s, 'APPLIED', balance, jid)
