--[[
hold: reserve amount_minor of an account for ttl_s (pre-authorise a sale). The balance
does not change; the available balance (balance - active holds) does.
The hold's state lives in its txn record: hs (active|captured|voided|expired), ha, hx.
A hold presented by card names the card (ARGV[8]): checked with the balance as in deduct.lua
(CARD_BLOCKED, CARD_NOT_THIS_ACCOUNT). Its capture needs no card: the hold was approved.
KEYS[1] account hash
KEYS[2] txn record (of this hold)
KEYS[3] partition journal
KEYS[4] holds of the account
KEYS[5] hold expiries of the account
KEYS[6] the account's cards (<prefix>ac:<account_id>), read with ARGV[8]
ARGV[1] txn_id
ARGV[2] account_id
ARGV[3] amount_minor
ARGV[4] retention_s
ARGV[5] terminal_id
ARGV[6] cashier_id
ARGV[7] ttl_s (1 .. retention_s)
ARGV[8] card_no the hold was presented with ('' or absent: none)
Returns {status, available_minor, replayed, journal_id}
Statuses: APPLIED, INSUFFICIENT_FUNDS, ACCOUNT_NOT_FOUND, ACCOUNT_CLOSED, ACCOUNT_FROZEN, TOO_MANY_HOLDS, CARD_BLOCKED, CARD_NOT_THIS_ACCOUNT, DEBT_OPEN
Errors: INVALID, TXN_CONFLICT, NOT_INITIALIZED
]]
--@include checks
--@include decisions
--@include journal
--@include accounts
--@include holds
--@include cards

local prefix = string.sub(KEYS[3] or '', 1, -2)
local bad = check_request(false) or check_hold_keys(prefix, ARGV[2])
  or check_presented_card(KEYS[6], ARGV[8], prefix, ARGV[2])
if bad then return bad end
local ttl_hold = ARGV[7]
local ttl_hold_s = type(ttl_hold) == 'string' and #ttl_hold <= 9 and string.match(ttl_hold, '^[1-9][0-9]*$')
  and tonumber(ttl_hold)
-- (both canonical digits: fewer digits than the retention's is within it, no tonumber)
local retention = ARGV[4]
if not ttl_hold_s or #ttl_hold > #retention or #ttl_hold == #retention and ttl_hold_s > tonumber(retention) then
  return invalid('ttl_s', 'must be a whole number of seconds, at most the retention')
end
local acct_key, txn_key, jkey, holds_key, expiry_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local txn_id, account_id, amount, ttl_s = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]
local fp = 'hold|' .. account_id .. '|' .. ARGV[3] .. '|' .. ttl_hold .. card_fingerprint(ARGV[8])

local prior = replay(txn_key, fp)
if prior then return prior end

local acct, refused = account_of(acct_key, 'dt')
if refused then return decline(jkey, txn_key, fp, ttl_s, refused, 0) end
local balance = tonumber(acct[1])
local now = now_ms()
local held, count = active_holds(holds_key, expiry_key, now)
local card_refused = presented_card_refusal(KEYS[6], ARGV[8], account_id)
if card_refused then return decline(jkey, txn_key, fp, ttl_s, card_refused, balance - held) end
if acct[2] == 'frozen' then return decline(jkey, txn_key, fp, ttl_s, 'ACCOUNT_FROZEN', balance - held) end
local in_debt = debt_refusal(acct[3])
if in_debt then return decline(jkey, txn_key, fp, ttl_s, in_debt, balance - held) end
if count >= MAX_ACTIVE_HOLDS then return decline(jkey, txn_key, fp, ttl_s, 'TOO_MANY_HOLDS', balance - held) end
if balance - held < amount then return decline(jkey, txn_key, fp, ttl_s, 'INSUFFICIENT_FUNDS', balance - held) end

local expires = int_str(tonumber(now) + ttl_hold_s * 1000)
local amount_arg = ARGV[3]          -- canonical digits (checked)
-- the extras held, exp already encoded: digits, nothing to escape (journal_extras' output)
local jid = append_entry(jkey, 'hold', '0', acct[1], '', '|held|' .. amount_arg .. '|exp|' .. expires)
if not jid then return NOT_INITIALIZED end
redis.call('HSET', acct_key, 'lj', jid)
redis.call('HSET', holds_key, txn_id, amount_arg)
redis.call('ZADD', expiry_key, expires, txn_id)
-- the decision and the hold's state in one HSET (as decide() would store it, plus hs/ha/hx)
local available = int_str(balance - held - amount)
redis.call('HSET', txn_key, 'f', fp, 's', stored_status('APPLIED'), 'b', available, 'j', jid,
           'hs', 'active', 'ha', amount_arg, 'hx', expires)
redis.call('EXPIRE', txn_key, ttl_s)
return 'APPLIED' .. '|' .. available .. '|0|' .. jid
