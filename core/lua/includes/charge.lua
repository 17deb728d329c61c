--[[
A charge of the call's account (deduct.lua, and sale.lua: the card leg of a split-tender
sale), one implementation: replay, the account (missing / closed / frozen), the card it
was presented with (ARGV[7], KEYS[7]), an open offline debt (DEBT_OPEN), the balance covering the amount plus the active
holds (KEYS[4], KEYS[5]), the buckets' split in the shop's order (KEYS[6]; the record
keeps the bonus taken, 'tb', for refunds), the journal entry and the decision.
The caller has checked the request and built the fingerprint.
]]
--@include decisions
--@include journal
--@include accounts
--@include holds
--@include buckets
--@include cards

-- Charge ARGV[3] (canonical digits, checked) to the call's account as journal kind `kind`
-- with the journal fields `extra` (a flat list, or nil); answers the reply and whether this
-- call applied it now (false for a replay or a decline).
local function charge_account(kind, fp, extra)
  local acct_key, txn_key, jkey = KEYS[1], KEYS[2], KEYS[3]
  local account_id, amount_arg, ttl_s = ARGV[2], ARGV[3], ARGV[4]
  local prior = replay(txn_key, fp)
  if prior then return prior, false end

  local acct, refused = account_of(acct_key, 'bo', 'dt')
  if refused then return decline(jkey, txn_key, fp, ttl_s, refused, 0), false end
  local balance = tonumber(acct[1])
  local card_refused = presented_card_refusal(KEYS[7], ARGV[7], account_id)
  if card_refused then return decline(jkey, txn_key, fp, ttl_s, card_refused, balance), false end
  if acct[2] == 'frozen' then return decline(jkey, txn_key, fp, ttl_s, 'ACCOUNT_FROZEN', balance), false end
  -- an open offline debt (issue 27) stops all spending until a top-up pays it
  local in_debt = debt_refusal(acct[4])
  if in_debt then return decline(jkey, txn_key, fp, ttl_s, in_debt, balance), false end
  local amount = tonumber(amount_arg)
  if balance - active_holds(KEYS[4], KEYS[5]) < amount then
    return decline(jkey, txn_key, fp, ttl_s, 'INSUFFICIENT_FUNDS', balance), false
  end

  local bonus = acct[3] and tonumber(acct[3]) or 0
  local take_p, take_b = split_take(amount, balance, bonus, KEYS[6])
  local after = int_str(balance - amount)
  -- amount_arg is canonical digits (checked): '-' .. it is the exact signed amount
  local jid = append_entry(jkey, kind, '-' .. amount_arg, after, '', bucket_fields(-take_p, -take_b, extra))
  if not jid then return NOT_INITIALIZED, false end
  set_balance(acct_key, after, jid, take_b > 0 and bonus - take_b or nil)
  return decide(txn_key, fp, ttl_s, 'APPLIED', after, jid, take_b), true
end
