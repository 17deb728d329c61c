--[[
Shared pieces of every ledger script. The loader (core/scripts.py) pastes this
file where a script says `--@include common`; it is never sent on its own.

Conventions every script follows:
  * KEYS[1] account hash, KEYS[2] idempotency record of this txn, KEYS[3] journal
    stream of the partition. All keys share one hash tag, so one slot.
  * ARGV[1] txn_id, ARGV[2] account_id, ARGV[3] amount (decimal digits),
    ARGV[4] idempotency retention in seconds, ARGV[5] terminal_id, ARGV[6] cashier_id.
  * Reply: {status, balance_minor (exact decimal digits), replayed (0/1), detail}
      detail = journal entry id when applied, the reason when INVALID, the stored
      fingerprint on TXN_CONFLICT, '' otherwise.
  * Every number a script writes (journal fields, records, balances, scores) or returns
    goes through int_str: exact decimal digits, never Lua's tostring (14 significant
    digits: 1e+14, 1.2345678901234e+14) nor Redis's own conversion of Lua numbers.
  * Txn ids: clients use 1-64 of A-Z a-z 0-9 . _ : - (check_id). Ids the ledger makes
    itself (hold expiry, reconcile compensation, restore) start with '@', which no
    client id may contain (check_internal_id): no client id can ever equal one.
]]

local MAX_AMOUNT_MINOR = 100000000000        -- 1e11: one operation, keep in sync with core/validation.py
local MAX_BALANCE_MINOR = 1000000000000000   -- 1e15 < 2^53: exact in Lua doubles
local MAX_ID_LEN = 64
local MAX_TTL_S = 34560000                   -- 400 days
local MAX_EXACT_INT = 9007199254740991       -- 2^53 - 1: every integer up to it is exact in a double

-- Exact decimal digits of an integer-valued number (or of a digit string). '%d' prints
-- Lua 5.1's C long (64 bits) exactly; a double holds every integer up to 2^53 exactly.
-- Anything else is a bug in a script, never a user's input (inputs are checked first
-- and the limits keep every sum below 2^53): fail loudly rather than write it.
local function int_str(n)
  if type(n) == 'string' then n = tonumber(n) end
  -- n % 1 (a VM operation, Lua's floored modulo) is 0 exactly for whole numbers
  if type(n) ~= 'number' or n % 1 ~= 0 or n > MAX_EXACT_INT or n < -MAX_EXACT_INT then
    error('ledger script bug: not an exact integer')
  end
  return string.format('%d', n)
end

local function invalid(field, reason)
  return {'INVALID', '0', 0, field .. ': ' .. reason}
end

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
local function check_holder(value)
  if value == nil or value == '' then return nil end
  if #value > 256 then return invalid('holder_name', 'longer than 64 characters') end
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

-- The common request (a client's txn id, a positive amount) checked by one pattern over
-- '<txn> <account> <amount> <retention> <terminal> <cashier>' (no field may hold a space,
-- so each part is one field): one match instead of six. It accepts only what the field
-- checks accept; anything else goes through them, and they name the bad field.
local PLAIN_REQUEST = '^[%w._:-]+ [%w._:-]+ [1-9]%d* [1-9]%d* [%w._:-]* [%w._:-]*$'

local function plain_request(max_amount_minor)
  local txn, acct, amount, ttl, term, cash = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5] or '', ARGV[6] or ''
  if not (txn and acct and amount and ttl) or #txn > MAX_ID_LEN or #acct > MAX_ID_LEN or #amount > 16
     or #ttl > 9 or #term > MAX_ID_LEN or #cash > MAX_ID_LEN
     or not string.match(txn .. ' ' .. acct .. ' ' .. amount .. ' ' .. ttl .. ' ' .. term .. ' ' .. cash, PLAIN_REQUEST) then
    return false
  end
  return tonumber(amount) <= (max_amount_minor or MAX_AMOUNT_MINOR) and tonumber(ttl) <= MAX_TTL_S
end

-- The standard checks of KEYS/ARGV shared by every balance script. `internal_txn`: the
-- txn id must be an internal one (compensate, restore); else it must be a client's.
local function check_request(allow_zero_amount, max_amount_minor, internal_txn)
  local jkey = KEYS[3]
  if type(jkey) ~= 'string' or string.sub(jkey, -1) ~= 'j' then return invalid('KEYS[3]', 'not a journal key') end
  local prefix = string.sub(jkey, 1, -2)
  if not internal_txn and plain_request(max_amount_minor) then
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

-- APPLIED, by far the most common decision, is stored as 'A': 16 bytes less per
-- idempotency record (Redis's allocator size classes), millions of records a week.
local function stored_status(status)
  if status == 'APPLIED' then return 'A' end
  return status
end

local function status_of(stored)
  if stored == 'A' then return 'APPLIED' end
  return stored
end

-- The stored first decision for this txn, as a replay; a conflict reply when the
-- same txn id arrives with a different request; nil when the txn id is new. The stored
-- balance was written by int_str: exact digits, answered as stored.
local function replay(txn_key, fingerprint)
  local rec = redis.call('HMGET', txn_key, 'f', 's', 'b', 'j')
  if not rec[1] then return nil end
  if rec[1] ~= fingerprint then return {'TXN_CONFLICT', '0', 0, rec[1]} end
  return {status_of(rec[2]), rec[3], 1, rec[4] or ''}
end

-- Store the first decision for this txn id, and answer it. `balance`: a number, or the
-- exact digits the script already made with int_str (the applied paths: formatted once
-- for the journal, the record and the reply).
-- `taken_b` (deductions and captures that took from the bonus bucket, see buckets.lua)
-- is kept in the same HSET as field 'tb'.
local function decide(txn_key, fingerprint, ttl_s, status, balance, journal_id, taken_b)
  journal_id = journal_id or ''
  local b = balance
  if type(b) ~= 'string' then b = int_str(b) end
  if taken_b and taken_b > 0 then
    redis.call('HSET', txn_key, 'f', fingerprint, 's', stored_status(status), 'b', b, 'j', journal_id,
         'tb', int_str(taken_b))
  elseif journal_id ~= '' then
    redis.call('HSET', txn_key, 'f', fingerprint, 's', stored_status(status), 'b', b, 'j', journal_id)
  else
    redis.call('HSET', txn_key, 'f', fingerprint, 's', stored_status(status), 'b', b)
  end
  redis.call('EXPIRE', txn_key, ttl_s)
  return {status, b, 0, journal_id}
end

-- Redis server time in ms, as exact digits: the seconds' digits, then the milliseconds
-- as 3 digits (Lua 5.1's %d truncates microseconds / 1000, exact below 10^6). Read once
-- per call: every use in one call sees the same instant (the cache is keyed by the
-- call's own ARGV table).
local now_for_argv, now_value
local function now_ms()
  if now_for_argv ~= ARGV then
    local t = redis.call('TIME')
    now_value = string.format('%s%03d', t[1], t[2] / 1000)
    now_for_argv = ARGV
  end
  return now_value
end

-- Append the journal entry of an applied change and remember it on the account.
-- hold_minor / expires_ms describe a hold (kind 'hold'); other kinds leave them out.
-- `extra` is an optional flat list of more field, value pairs (open/restore: name).
local function journal(jkey, acct_key, txn_id, kind, account_id, signed_amount, balance_after,
                       original_txn_id, hold_minor, expires_ms, extra)
  local fields = {'txn', txn_id, 'kind', kind, 'acct', account_id,
    'amt', int_str(signed_amount), 'bal', int_str(balance_after),
    'term', ARGV[5] or '', 'cash', ARGV[6] or '',
    'orig', original_txn_id or ''}
  if hold_minor then
    table.insert(fields, 'held'); table.insert(fields, int_str(hold_minor))
    table.insert(fields, 'exp'); table.insert(fields, int_str(expires_ms))
  end
  if extra then
    for i = 1, #extra do table.insert(fields, extra[i]) end
  end
  local id = redis.call('XADD', jkey, '*', unpack(fields))
  redis.call('HSET', acct_key, 'lj', id)
  return id
end

-- The journal entry of an applied balance change of the call's account (ARGV[1] txn,
-- ARGV[2] account, ARGV[5]/[6] terminal/cashier), fields as journal() writes them, as
-- the call's first write. NOMKSTREAM: a partition without its stream (a Redis that lost
-- its data) gets nothing and the answer is nil, for the caller's NOT_INITIALIZED; so the
-- hot paths need no EXISTS of the stream. `signed_amount`, `balance_after`: exact digits.
-- Then the caller sets balance and last journal id in one HSET (set_balance).
-- No time field: an entry's time is its stream id's milliseconds (XADD '*' takes them
-- from Redis's clock, never going back), so no call pays a TIME for its journal entry.
local function append_entry(jkey, kind, signed_amount, balance_after, original_txn_id, extra)
  if extra then      -- more fields (a top-up's method, bucket deltas, a hold's amount): expanded
    -- as the last arguments, no combined table to build
    return redis.call('XADD', jkey, 'NOMKSTREAM', '*', 'txn', ARGV[1], 'kind', kind, 'acct', ARGV[2],
                      'amt', signed_amount, 'bal', balance_after, 'term', ARGV[5] or '', 'cash', ARGV[6] or '',
                      'orig', original_txn_id, unpack(extra))
  end
  return redis.call('XADD', jkey, 'NOMKSTREAM', '*', 'txn', ARGV[1], 'kind', kind, 'acct', ARGV[2],
              'amt', signed_amount, 'bal', balance_after, 'term', ARGV[5] or '', 'cash', ARGV[6] or '',
              'orig', original_txn_id)
end

-- Balance (exact digits) and last journal id of an account in one HSET; with
-- `bonus_after` (a change that moved the bonus bucket, buckets.lua) the bonus too ('bo',
-- absent when 0).
local function set_balance(acct_key, balance_after, journal_id, bonus_after)
  if bonus_after == nil then
    redis.call('HSET', acct_key, 'bal', balance_after, 'lj', journal_id)
  elseif bonus_after > 0 then
    redis.call('HSET', acct_key, 'bal', balance_after, 'bo', int_str(bonus_after), 'lj', journal_id)
  else
    redis.call('HSET', acct_key, 'bal', balance_after, 'lj', journal_id)
    redis.call('HDEL', acct_key, 'bo')
  end
end

-- Holds of one account: a hash hold txn id -> amount, and a sorted set hold txn id
-- by expiry (ms). A hold counts until its expiry whether or not anything touches it;
-- expired entries are cleared, and their release journaled, by expire_holds.lua.
local MAX_ACTIVE_HOLDS = 100

local function active_holds(holds_key, expiry_key, now)
  -- most accounts hold nothing: no expiry set at all (Redis deletes an emptied sorted
  -- set), and EXISTS costs half a range read; an expired, unswept hold keeps the set.
  -- `now` (ms digits) may be left out: the time is then read only when there are holds.
  if redis.call('EXISTS', expiry_key) == 0 then return 0, 0 end
  local ids = redis.call('ZRANGEBYSCORE', expiry_key, '(' .. (now or now_ms()), '+inf')
  if #ids == 0 then return 0, 0 end
  local amounts = redis.call('HMGET', holds_key, unpack(ids))
  local sum = 0
  for i = 1, #amounts do sum = sum + tonumber(amounts[i] or '0') end
  return sum, #ids
end

local function check_hold_keys(prefix, account_id)
  if KEYS[4] ~= prefix .. 'h:' .. account_id then return invalid('KEYS[4]', 'not the holds of this account') end
  if KEYS[5] ~= prefix .. 'hx:' .. account_id then return invalid('KEYS[5]', 'not the hold expiries of this account') end
  return nil
end

-- A partition exists once its journal stream exists (created by Ledger.init or
-- restore). A Redis that lost its data has no streams: refuse to invent balances.
local function initialized(jkey)
  return redis.call('EXISTS', jkey) == 1
end

local NOT_INITIALIZED = {'NOT_INITIALIZED', '0', 0, ''}

-- A decline (nothing applied) is stored only in an initialized partition; the applied
-- paths learn it from append_entry instead.
local function decline(jkey, txn_key, fingerprint, ttl_s, status, balance)
  if not initialized(jkey) then return NOT_INITIALIZED end
  return decide(txn_key, fingerprint, ttl_s, status, balance)
end
