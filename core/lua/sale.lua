--[[
sale: one split-tender sale (issue 31): the card leg (ARGV[3], charged exactly like
deduct.lua, through the shared charge include) and the sale's other tenders (cash,
WeChat, Alipay, bank card, other), recorded together in ONE journal entry (kind 'sale',
amount = minus the card leg, fields tn = the tenders, tot = the sale's total, chg = the
change given for cash) and one txn record (its 'tn' keeps the tenders for their refunds:
tender_refund.lua). All or nothing by construction: a declined card leg records no
tender; there is no state in which the card is charged and the rest is not recorded.
The fingerprint covers the card leg, the tenders, the total and the change: a retry with
the same txn id replays, a different tender list is TXN_CONFLICT.
Tenders are '<method>:<minor>' joined by ';', each method at most once and in the order
cash, wechat, alipay, bank_card, other (core/sales.py encode_tenders); at least one;
card leg + tenders = total; change only with a cash tender.
KEYS[1] account hash
KEYS[2] txn record
KEYS[3] partition journal
KEYS[4] holds of the account
KEYS[5] hold expiries of the account
KEYS[6] the partition's settings: the spending order of the buckets (buckets.lua)
KEYS[7] the account's cards (<prefix>ac:<account_id>), read with ARGV[7]
ARGV[1] txn_id (the sale id)
ARGV[2] account_id
ARGV[3] card_minor (the card leg)
ARGV[4] retention_s
ARGV[5] terminal_id
ARGV[6] cashier_id
ARGV[7] card_no the sale was presented with ('' : none)
ARGV[8] tenders ('cash:1350;wechat:2000')
ARGV[9] total_minor (the sale: card leg + tenders)
ARGV[10] change_minor (cash handed back, 0 without a cash tender)
Returns {status, balance_minor, replayed, journal_id}
Statuses: APPLIED, INSUFFICIENT_FUNDS, ACCOUNT_NOT_FOUND, ACCOUNT_CLOSED, ACCOUNT_FROZEN, CARD_BLOCKED, CARD_NOT_THIS_ACCOUNT, DEBT_OPEN
Errors: INVALID, TXN_CONFLICT, NOT_INITIALIZED
]]
--@include checks
--@include holds
--@include buckets
--@include cards
--@include charge
--@include tenders

local prefix = string.sub(KEYS[3] or '', 1, -2)
local bad = check_request(false) or check_hold_keys(prefix, ARGV[2]) or check_settings_key(KEYS[6], prefix)
  or check_presented_card(KEYS[7], ARGV[7], prefix, ARGV[2])
if bad then return bad end
local tenders, total_arg, change_arg = ARGV[8], ARGV[9], ARGV[10]
local parsed
parsed, bad = parse_tenders(tenders)
if bad then return bad end
bad = check_amount(total_arg, 'total_minor') or check_amount(change_arg, 'change_minor', true)
if bad then return bad end
local sum = tonumber(ARGV[3])
for _, t in ipairs(parsed) do sum = sum + t[2] end
if sum ~= tonumber(total_arg) then return invalid('total_minor', 'must equal the card leg plus the tenders') end
if change_arg ~= '0' and not tender_amount(parsed, 'cash') then
  return invalid('change_minor', 'change is given only with a cash tender')
end

local fp = 'sale|' .. ARGV[2] .. '|' .. ARGV[3] .. '|' .. tenders .. '|' .. total_arg .. '|' .. change_arg
  .. card_fingerprint(ARGV[7])
local extra = {'tn', tenders, 'tot', total_arg}
if change_arg ~= '0' then extra[5], extra[6] = 'chg', change_arg end
local reply, applied = charge_account('sale', fp, extra)
-- the record keeps the tenders for their refunds (tender_refund.lua), same TTL
if applied then redis.call('HSET', KEYS[2], 'tn', tenders) end
return reply
