--[[
open_account: create an account with an opening balance (0 allowed), and optionally an
opening bonus and the reference of the system it was imported from (issue 29). With a
bonus or a reference the fingerprint is 'open|<account>|<principal>|<bonus>|imp:<ref>'
(without either it is 'open|<account>|<initial>', as before).
The account hash has no TTL, ever. Card numbers, account ids and phones share the till's
one look-up, so the id must not be a card number or another member's phone
(ACCOUNT_ID_TAKEN) and the phone must not be another member's phone, a card number or
another account's id (PHONE_TAKEN). Each string is claimed in its own slot (card c:<no>,
account a:<id>, phone <prefix>ph of partition_of(phone)): when the phone's partition is this
one the script checks and claims it here; otherwise the ledger claimed it first (identity.lua)
and hands its finding over in ARGV[11], stored like any decision.
KEYS[1] account hash
KEYS[2] txn record
KEYS[3] partition journal
KEYS[4] the partition's set of account ids (how restore and reconcile find accounts)
KEYS[5] the partition's member index (see includes/members.lua)
KEYS[6] the card hash of the account id (<prefix>c:<account_id>)
KEYS[7] the partition's phone index (<prefix>ph: phone -> account id)
KEYS[8] the account hash of the phone (<prefix>a:<phone>), only with a phone of this partition
KEYS[9] the card hash of the phone (<prefix>c:<phone>), with KEYS[8]
ARGV[1] txn_id
ARGV[2] account_id
ARGV[3] initial_minor
ARGV[4] retention_s
ARGV[5] terminal_id
ARGV[6] cashier_id
ARGV[7] holder_name (optional; shown at the till, journaled as field 'name'; not part of
  the request fingerprint)
ARGV[8] phone (optional; journaled 'ph')
ARGV[9] name key
ARGV[10] pinyin initials
ARGV[11] the phone of another partition: 'CLAIMED' (for this account, by the ledger) or
  PHONE_TAKEN; '' or absent otherwise
ARGV[12] opening bonus (optional, '' or absent = 0): the bonus bucket of a member moved in
  from another system (issue 29); ARGV[3] is then the principal, the balance principal +
  bonus, and the entry's amt both, with pd / bd (buckets.lua)
ARGV[13] import reference (optional): the member's reference in the system it was moved in
  from, journaled as field 'imp' (an entry with 'imp' is an import's opening balance);
  1-64 characters, no control characters
Returns {status, balance_minor, replayed, journal_id}
Statuses: APPLIED, ACCOUNT_EXISTS, ACCOUNT_ID_TAKEN, PHONE_TAKEN
Errors: INVALID, TXN_CONFLICT, NOT_INITIALIZED
]]
--@include checks
--@include decisions
--@include journal
--@include members

local bad = check_request(true) or check_holder(ARGV[7])
  or check_index_key(KEYS[5], string.sub(KEYS[3], 1, -2)) or check_member_args(ARGV[8], ARGV[9], ARGV[10])
if bad then return bad end
local holder = ARGV[7] or ''
local acct_key, txn_key, jkey, set_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local prefix = string.sub(jkey, 1, -2)
if set_key ~= prefix .. 'accts' then return invalid('KEYS[4]', 'not the account set of this partition') end
local txn_id, account_id, initial = ARGV[1], ARGV[2], tonumber(ARGV[3])
local phone, phone_found = ARGV[8] or '', ARGV[11] or ''
if KEYS[6] ~= prefix .. 'c:' .. account_id then return invalid('KEYS[6]', 'not the card key of this account id') end
if KEYS[7] ~= prefix .. 'ph' then return invalid('KEYS[7]', 'not the phone index of this partition') end
if phone == '' or phone_found ~= '' then
  if KEYS[8] or KEYS[9] then return invalid('KEYS', 'the phone keys go only with a phone of this partition') end
  if phone_found ~= '' and (phone == '' or (phone_found ~= 'CLAIMED' and phone_found ~= 'PHONE_TAKEN')) then
    return invalid('ARGV[11]', 'CLAIMED or PHONE_TAKEN, and only with a phone')
  end
elseif KEYS[8] ~= prefix .. 'a:' .. phone or KEYS[9] ~= prefix .. 'c:' .. phone then
  return invalid('KEYS', 'not the account and card keys of the phone in this partition')
end
local bonus_arg, import_ref = ARGV[12] or '', ARGV[13] or ''
if bonus_arg == '' then bonus_arg = '0' end
bad = check_amount(bonus_arg, 'bonus_minor', true)
if bad then return bad end
if #import_ref > MAX_HOLDER_BYTES or string.find(import_ref, '%c') then
  return invalid('import_ref', 'at most 64 characters, no control characters')
end
local bonus = tonumber(bonus_arg)
local ttl_s = ARGV[4]
local fp = 'open|' .. account_id .. '|' .. ARGV[3]
if bonus > 0 or import_ref ~= '' then fp = fp .. '|' .. bonus_arg .. '|imp:' .. import_ref end

local prior = replay(txn_key, fp)
if prior then return prior end
if not initialized(jkey) then return NOT_INITIALIZED end

local existing = redis.call('HGET', acct_key, 'bal')
if existing then return decide(txn_key, fp, ttl_s, 'ACCOUNT_EXISTS', tonumber(existing)) end
local id_owner = redis.call('HGET', KEYS[7], account_id)
if redis.call('EXISTS', KEYS[6]) == 1 or (id_owner and id_owner ~= account_id) then
  return decide(txn_key, fp, ttl_s, 'ACCOUNT_ID_TAKEN', 0)
end
if phone_found == 'PHONE_TAKEN' then return decide(txn_key, fp, ttl_s, 'PHONE_TAKEN', 0) end
if phone ~= '' and phone_found == '' then
  local owner = redis.call('HGET', KEYS[7], phone)
  if (owner and owner ~= account_id) or (phone ~= account_id and redis.call('EXISTS', KEYS[8]) == 1)
     or redis.call('EXISTS', KEYS[9]) == 1 then
    return decide(txn_key, fp, ttl_s, 'PHONE_TAKEN', 0)
  end
  redis.call('HSET', KEYS[7], phone, account_id)
end

local balance = initial + bonus           -- each at most 1e11: far below MAX_BALANCE_MINOR
redis.call('HSET', acct_key, 'bal', int_str(balance), 'st', 'active', 'ct', now_ms())
if bonus > 0 then redis.call('HSET', acct_key, 'bo', int_str(bonus)) end
if holder ~= '' then redis.call('HSET', acct_key, 'nm', holder) end
index_member(KEYS[5], acct_key, account_id, holder, phone, ARGV[9] or '', ARGV[10] or '')
redis.call('SADD', set_key, account_id)
local extra = member_fields(holder, phone) or {}
if bonus > 0 then
  extra[#extra + 1] = 'pd'; extra[#extra + 1] = int_str(initial)
  extra[#extra + 1] = 'bd'; extra[#extra + 1] = int_str(bonus)
end
if import_ref ~= '' then extra[#extra + 1] = 'imp'; extra[#extra + 1] = import_ref end
if #extra == 0 then extra = nil end
local jid = journal(jkey, acct_key, txn_id, 'open', account_id, balance, balance, '', extra)
return decide(txn_key, fp, ttl_s, 'APPLIED', balance, jid)
