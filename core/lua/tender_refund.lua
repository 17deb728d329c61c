--[[
tender_refund: give back (part of) a split-tender sale's tender that is not the card (cash
as cash, WeChat to WeChat, ...): journaled with the sale (kind 'tender_refund', amount 0:
the card's balance does not move; fields m = the method, ta = the amount given back, orig
= the sale), so the book and the shift report see it. The card leg is refunded by
refund.lua naming the sale. Several partial refunds of one tender add up to at most that
tender: the sale's record keeps one field per tender refund, 'q:<refund txn id>' =
'<method>:<amount>', written only here, and the sum of those fields per method is what
was given back. Allowed on a frozen account (it is the customer's own money), refused on
a closed one (ACCOUNT_CLOSED, as refund.lua).
KEYS[1] account hash
KEYS[2] txn record
KEYS[3] partition journal
KEYS[4] txn record of the sale
ARGV[1] txn_id
ARGV[2] account_id
ARGV[3] amount_minor (of the tender given back)
ARGV[4] retention_s
ARGV[5] terminal_id
ARGV[6] cashier_id
ARGV[7] original_txn_id (the sale)
ARGV[8] method (the tender: cash, wechat, alipay, bank_card, other)
Returns {status, balance_minor, replayed, journal_id}
Statuses: APPLIED, ACCOUNT_NOT_FOUND, ACCOUNT_CLOSED, ORIGINAL_NOT_FOUND, TENDER_NOT_IN_SALE, REFUND_EXCEEDS_ORIGINAL
Errors: INVALID, TXN_CONFLICT, NOT_INITIALIZED
]]
--@include checks
--@include decisions
--@include journal
--@include accounts
--@include tenders

local bad = check_request(false)
if bad then return bad end
local acct_key, txn_key, jkey, orig_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local txn_id, account_id, amount = ARGV[1], ARGV[2], tonumber(ARGV[3])
local ttl_s, original, method = ARGV[4], ARGV[7], ARGV[8]
bad = check_id(original, 'original_txn_id') or check_tender_method(method)
if bad then return bad end
if original == txn_id then return invalid('original_txn_id', 'must differ from txn_id') end
if orig_key ~= txn_key_of(string.sub(jkey, 1, -2), original) then return invalid('KEYS[4]', 'not the key of original_txn_id') end
local fp = 'tender_refund|' .. account_id .. '|' .. ARGV[3] .. '|' .. original .. '|' .. method

local prior = replay(txn_key, fp)
if prior then return prior end

local acct, refused = account_of(acct_key)
if refused then return decline(jkey, txn_key, fp, ttl_s, refused, 0) end
local balance = acct[1]

-- the original must be an applied sale of this very account
local orig = redis.call('HGETALL', orig_key)
local ofp, ost, tenders, given, sound = nil, nil, nil, 0, true
for i = 1, #orig, 2 do
  local k, v = orig[i], orig[i + 1]
  if k == 'f' then ofp = v
  elseif k == 's' then ost = v
  elseif k == 'tn' then tenders = v
  elseif string.sub(k, 1, 2) == 'q:' then
    local m, a = string.match(v, '^([a-z_]+):([1-9]%d*)$')
    if k == 'q:' .. txn_id or not m or #a > 16 then sound = false
    elseif m == method then given = given + tonumber(a) end
  end
end
local okind, oacct = nil, nil
if ofp then okind, oacct = string.match(ofp, '^([a-z_]+)|([^|]+)|') end
if status_of(ost) ~= 'APPLIED' or oacct ~= account_id or okind ~= 'sale' or not tenders then
  return decline(jkey, txn_key, fp, ttl_s, 'ORIGINAL_NOT_FOUND', balance)
end
local parsed = parse_tenders(tenders)
local paid = parsed and tender_amount(parsed, method)
if not paid then return decline(jkey, txn_key, fp, ttl_s, 'TENDER_NOT_IN_SALE', balance) end
-- a record changed outside the scripts proves nothing left to give back
if not sound or given + amount > paid then
  return decline(jkey, txn_key, fp, ttl_s, 'REFUND_EXCEEDS_ORIGINAL', balance)
end

local jid = append_entry(jkey, 'tender_refund', '0', balance, original, {'m', method, 'ta', ARGV[3]})
if not jid then return NOT_INITIALIZED end
redis.call('HSET', orig_key, 'q:' .. txn_id, method .. ':' .. ARGV[3])
set_balance(acct_key, balance, jid)
return decide(txn_key, fp, ttl_s, 'APPLIED', balance, jid)
