--[[
merge: the last step of folding a split account back into one. The ledger has closed
every shard (shard_admin.lua) and moved their money to the root with transfers, all
received; this removes sh from the root, so the root decides everything again.
Txn records of the old shards may live for the retention: until mx (now + retention)
the root answers CHECK_SHARDS so that a retry of a txn decided on a shard replays.
KEYS[1] account hash (root)   KEYS[2] txn record   KEYS[3] partition journal
ARGV[1] txn_id  ARGV[2] account_id  ARGV[3] '0'  ARGV[4] retention_s  ARGV[5] terminal_id
ARGV[6] cashier_id  ARGV[7] total_minor (the account's total the ledger read, for the
answer and the journal entry's 'bal'; the root's own balance must equal it)
Returns {status, balance_minor, replayed, journal_id}; statuses: APPLIED,
ACCOUNT_NOT_FOUND, NOT_SPLIT, MERGE_INCOMPLETE (not stored: money is still on a shard
or in flight). Journaled as kind 'merge' with amount 0.
]]
--@include common

local bad = check_request(true)
if bad then return bad end
if root_of(ARGV[2]) then return invalid('account_id', 'a shard cannot be merged') end
bad = check_amount(ARGV[7], 'total_minor', true, MAX_BALANCE_MINOR)
if bad then return bad end
local acct_key, txn_key, jkey = KEYS[1], KEYS[2], KEYS[3]
local txn_id, account_id, ttl_s = ARGV[1], ARGV[2], ARGV[4]
local fp = 'merge|' .. account_id .. '|0'

local prior = replay(txn_key, fp)
if prior then return prior end
if not initialized(jkey) then return NOT_INITIALIZED end
local acct = redis.call('HMGET', acct_key, 'bal', 'sh')
if not acct[1] then return decide(txn_key, fp, ttl_s, 'ACCOUNT_NOT_FOUND', 0) end
local balance = tonumber(acct[1])
if not acct[2] then return decide(txn_key, fp, ttl_s, 'NOT_SPLIT', balance) end
if balance ~= tonumber(ARGV[7]) then return {'MERGE_INCOMPLETE', balance, 0, ''} end

local mx = tonumber(now_ms()) + tonumber(ttl_s) * 1000
redis.call('HDEL', acct_key, 'sh')
redis.call('HSET', acct_key, 'mx', string.format('%d', mx))
local jid = journal(jkey, acct_key, txn_id, 'merge', account_id, 0, balance, '', nil, nil,
                    {'root', account_id, 'shards', acct[2]})
return decide(txn_key, fp, ttl_s, 'APPLIED', balance, jid)
