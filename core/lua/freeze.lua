--[[
freeze: set the account's status to 'frozen' (journaled with amount 0).
KEYS[1] account hash   KEYS[2] txn record   KEYS[3] partition journal
ARGV[1] txn_id  ARGV[2] account_id  ARGV[3] '0'  ARGV[4] retention_s
ARGV[5] terminal_id  ARGV[6] cashier_id
Returns {status, balance_minor, replayed, journal_id}; statuses: APPLIED,
ACCOUNT_NOT_FOUND, ACCOUNT_FROZEN (the account is already frozen).
]]
--@include common

local bad = check_request(true)
if bad then return bad end
if ARGV[3] ~= '0' then return invalid('amount_minor', 'must be 0 for freeze') end
local acct_key, txn_key, jkey = KEYS[1], KEYS[2], KEYS[3]
local txn_id, account_id, ttl_s = ARGV[1], ARGV[2], ARGV[4]
local fp = 'freeze|' .. account_id .. '|0'

local prior = replay(txn_key, fp)
if prior then return prior end
if not initialized(jkey) then return NOT_INITIALIZED end

local acct = redis.call('HMGET', acct_key, 'bal', 'st')
if not acct[1] then return decide(txn_key, fp, ttl_s, 'ACCOUNT_NOT_FOUND', 0) end
if acct[2] == 'closed' then return decide(txn_key, fp, ttl_s, 'ACCOUNT_CLOSED', 0) end   -- 退卡: see close_account.lua
local balance = tonumber(acct[1])
if acct[2] == 'frozen' then return decide(txn_key, fp, ttl_s, 'ACCOUNT_FROZEN', balance) end

redis.call('HSET', acct_key, 'st', 'frozen')
local jid = journal(jkey, acct_key, txn_id, 'freeze', account_id, 0, balance, '')
return decide(txn_key, fp, ttl_s, 'APPLIED', balance, jid)
