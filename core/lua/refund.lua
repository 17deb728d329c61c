--[[
refund: give back part or all of an earlier deduction on the same account (a deduct, a
capture, the card leg of a split-tender sale: sale.lua, or an offline sale the balance
covered: offline_deduct.lua; one that left an offline debt is ORIGINAL_NOT_FOUND).
Several partial refunds add up; together they never exceed the original.
A refund is allowed on a frozen account: it returns the customer's own money.
Each bucket gets back its share of what the original took (its record's 'tb', see
buckets.lua split_refund): never more than was taken from a bucket.
The limit is not one counter: the original's record keeps one field per refund,
'r:<refund txn id>' = its amount, written only here, and the refunded total 'r' beside
them. The total refunded so far is the sum of those fields (a record written before
they existed has only 'r'); a record whose 'r' disagrees
with it, or whose amounts are not whole numbers, has been written outside the scripts,
and every refund against it is refused (REFUND_EXCEEDS_ORIGINAL: nothing can be proven
left to refund); the book's check (reconcile_service/refund_limits.py) finds it.
The original's record lives as long as the retention: older deductions are
refunded by a back-office credit.
KEYS[1] account hash
KEYS[2] txn record
KEYS[3] partition journal
KEYS[4] txn record of the original deduction
ARGV[1] txn_id
ARGV[2] account_id
ARGV[3] amount_minor
ARGV[4] retention_s
ARGV[5] terminal_id
ARGV[6] cashier_id
ARGV[7] original_txn_id
Returns {status, balance_minor, replayed, journal_id}
Statuses: APPLIED, ACCOUNT_NOT_FOUND, ACCOUNT_CLOSED, ORIGINAL_NOT_FOUND, REFUND_EXCEEDS_ORIGINAL, BALANCE_LIMIT_EXCEEDED
Errors: INVALID, TXN_CONFLICT, NOT_INITIALIZED
]]
--@include checks
--@include decisions
--@include journal
--@include accounts
--@include buckets

local bad = check_request(false)
if bad then return bad end
local acct_key, txn_key, jkey, orig_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local txn_id, account_id, amount = ARGV[1], ARGV[2], tonumber(ARGV[3])
local ttl_s, original = ARGV[4], ARGV[7]
bad = check_id(original, 'original_txn_id')
if bad then return bad end
if original == txn_id then return invalid('original_txn_id', 'must differ from txn_id') end
if orig_key ~= txn_key_of(string.sub(jkey, 1, -2), original) then return invalid('KEYS[4]', 'not the key of original_txn_id') end
local fp = 'refund|' .. account_id .. '|' .. ARGV[3] .. '|' .. original

local prior = replay(txn_key, fp)
if prior then return prior end

local acct, refused = account_of(acct_key, 'bo')
if refused then return decline(jkey, txn_key, fp, ttl_s, refused, 0) end
local balance = tonumber(acct[1])

-- The original must be an applied deduction (or capture) of this very account.
local orig = redis.call('HGETALL', orig_key)
local ofp, ost, ototal, otb, refunded, entries, sound, odebt = nil, nil, '0', '0', 0, 0, true, nil
for i = 1, #orig, 2 do
  local k, v = orig[i], orig[i + 1]
  if k == 'f' then ofp = v
  elseif k == 's' then ost = v
  elseif k == 'r' then ototal = v
  elseif k == 'tb' then otb = v
  elseif k == 'od' then odebt = v
  elseif string.sub(k, 1, 2) == 'r:' then
    if k == 'r:' .. txn_id or not string.match(v, '^[1-9]%d*$') or #v > 16 then sound = false
    else refunded, entries = refunded + tonumber(v), entries + 1 end
  end
end
local okind, oacct, oamount = nil, nil, nil
if ofp then okind, oacct, oamount = string.match(ofp, '^([a-z]+)|([^|]+)|([0-9]+)') end
-- an offline sale (offline_deduct.lua) only when the balance covered it: one that left an
-- offline debt ('od') took less than its amount, and giving back means settling the debt
local refundable = okind == 'deduct' or okind == 'capture' or okind == 'sale' or (okind == 'offline' and not odebt)
if status_of(ost) ~= 'APPLIED' or oacct ~= account_id or not refundable then
  return decline(jkey, txn_key, fp, ttl_s, 'ORIGINAL_NOT_FOUND', balance)
end
oamount = tonumber(oamount)
-- the stored total must be the sum of the refunds recorded (a record without refund
-- fields, written before they existed, has only its total), and the bonus taken no more
-- than the original: else the record was changed outside the scripts
-- (the first refund of an original that took no bonus, the common case, has ototal and
-- otb '0': sound as they stand, with no formatting or parsing of them)
if entries == 0 and ototal ~= '0' and string.match(ototal, '^%d+$') and #ototal <= 16 then refunded = tonumber(ototal) end
local taken_b = otb == '0' and 0 or (string.match(otb, '^%d+$') and tonumber(otb))
if not sound or (ototal ~= '0' or entries > 0) and ototal ~= int_str(refunded) or not taken_b
   or taken_b > oamount or refunded + amount > oamount then
  return decline(jkey, txn_key, fp, ttl_s, 'REFUND_EXCEEDS_ORIGINAL', balance)
end
if balance + amount > MAX_BALANCE_MINOR then return decline(jkey, txn_key, fp, ttl_s, 'BALANCE_LIMIT_EXCEEDED', balance) end

local give_p, give_b = split_refund(amount, refunded, oamount, taken_b)
local after = int_str(balance + amount)
local jid = append_entry(jkey, 'refund', ARGV[3], after, original, bucket_fields(give_p, give_b))
if not jid then return NOT_INITIALIZED end
-- one HSET: this refund's own field and the new total (keeps the original's TTL); the
-- total of a first refund is its own amount, ARGV[3] (canonical digits, checked)
redis.call('HSET', orig_key, 'r:' .. txn_id, ARGV[3], 'r', refunded == 0 and ARGV[3] or int_str(refunded + amount))
set_balance(acct_key, after, jid, give_b > 0 and tonumber(acct[3] or '0') + give_b or nil)
return decide(txn_key, fp, ttl_s, 'APPLIED', after, jid)
