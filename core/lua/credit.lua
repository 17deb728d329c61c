--[[
credit: add amount_minor to an account (a top-up at the till or in the back office).
KEYS[1] account hash   KEYS[2] txn record   KEYS[3] partition journal
ARGV[1] txn_id  ARGV[2] account_id  ARGV[3] amount_minor  ARGV[4] retention_s
ARGV[5] terminal_id  ARGV[6] cashier_id  ARGV[7] kind ('credit' or 'compensate')
  ARGV[8] original_txn_id (for 'compensate': the duplicate it reverses)
Returns {status, balance_minor, replayed, journal_id}; statuses: APPLIED,
ACCOUNT_NOT_FOUND, ACCOUNT_FROZEN, BALANCE_LIMIT_EXCEEDED.
A compensating credit is allowed on a frozen account: it repairs the ledger. Its txn id
is an internal one ('@cmp:...', made by the reconcile service); a credit's is a client's.
]]
--@include common

local kind = ARGV[7] or 'credit'
if kind ~= 'credit' and kind ~= 'compensate' then return invalid('kind', 'must be credit or compensate') end
local bad = check_request(false, nil, kind == 'compensate')
if bad then return bad end
local original = ARGV[8] or ''
bad = check_id(original, 'original_txn_id', kind == 'credit')
if bad then return bad end
local acct_key, txn_key, jkey = KEYS[1], KEYS[2], KEYS[3]
local txn_id, account_id, amount = ARGV[1], ARGV[2], tonumber(ARGV[3])
local ttl_s = ARGV[4]
local fp = kind .. '|' .. account_id .. '|' .. ARGV[3] .. '|' .. original

local prior = replay(txn_key, fp)
if prior then return prior end
if not initialized(jkey) then return NOT_INITIALIZED end

local acct = redis.call('HMGET', acct_key, 'bal', 'st')
if not acct[1] then return decide(txn_key, fp, ttl_s, 'ACCOUNT_NOT_FOUND', 0) end
if acct[2] == 'closed' then return decide(txn_key, fp, ttl_s, 'ACCOUNT_CLOSED', 0) end   -- 退卡: see close_account.lua
local balance = tonumber(acct[1])
if acct[2] == 'frozen' and kind == 'credit' then return decide(txn_key, fp, ttl_s, 'ACCOUNT_FROZEN', balance) end
if balance + amount > MAX_BALANCE_MINOR then return decide(txn_key, fp, ttl_s, 'BALANCE_LIMIT_EXCEEDED', balance) end

local after = redis.call('HINCRBY', acct_key, 'bal', int_str(amount))
local jid = journal(jkey, acct_key, txn_id, kind, account_id, amount, after, original)
return decide(txn_key, fp, ttl_s, 'APPLIED', after, jid)
