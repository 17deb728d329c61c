--[[
member_update: change a member's name and/or phone (issue 29: the back office's member
form); no money moves. The name is re-indexed (name key, pinyin initials); a new phone
must not be another member's phone, a card number or another account's id (PHONE_TAKEN),
is claimed in the partition's phone index, and the old phone's claim is released. Only a
phone of the account's own partition (core/members.py refuses another). ACCOUNT_NOT_FOUND,
ACCOUNT_CLOSED. Journal entry: kind 'member_update', amt 0, bal the balance, with fields
'name' and 'ph' as they are now (what the book keeps, like an opening's).
KEYS[1] account hash
KEYS[2] txn record
KEYS[3] partition journal
KEYS[4] the partition's member index
KEYS[5] the partition's phone index (<prefix>ph)
KEYS[6] the account hash of the new phone (<prefix>a:<phone>), only with a new phone
KEYS[7] the card hash of the new phone (<prefix>c:<phone>), with KEYS[6]
ARGV[1] txn_id
ARGV[2] account_id
ARGV[3] amount_minor (0)
ARGV[4] retention_s
ARGV[5] terminal_id
ARGV[6] cashier_id
ARGV[7] holder name ('' = keep the current one)
ARGV[8] phone ('' = keep the current one)
ARGV[9] name key of ARGV[7] ('' with it)
ARGV[10] pinyin initials of ARGV[7]
Returns {status, balance_minor, replayed, journal_id}
Statuses: APPLIED, ACCOUNT_NOT_FOUND, ACCOUNT_CLOSED, PHONE_TAKEN
Errors: INVALID, TXN_CONFLICT, NOT_INITIALIZED
]]
--@include checks
--@include decisions
--@include journal
--@include members

local bad = check_request(true) or check_holder(ARGV[7])
  or check_index_key(KEYS[4], string.sub(KEYS[3], 1, -2)) or check_member_args(ARGV[8], ARGV[9], ARGV[10])
if bad then return bad end
local acct_key, txn_key, jkey, index_key, phones_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local prefix = string.sub(jkey, 1, -2)
local txn_id, account_id, ttl_s = ARGV[1], ARGV[2], ARGV[4]
local new_holder, new_phone = ARGV[7] or '', ARGV[8] or ''
if tonumber(ARGV[3]) ~= 0 then return invalid('amount_minor', 'must be 0') end
if phones_key ~= prefix .. 'ph' then return invalid('KEYS[5]', 'not the phone index of this partition') end
if new_holder == '' and new_phone == '' then return invalid('holder_name', 'give a new name or a new phone') end
if new_phone == '' then
  if KEYS[6] or KEYS[7] then return invalid('KEYS', 'the phone keys go only with a new phone') end
elseif KEYS[6] ~= prefix .. 'a:' .. new_phone or KEYS[7] ~= prefix .. 'c:' .. new_phone then
  return invalid('KEYS', 'not the account and card keys of the phone in this partition')
end

local fp = 'member_update|' .. account_id .. '|' .. redis.sha1hex(new_holder .. '|' .. new_phone)
local prior = replay(txn_key, fp)
if prior then return prior end
if not initialized(jkey) then return NOT_INITIALIZED end

local m = redis.call('HMGET', acct_key, 'bal', 'st', 'nm', 'ph', 'nk', 'pi')
if not m[1] then return decide(txn_key, fp, ttl_s, 'ACCOUNT_NOT_FOUND', 0) end
local balance = tonumber(m[1])
if m[2] == 'closed' then return decide(txn_key, fp, ttl_s, 'ACCOUNT_CLOSED', balance) end
local old_phone = m[4] or ''
local holder, phone = m[3] or '', old_phone
local name_key, initials = m[5] or m[3] or '', m[6] or ''
if new_holder ~= '' then holder, name_key, initials = new_holder, ARGV[9] or '', ARGV[10] or '' end
if new_phone ~= '' and new_phone ~= old_phone then
  local owner = redis.call('HGET', phones_key, new_phone)
  if (owner and owner ~= account_id) or (new_phone ~= account_id and redis.call('EXISTS', KEYS[6]) == 1)
     or redis.call('EXISTS', KEYS[7]) == 1 then
    return decide(txn_key, fp, ttl_s, 'PHONE_TAKEN', balance)
  end
  if old_phone ~= '' and redis.call('HGET', phones_key, old_phone) == account_id then
    redis.call('HDEL', phones_key, old_phone)
  end
  redis.call('HSET', phones_key, new_phone, account_id)
  phone = new_phone
end

if holder ~= '' then redis.call('HSET', acct_key, 'nm', holder) end
index_member(index_key, acct_key, account_id, holder, phone, name_key, initials)
local jid = journal(jkey, acct_key, txn_id, 'member_update', account_id, 0, balance, '',
  {'name', holder, 'ph', phone})
return decide(txn_key, fp, ttl_s, 'APPLIED', balance, jid)
