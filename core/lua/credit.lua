--[[
credit: add amount_minor to an account (a top-up at the till or in the back office).
A compensating credit is allowed on a frozen account: it repairs the ledger. Its txn id
is an internal one ('@cmp:...', made by the reconcile service); a credit's is a client's.
KEYS[1] account hash
KEYS[2] txn record
KEYS[3] partition journal
KEYS[4] the partition's settings (optional): a balance_cap there declines a top-up that
  would pass it with BALANCE_CAP_EXCEEDED
ARGV[1] txn_id
ARGV[2] account_id
ARGV[3] amount_minor
ARGV[4] retention_s
ARGV[5] terminal_id
ARGV[6] cashier_id
ARGV[7] kind ('credit' or 'compensate')
ARGV[8] original_txn_id (for 'compensate': the duplicate it reverses)
ARGV[9] method (top-ups: cash, wechat, alipay, bank_card, other; journaled 'm')
ARGV[10] bonus_minor (0 or more: added to the bonus bucket, journaled pd / bd; see buckets.lua)
Returns {status, balance_minor, replayed, journal_id}
Statuses: APPLIED, ACCOUNT_NOT_FOUND, ACCOUNT_FROZEN, ACCOUNT_CLOSED, BALANCE_LIMIT_EXCEEDED, BALANCE_CAP_EXCEEDED
Errors: INVALID, TXN_CONFLICT, NOT_INITIALIZED
]]
--@include checks
--@include decisions
--@include journal
--@include accounts
--@include buckets

local kind = ARGV[7] or 'credit'
if kind ~= 'credit' and kind ~= 'compensate' then return invalid('kind', 'must be credit or compensate') end
local bad = check_request(false, nil, kind == 'compensate')
if bad then return bad end
local original = ARGV[8] or ''
bad = check_id(original, 'original_txn_id', kind == 'credit')
if bad then return bad end
local method, bonus_arg = ARGV[9] or '', ARGV[10] or '0'
if kind == 'credit' and method == '' then method = 'cash' end
if kind == 'credit' and method ~= 'cash' and method ~= 'wechat' and method ~= 'alipay' and method ~= 'bank_card'
   and method ~= 'other' then return invalid('method', 'must be cash, wechat, alipay, bank_card or other') end
bad = check_amount(bonus_arg, 'bonus_minor', true) or check_settings_key(KEYS[4], string.sub(KEYS[3], 1, -2))
if bad then return bad end
if kind ~= 'credit' and (method ~= '' or bonus_arg ~= '0') then return invalid('method', 'only a top-up has a method or bonus') end
local acct_key, txn_key, jkey = KEYS[1], KEYS[2], KEYS[3]
local txn_id, account_id, amount, bonus = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(bonus_arg)
local ttl_s = ARGV[4]
-- a plain cash top-up keeps the fingerprint it always had (records written before buckets)
local fp
if kind == 'credit' and (method ~= 'cash' or bonus > 0) then
  fp = kind .. '|' .. account_id .. '|' .. ARGV[3] .. '|' .. original .. '|' .. method .. '|' .. bonus_arg
else
  fp = kind .. '|' .. account_id .. '|' .. ARGV[3] .. '|' .. original
end

local prior = replay(txn_key, fp)
if prior then return prior end

local acct, refused = account_of(acct_key, 'bo')
if refused then return decline(jkey, txn_key, fp, ttl_s, refused, 0) end
local balance = tonumber(acct[1])
if acct[2] == 'frozen' and kind == 'credit' then return decline(jkey, txn_key, fp, ttl_s, 'ACCOUNT_FROZEN', balance) end
if balance + amount + bonus > MAX_BALANCE_MINOR then
  return decline(jkey, txn_key, fp, ttl_s, 'BALANCE_LIMIT_EXCEEDED', balance)
end
if KEYS[4] and kind == 'credit' then
  local cap = redis.call('HGET', KEYS[4], 'balance_cap')
  if cap and balance + amount + bonus > tonumber(cap) then
    return decline(jkey, txn_key, fp, ttl_s, 'BALANCE_CAP_EXCEEDED', balance)
  end
end

local after = int_str(balance + amount + bonus)
-- journal extras as bucket_fields(amount, bonus, {'m', method}) makes them, from the checked
-- digits (ARGV[3] and bonus_arg are canonical): pd = the principal, bd = the bonus
local extra = nil
if bonus > 0 then extra = {'pd', ARGV[3], 'bd', bonus_arg, 'm', method}
elseif kind == 'credit' then extra = {'m', method} end
local jid = append_entry(jkey, kind, bonus > 0 and int_str(amount + bonus) or ARGV[3], after, original, extra)
if not jid then return NOT_INITIALIZED end
set_balance(acct_key, after, jid, bonus > 0 and tonumber(acct[3] or '0') + bonus or nil)
return decide(txn_key, fp, ttl_s, 'APPLIED', after, jid)
