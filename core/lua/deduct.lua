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
--@include holds
--@include buckets
--@include cards
--@include charge

local prefix = string.sub(KEYS[3] or '', 1, -2)
local bad = check_request(false) or check_hold_keys(prefix, ARGV[2]) or check_settings_key(KEYS[6], prefix)
  or check_presented_card(KEYS[7], ARGV[7], prefix, ARGV[2])
if bad then return bad end
local reply = charge_account('deduct', 'deduct|' .. ARGV[2] .. '|' .. ARGV[3] .. card_fingerprint(ARGV[7]))
return reply
