--[[
The checks of a request's KEYS and ARGV. Each answers nil when the value is acceptable,
else an INVALID reply naming the field.
]]
--@include common

-- nil when the id is acceptable, else an INVALID reply
local function check_id(value, field, optional)
  if value == nil or value == '' then
    if optional then return nil end
    return invalid(field, 'must not be empty')
  end
  if #value > MAX_ID_LEN then return invalid(field, 'longer than 64 characters') end
  if not string.match(value, '^[%w._:-]+$') then     -- %w: A-Z a-z 0-9 (Redis runs Lua in the C locale)
    return invalid(field, 'only A-Z a-z 0-9 . _ : - are allowed')
  end
  return nil
end

-- Internal txn ids: '@' + a lower-case kind + ':' + id characters, at most 64 in all
-- ('@hx:<sha1>', '@cmp:<partition>:<journal id>', '@rst:<digest>'). Only the ledger's own
-- operations take them (compensate, restore_account) or make them (hold expiry).
local function check_internal_id(value, field)
  if type(value) ~= 'string' or #value > MAX_ID_LEN or not string.match(value, '^@[a-z]+:[A-Za-z0-9._:-]+$') then
    return invalid(field, 'must be an internal txn id (@<kind>:...), made by the ledger itself')
  end
  return nil
end

local function check_amount(value, field, allow_zero, max_minor)
  max_minor = max_minor or MAX_AMOUNT_MINOR
  if type(value) ~= 'string' then return invalid(field, 'missing') end
  if allow_zero and value == '0' then return nil end
  if #value > 16 or not string.match(value, '^[1-9]%d*$') then
    return invalid(field, 'must be a positive whole number of minor units')
  end
  if tonumber(value) > max_minor then return invalid(field, 'above the maximum') end
  return nil
end

-- An account holder's name: optional, any script (Chinese names included), at most 64
-- characters (256 bytes of UTF-8), no control characters.
local MAX_HOLDER_BYTES = 256                 -- 64 characters of up to 4 bytes (core/validation.py)

local function check_holder(value)
  if value == nil or value == '' then return nil end
  if #value > MAX_HOLDER_BYTES then return invalid('holder_name', 'longer than 64 characters') end
  if string.find(value, '[%z\1-\31\127]') then return invalid('holder_name', 'control characters are not allowed') end
  return nil
end

local function check_ttl(value)
  if type(value) ~= 'string' or #value > 9 or not string.match(value, '^[1-9]%d*$')
     or tonumber(value) > MAX_TTL_S then
    return invalid('retention_s', 'must be a whole number of seconds up to 400 days')
  end
  return nil
end

-- The key of a txn's record: 't:<txn_id>' in the partition of its account.
local function txn_key_of(prefix, txn_id)
  return prefix .. 't:' .. txn_id
end

-- The keys must be the ones this account and txn map to: a client cannot move
-- one account's money while journaling another's.
local function check_keys(prefix, acct_key, txn_key, account_id, txn_id)
  if acct_key ~= prefix .. 'a:' .. account_id then return invalid('KEYS[1]', 'not the key of this account') end
  if txn_key ~= txn_key_of(prefix, txn_id) then return invalid('KEYS[2]', 'not the key of this txn_id') end
  return nil
end

-- The common request (a client's txn id, a positive amount, or 0 where allowed) checked by one pattern over
-- '<txn> <account> <amount> <retention> <terminal> <cashier>' (no field may hold a space,
-- so each part is one field): one match instead of six. It accepts only what the field
-- checks accept; anything else goes through them, and they name the bad field.
local PLAIN_REQUEST = '^[%w._:-]+ [%w._:-]+ [1-9]%d* [1-9]%d* [%w._:-]* [%w._:-]*$'
-- Digits (no leading zero) fewer than the limit's are below it: no tonumber (a strtod,
-- ~1.3k instructions each) for the amounts and retentions of every day.
-- (Their digit counts by '..': a library's top level may not reach the string table;
-- both limits are far below 1e14, where Lua's number-to-string turns to exponents.)
local AMOUNT_DIGITS, TTL_DIGITS = #('' .. MAX_AMOUNT_MINOR), #('' .. MAX_TTL_S)

local function plain_request(max_amount_minor, allow_zero)
  local txn, acct, amount, ttl, term, cash = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5] or '', ARGV[6] or ''
  -- an amount of '0' where zero is allowed (check_amount's allow_zero: void, freeze, open,
  -- close...) is acceptable as it stands: the other fields go through the same pattern
  -- instead of the six field checks
  if allow_zero and amount == '0' then amount = '1' end
  if not (txn and acct and amount and ttl) or #txn > MAX_ID_LEN or #acct > MAX_ID_LEN or #amount > 16
     or #ttl > 9 or #term > MAX_ID_LEN or #cash > MAX_ID_LEN
     or not string.match(txn .. ' ' .. acct .. ' ' .. amount .. ' ' .. ttl .. ' ' .. term .. ' ' .. cash, PLAIN_REQUEST) then
    return false
  end
  return (#amount < AMOUNT_DIGITS and not max_amount_minor or tonumber(amount) <= (max_amount_minor or MAX_AMOUNT_MINOR))
     and (#ttl < TTL_DIGITS or tonumber(ttl) <= MAX_TTL_S)
end

-- The standard checks of KEYS/ARGV shared by every balance script. `internal_txn`: the
-- txn id must be an internal one (compensate, restore); else it must be a client's.
local function check_request(allow_zero_amount, max_amount_minor, internal_txn)
  local jkey = KEYS[3]
  if type(jkey) ~= 'string' or string.sub(jkey, -1) ~= 'j' then return invalid('KEYS[3]', 'not a journal key') end
  local prefix = string.sub(jkey, 1, -2)
  if not internal_txn and plain_request(max_amount_minor, allow_zero_amount) then
    return check_keys(prefix, KEYS[1], KEYS[2], ARGV[2], ARGV[1])
  end
  local txn_check = check_id
  if internal_txn then txn_check = check_internal_id end
  return txn_check(ARGV[1], 'txn_id')
      or check_id(ARGV[2], 'account_id')
      or check_amount(ARGV[3], 'amount_minor', allow_zero_amount, max_amount_minor)
      or check_ttl(ARGV[4])
      or check_id(ARGV[5], 'terminal_id', true)
      or check_id(ARGV[6], 'cashier_id', true)
      or check_keys(prefix, KEYS[1], KEYS[2], ARGV[2], ARGV[1])
end
