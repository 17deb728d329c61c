--[[
credit: add amount_minor to an account (a top-up at the till or in the back office).
A compensating credit is allowed on a frozen account: it repairs the ledger. Its txn id
is an internal one ('@cmp:...', made by the reconcile service); a credit's is a client's.
A top-up of an account that owes an offline debt (field dt, offline_deduct.lua) pays the
debt first, from the principal it brings (a debt is owed principal; a bonus never pays
it): debt_paid = min(amount, dt) leaves dt, the rest (and the whole bonus) goes into the
balance. Journaled amt = what the balance got (0 when the top-up only paid debt), field
dp = debt_paid; the txn record keeps it ('dp') for replays.
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
Returns {status, balance_minor, replayed, journal_id, debt_paid_minor}
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

-- the reply with its debt_paid_minor: `paid` when decided now, else the record's
local function answer(reply, paid)
  reply = decision_table(reply)     -- a decision is one string (issue 30); this one has a fifth element
  if reply[1] == 'NOT_INITIALIZED' or reply[1] == 'TXN_CONFLICT' then return reply end   -- not decisions
  reply[5] = paid or tonumber(redis.call('HGET', txn_key, 'dp') or '0')
  return reply
end

local prior = replay(txn_key, fp)
if prior then return answer(prior) end

local acct, refused = account_of(acct_key, 'bo', 'dt')
if refused then return answer(decline(jkey, txn_key, fp, ttl_s, refused, 0), 0) end
local balance = tonumber(acct[1])
local debt = tonumber(acct[4] or '0')
local paid = 0
if kind == 'credit' and debt > 0 then paid = math.min(amount, debt) end
-- what goes into the principal: the amount less what paid the debt
local into = amount - paid
if acct[2] == 'frozen' and kind == 'credit' then return answer(decline(jkey, txn_key, fp, ttl_s, 'ACCOUNT_FROZEN', balance), 0) end
if balance + into + bonus > MAX_BALANCE_MINOR then
  return answer(decline(jkey, txn_key, fp, ttl_s, 'BALANCE_LIMIT_EXCEEDED', balance), 0)
end
if KEYS[4] and kind == 'credit' then
  local cap = redis.call('HGET', KEYS[4], 'balance_cap')
  if cap and balance + into + bonus > tonumber(cap) then
    return answer(decline(jkey, txn_key, fp, ttl_s, 'BALANCE_CAP_EXCEEDED', balance), 0)
  end
end

local after = int_str(balance + into + bonus)
-- journal extras as bucket_fields(into, bonus, {'m', method}) makes them, already encoded
-- (append_entry): the checked digits (ARGV[3] and bonus_arg are canonical) and a method
-- of the fixed list, nothing to escape. pd = the principal, bd = the bonus, dp = the debt paid
local extra = nil
if bonus > 0 then extra = '|pd|' .. int_str(into) .. '|bd|' .. bonus_arg .. '|m|' .. method
elseif kind == 'credit' then extra = '|m|' .. method end
local paid_s = paid > 0 and int_str(paid)
if paid_s then extra = extra .. '|dp|' .. paid_s end      -- (paid > 0 only for kind credit)
local amt = ARGV[3]
if bonus > 0 or paid > 0 then amt = int_str(into + bonus) end
local jid = append_entry(jkey, kind, amt, after, original, extra)
if not jid then return NOT_INITIALIZED end
local bonus_after = bonus > 0 and tonumber(acct[3] or '0') + bonus or nil
if paid > 0 and debt > paid then
  -- the debt left in the same HSET as the balance (set_balance's fields, then dt)
  if bonus_after then
    redis.call('HSET', acct_key, 'bal', after, 'bo', int_str(bonus_after), 'lj', jid, 'dt', int_str(debt - paid))
  else
    redis.call('HSET', acct_key, 'bal', after, 'lj', jid, 'dt', int_str(debt - paid))
  end
else
  set_balance(acct_key, after, jid, bonus_after)
  if paid > 0 then redis.call('HDEL', acct_key, 'dt') end
end
if paid_s then
  -- the decision decide() stores, with the debt paid in the same HSET
  redis.call('HSET', txn_key, 'f', fp, 's', stored_status('APPLIED'), 'b', after, 'j', jid, 'dp', paid_s)
  redis.call('EXPIRE', txn_key, ttl_s)
else
  decide(txn_key, fp, ttl_s, 'APPLIED', after, jid)
end
-- the reply answer() makes of decide's, built directly: {status, balance, replayed, journal id, debt paid}
return {'APPLIED', after, 0, jid, paid}
