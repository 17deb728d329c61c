--[[
deduct: take amount_minor from an account when its balance covers it. The balance must
cover the amount *plus* the account's active holds. Refused (DEBT_OPEN) while the account
owes an offline debt (accounts.lua debt_refusal).
A charge presented by card names the card (ARGV[7]): the card must be one of the account's
cards and not blocked, checked here with the balance, so a block applied before the charge
runs declines it (CARD_BLOCKED), whenever the till looked the card up.
deduct_batch (Ledger.deduct_many): many deductions in one call, each 7 KEYS and 7 ARGV as
below (KEYS[6] and KEYS[7] given, ARGV[7] '' or a card), all of one partition; returns one
reply as below per item.
KEYS[1] account hash
KEYS[2] txn record
KEYS[3] partition journal
KEYS[4] holds of the account
KEYS[5] hold expiries of the account
KEYS[6] the partition's settings (optional): the spending order of the buckets (buckets.lua);
  the txn record keeps the bonus taken ('tb') for refunds
KEYS[7] the account's cards (<prefix>ac:<account_id>: card_no -> active|blocked), read with ARGV[7]
ARGV[1] txn_id
ARGV[2] account_id
ARGV[3] amount_minor
ARGV[4] retention_s
ARGV[5] terminal_id
ARGV[6] cashier_id
ARGV[7] card_no the charge was presented with ('' or absent: none, e.g. typed account id)
Returns {status, balance_minor, replayed, journal_id}
Statuses: APPLIED, INSUFFICIENT_FUNDS, ACCOUNT_NOT_FOUND, ACCOUNT_CLOSED, ACCOUNT_FROZEN, CARD_BLOCKED, CARD_NOT_THIS_ACCOUNT, DEBT_OPEN
Errors: INVALID, TXN_CONFLICT, NOT_INITIALIZED
]]
--@batch 7 7
--@include checks
--@include decisions
--@include journal
--@include accounts
--@include holds
--@include buckets
--@include cards

local acct_key, txn_key, jkey = KEYS[1], KEYS[2], KEYS[3]
local prefix = string.sub(jkey or '', 1, -2)
local bad = check_request(false) or check_hold_keys(prefix, ARGV[2]) or check_settings_key(KEYS[6], prefix)
  or check_presented_card(KEYS[7], ARGV[7], prefix, ARGV[2])
if bad then return bad end
local account_id, amount_arg, ttl_s = ARGV[2], ARGV[3], ARGV[4]
local fp = 'deduct|' .. account_id .. '|' .. amount_arg .. card_fingerprint(ARGV[7])

local prior = replay(txn_key, fp)
if prior then return prior end

local acct, refused = account_of(acct_key, 'bo', 'dt')
if refused then return decline(jkey, txn_key, fp, ttl_s, refused, 0) end
local balance = tonumber(acct[1])
local card_refused = presented_card_refusal(KEYS[7], ARGV[7], account_id)
if card_refused then return decline(jkey, txn_key, fp, ttl_s, card_refused, balance) end
if acct[2] == 'frozen' then return decline(jkey, txn_key, fp, ttl_s, 'ACCOUNT_FROZEN', balance) end
local in_debt = debt_refusal(acct[4])
if in_debt then return decline(jkey, txn_key, fp, ttl_s, in_debt, balance) end
local amount = tonumber(amount_arg)
if balance - active_holds(KEYS[4], KEYS[5]) < amount then
  return decline(jkey, txn_key, fp, ttl_s, 'INSUFFICIENT_FUNDS', balance)
end

local bonus = acct[3] and tonumber(acct[3]) or 0
local take_p, take_b = split_take(amount, balance, bonus, KEYS[6])
local after = int_str(balance - amount)
-- amount_arg is canonical digits (checked): '-' .. it is the exact signed amount
local jid = append_entry(jkey, 'deduct', '-' .. amount_arg, after, '', bucket_fields(-take_p, -take_b))
if not jid then return NOT_INITIALIZED end
set_balance(acct_key, after, jid, take_b > 0 and bonus - take_b or nil)
return decide(txn_key, fp, ttl_s, 'APPLIED', after, jid, take_b)
