--[[
restore_account: bring back an account that Redis lost, from the database of record.
Never overwrites: an account that exists in Redis is left alone (ACCOUNT_EXISTS).
Journaled as kind 'restore' with amount 0, so the database's sum of entries still
equals the balance. A 'closed' account (退卡) is restored closed with balance 0.
The txn id is an internal one ('@rst:...', made by the reconcile service's restore).
KEYS[1] account hash
KEYS[2] txn record
KEYS[3] partition journal
KEYS[4] the partition's set of account ids
KEYS[5] the partition's member index (optional)
ARGV[1] txn_id
ARGV[2] account_id
ARGV[3] balance_minor
ARGV[4] retention_s
ARGV[5] terminal_id
ARGV[6] cashier_id
ARGV[7] status ('active', 'frozen' or 'closed')
ARGV[8] holder_name (optional)
ARGV[9] phone (with KEYS[5])
ARGV[10] name key (with KEYS[5])
ARGV[11] pinyin initials (with KEYS[5])
ARGV[12] bonus_minor (the bonus bucket, part of balance_minor; optional)
ARGV[13] debt_minor (the open offline debt, field dt: offline_deduct.lua; optional, not
  journaled: the book holds it in offline_debts already)
Returns {status, balance_minor, replayed, journal_id}
Statuses: APPLIED, ACCOUNT_EXISTS
Errors: INVALID, TXN_CONFLICT, NOT_INITIALIZED
]]
--@include checks
--@include decisions
--@include journal
--@include members

local bad = check_request(true, MAX_BALANCE_MINOR, true) or check_holder(ARGV[8])
  or (KEYS[5] and (check_index_key(KEYS[5], string.sub(KEYS[3], 1, -2)) or check_member_args(ARGV[9], ARGV[10], ARGV[11])))
if bad then return bad end
local holder = ARGV[8] or ''
local acct_key, txn_key, jkey, set_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
if set_key ~= string.sub(jkey, 1, -2) .. 'accts' then return invalid('KEYS[4]', 'not the account set of this partition') end
local txn_id, account_id, balance, ttl_s, st = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], ARGV[7]
if st ~= 'active' and st ~= 'frozen' and st ~= 'closed' then return invalid('status', 'must be active, frozen or closed') end
if st == 'closed' and balance ~= 0 then return invalid('balance_minor', 'must be 0 for a closed account') end
local bonus_arg = ARGV[12] or '0'
bad = check_amount(bonus_arg, 'bonus_minor', true, MAX_BALANCE_MINOR)
if bad then return bad end
if tonumber(bonus_arg) > balance then return invalid('bonus_minor', 'must not exceed balance_minor') end
local debt_arg = ARGV[13] or '0'
bad = check_amount(debt_arg, 'debt_minor', true, MAX_BALANCE_MINOR)
if bad then return bad end
local fp = 'restore|' .. account_id .. '|' .. ARGV[3] .. '|' .. st

local prior = replay(txn_key, fp)
if prior then return prior end
if not initialized(jkey) then return NOT_INITIALIZED end

local existing = redis.call('HGET', acct_key, 'bal')
if existing then return decide(txn_key, fp, ttl_s, 'ACCOUNT_EXISTS', tonumber(existing)) end

redis.call('HSET', acct_key, 'bal', int_str(balance), 'st', st, 'ct', now_ms())
if bonus_arg ~= '0' then redis.call('HSET', acct_key, 'bo', bonus_arg) end
if debt_arg ~= '0' then redis.call('HSET', acct_key, 'dt', debt_arg) end
if holder ~= '' then redis.call('HSET', acct_key, 'nm', holder) end
local phone = KEYS[5] and ARGV[9] or ''
-- a closed account keeps its name and phone, out of the index (find_members skips it)
if KEYS[5] and st ~= 'closed' then index_member(KEYS[5], acct_key, account_id, holder, phone, ARGV[10] or '', ARGV[11] or '')
elseif phone ~= '' then redis.call('HSET', acct_key, 'ph', phone) end
redis.call('SADD', set_key, account_id)
local jid = journal(jkey, acct_key, txn_id, 'restore', account_id, 0, balance, '',
                    member_fields(holder, phone))
return decide(txn_key, fp, ttl_s, 'APPLIED', balance, jid)
