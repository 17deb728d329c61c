--[[
freeze.lua and unfreeze.lua: one implementation. Both take the request of every balance
script with amount '0' and are journaled with amount 0.
]]
--@include checks
--@include decisions
--@include journal
--@include accounts

-- Set the status of the call's account (ARGV[2]) to `status` and journal it as `kind`;
-- `already` is the decline when the account has that status already.
local function set_account_status(kind, status, already)
  local bad = check_request(true)
  if bad then return bad end
  if ARGV[3] ~= '0' then return invalid('amount_minor', 'must be 0 for ' .. kind) end
  local acct_key, txn_key, jkey = KEYS[1], KEYS[2], KEYS[3]
  local txn_id, account_id, ttl_s = ARGV[1], ARGV[2], ARGV[4]
  local fp = kind .. '|' .. account_id .. '|0'

  local prior = replay(txn_key, fp)
  if prior then return prior end
  if not initialized(jkey) then return NOT_INITIALIZED end

  local acct, refused = account_of(acct_key)
  if refused then return decide(txn_key, fp, ttl_s, refused, 0) end
  local balance = tonumber(acct[1])
  if acct[2] == status then return decide(txn_key, fp, ttl_s, already, balance) end

  redis.call('HSET', acct_key, 'st', status)
  local jid = journal(jkey, acct_key, txn_id, kind, account_id, 0, balance, '')
  return decide(txn_key, fp, ttl_s, 'APPLIED', balance, jid)
end
