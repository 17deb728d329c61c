--[[
close_account (退卡): the member returns the card. The principal is paid out in cash,
the bonus is forfeited, the balance becomes 0 and the account 'closed': every later
operation on it answers ACCOUNT_CLOSED. Refused while holds are active, and while an
offline debt is open (DEBT_OPEN: the member pays it with a top-up first).
Journaled as kind 'close': amt = -balance, bal 0, pd = -principal, bd = -bonus.
The account's bonus bucket is field 'bo' (0 when absent); principal = bal - bo.
KEYS[1] account hash
KEYS[2] txn record
KEYS[3] partition journal
KEYS[4] holds of the account
KEYS[5] hold expiries
KEYS[6] the partition's member index
ARGV[1] txn_id
ARGV[2] account_id
ARGV[3] '0'
ARGV[4] retention_s
ARGV[5] terminal_id
ARGV[6] cashier_id
Returns {status, 0, replayed, journal_id, payout_minor, bonus_forfeited_minor} (ACCOUNT_NOT_FOUND
  decided now: the first four only)
Statuses: APPLIED, ACCOUNT_NOT_FOUND, ACCOUNT_CLOSED, ACCOUNT_FROZEN, ACCOUNT_HAS_HOLDS, DEBT_OPEN
Errors: INVALID, TXN_CONFLICT, NOT_INITIALIZED
]]
--@include checks
--@include decisions
--@include journal
--@include accounts
--@include holds
--@include members

local prefix = string.sub(KEYS[3] or '', 1, -2)
local bad = check_request(true) or check_hold_keys(prefix, ARGV[2]) or check_index_key(KEYS[6], prefix)
if bad then return bad end
if ARGV[3] ~= '0' then return invalid('amount_minor', 'must be 0 for close') end
local acct_key, txn_key, jkey = KEYS[1], KEYS[2], KEYS[3]
local txn_id, account_id, ttl_s = ARGV[1], ARGV[2], ARGV[4]
local fp = 'close|' .. account_id .. '|0'

local function answer(reply)
  reply = decision_table(reply)
  local rec = redis.call('HMGET', txn_key, 'p', 'x')
  reply[5], reply[6] = tonumber(rec[1] or '0'), tonumber(rec[2] or '0')
  return reply
end

local prior = replay(txn_key, fp)
if prior then return answer(prior) end
if not initialized(jkey) then return NOT_INITIALIZED end

local acct, refused = account_of(acct_key, 'bo', 'dt')
if refused == 'ACCOUNT_NOT_FOUND' then return decide(txn_key, fp, ttl_s, refused, 0) end
if refused then return answer(decide(txn_key, fp, ttl_s, refused, 0)) end
local balance = tonumber(acct[1])
if acct[2] == 'frozen' then return answer(decide(txn_key, fp, ttl_s, 'ACCOUNT_FROZEN', balance)) end
if debt_refusal(acct[4]) then return answer(decide(txn_key, fp, ttl_s, 'DEBT_OPEN', balance)) end
local _, holds = active_holds(KEYS[4], KEYS[5], now_ms())
if holds > 0 then return answer(decide(txn_key, fp, ttl_s, 'ACCOUNT_HAS_HOLDS', balance)) end

local bonus = tonumber(acct[3] or '0')
local principal = balance - bonus
unindex_member(KEYS[6], acct_key, account_id)
redis.call('HSET', acct_key, 'bal', '0', 'st', 'closed')
redis.call('HDEL', acct_key, 'bo')
local jid = journal(jkey, acct_key, txn_id, 'close', account_id, int_str(-balance), 0, '',
                    {'pd', int_str(-principal), 'bd', int_str(-bonus)})
local reply = decide(txn_key, fp, ttl_s, 'APPLIED', 0, jid)
redis.call('HSET', txn_key, 'p', int_str(principal), 'x', int_str(bonus))
return answer(reply)
