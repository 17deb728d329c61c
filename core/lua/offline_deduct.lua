--[[
offline_deduct: settle a charge a till made while it could not reach the ledger (issue 27).
The sale happened (the customer left with the goods), so it is applied whenever the
server's bound allows it: the part the available balance (balance - active holds) covers is
taken like a deduction (buckets in the shop's spending order), and the rest is recorded as
the account's OFFLINE DEBT: the account hash's field 'dt' (minor units, absent = 0). The
balance itself never goes below zero; the member owes 'dt' on top of it. Journaled as kind
'offline' when covered, 'offline_debt' when a debt was recorded: amt = -covered (0 when
nothing was left), fields dt (the debt this charge added), om (when the till made it, ms),
cb '1' when the card was blocked by the time of settlement (applied all the same: the
sale was made before the till could know), fz '1' when the account was frozen.
The server's bound (a till can always claim to have been offline): per account and till,
the offline amounts whose sale times fall in one window of offline_max_duration_s (the
partition's settings, default 7200 s; a window opens at the first sale after the last
window ended and never goes back in time) add up to at most offline_member_limit (default
10000 minor units); a claim past it is declined OFFLINE_LIMIT_EXCEEDED and nothing is
applied. The windows live in <prefix>ol:<account_id> (field terminal -> '<start ms> <sum>'; never
expires, like every ledger key: core/key_ttls.py).
The txn record keeps the debt ('od') for replays.
KEYS[1] account hash
KEYS[2] txn record
KEYS[3] partition journal
KEYS[4] holds of the account
KEYS[5] hold expiries of the account
KEYS[6] the partition's settings (offline_member_limit, offline_max_duration_s, spend_order)
KEYS[7] the account's cards (<prefix>ac:<account_id>), read with ARGV[7]
KEYS[8] the account's offline windows (<prefix>ol:<account_id>)
ARGV[1] txn_id
ARGV[2] account_id
ARGV[3] amount_minor
ARGV[4] retention_s
ARGV[5] terminal_id (required: the bound is per till)
ARGV[6] cashier_id (the cashier signed in when the sale was made)
ARGV[7] card_no the charge was presented with ('' or absent: none)
ARGV[8] made_at_ms: when the till made the sale (its clock, ms); at most 60 s ahead of
  the ledger's clock
Returns {status, balance_minor, replayed, journal_id, debt_minor}
Statuses: APPLIED, ACCOUNT_NOT_FOUND, ACCOUNT_CLOSED, CARD_NOT_THIS_ACCOUNT, OFFLINE_LIMIT_EXCEEDED
Errors: INVALID, TXN_CONFLICT, NOT_INITIALIZED
]]
--@include checks
--@include decisions
--@include journal
--@include accounts
--@include holds
--@include buckets
--@include cards

local DEFAULT_OFFLINE_MEMBER_LIMIT_MINOR = 10000
local DEFAULT_OFFLINE_MAX_DURATION_S = 7200
local CLOCK_SKEW_MS = 60000

local acct_key, txn_key, jkey = KEYS[1], KEYS[2], KEYS[3]
local prefix = string.sub(jkey or '', 1, -2)
local bad = check_request(false) or check_hold_keys(prefix, ARGV[2]) or check_settings_key(KEYS[6], prefix)
  or check_presented_card(KEYS[7], ARGV[7], prefix, ARGV[2])
if bad then return bad end
if ARGV[5] == nil or ARGV[5] == '' then return invalid('terminal_id', 'must not be empty for an offline sale') end
if KEYS[6] == nil then return invalid('KEYS[6]', 'the settings of this partition are required') end
if KEYS[8] ~= prefix .. 'ol:' .. ARGV[2] then return invalid('KEYS[8]', 'not the offline windows of this account') end
local made_at = ARGV[8]
if type(made_at) ~= 'string' or not string.match(made_at, '^[1-9]%d*$') or #made_at > 15 then
  return invalid('made_at_ms', 'must be a whole number of milliseconds since 1970')
end
local account_id, amount_arg, ttl_s, terminal = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local fp = 'offline|' .. account_id .. '|' .. amount_arg .. '|' .. made_at .. '|' .. terminal .. card_fingerprint(ARGV[7])

local function answer(reply)
  reply = decision_table(reply)     -- a decision is one string (issue 30); this one has a fifth element
  if reply[1] == 'NOT_INITIALIZED' or reply[1] == 'TXN_CONFLICT' then return reply end   -- not decisions
  reply[5] = tonumber(redis.call('HGET', txn_key, 'od') or '0')
  return reply
end

local prior = replay(txn_key, fp)
if prior then return answer(prior) end
if tonumber(made_at) > tonumber(now_ms()) + CLOCK_SKEW_MS then
  return invalid('made_at_ms', 'is in the future')
end

local acct, refused = account_of(acct_key, 'bo', 'dt')
if refused then return answer(decline(jkey, txn_key, fp, ttl_s, refused, 0)) end
local balance = tonumber(acct[1])
-- the card as presented_card_refusal (cards.lua) judges it, but a blocked card is no
-- refusal here: the sale was made before the till could know (journaled cb)
local card_blocked = false
if ARGV[7] and ARGV[7] ~= '' then
  local st = redis.call('HGET', KEYS[7], ARGV[7])
  card_blocked = st == 'blocked'
  if not st and ARGV[7] ~= account_id then
    return answer(decline(jkey, txn_key, fp, ttl_s, 'CARD_NOT_THIS_ACCOUNT', balance))
  end
end

-- the server's bound: this till's offline sales of this account in the current window
local cfg = redis.call('HMGET', KEYS[6], 'offline_member_limit', 'offline_max_duration_s')
local limit = tonumber(cfg[1] or DEFAULT_OFFLINE_MEMBER_LIMIT_MINOR)
local window_ms = tonumber(cfg[2] or DEFAULT_OFFLINE_MAX_DURATION_S) * 1000
local amount = tonumber(amount_arg)
local start, sum = tonumber(made_at), 0
local w = redis.call('HGET', KEYS[8], terminal)
if w then
  local ws, wsum = string.match(w, '^(%d+) (%d+)$')
  -- a sale before the window's end (or before its start: sales settle in order, an
  -- earlier time never opens a window of its own) counts in it
  if ws and tonumber(made_at) < tonumber(ws) + window_ms then start, sum = tonumber(ws), tonumber(wsum) end
end
if sum + amount > limit then
  return answer(decline(jkey, txn_key, fp, ttl_s, 'OFFLINE_LIMIT_EXCEEDED', balance))
end

local bonus = acct[3] and tonumber(acct[3]) or 0
local debt_before = acct[4] and tonumber(acct[4]) or 0
local available = balance - active_holds(KEYS[4], KEYS[5])
local covered = amount
if available < amount then covered = math.max(0, available) end
local debt = amount - covered
local take_p, take_b = split_take(covered, balance, bonus, KEYS[6])
local after = int_str(balance - covered)
local extra = bucket_fields(-take_p, -take_b, {'om', made_at})
if card_blocked then extra[#extra + 1] = 'cb'; extra[#extra + 1] = '1' end
if acct[2] == 'frozen' then extra[#extra + 1] = 'fz'; extra[#extra + 1] = '1' end
local jid
if debt > 0 then
  extra[#extra + 1] = 'dt'; extra[#extra + 1] = int_str(debt)
  jid = append_entry(jkey, 'offline_debt', int_str(-covered), after, '', extra)
else
  jid = append_entry(jkey, 'offline', '-' .. amount_arg, after, '', extra)
end
if not jid then return NOT_INITIALIZED end
set_balance(acct_key, after, jid, take_b > 0 and bonus - take_b or nil)
if debt > 0 then redis.call('HSET', acct_key, 'dt', int_str(debt_before + debt)) end
redis.call('HSET', KEYS[8], terminal, int_str(start) .. ' ' .. int_str(sum + amount))
local reply = decide(txn_key, fp, ttl_s, 'APPLIED', after, jid, take_b)
if debt > 0 then redis.call('HSET', txn_key, 'od', int_str(debt)) end
return answer(reply)
