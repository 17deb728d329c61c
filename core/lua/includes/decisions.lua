--[[
The idempotency record of a txn id (KEYS[2] of most scripts: 't:<txn_id>'): the first
decision for a txn id is stored, and every retry is answered with it (replayed = 1).

The reply of a decision is one string, 'status|balance|replayed|detail' (issue 30: one
bulk string costs Redis less than a 4-element array; core/runner.py decode takes both
shapes). detail is last, so it may hold '|' (a TXN_CONFLICT's fingerprint). A script
that answers more than the decision (close_account) turns it into the array first
(decision_table) and appends to that.
]]
--@include common

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
  if rec[1] ~= fingerprint then return 'TXN_CONFLICT' .. '|0|0|' .. rec[1] end
  return status_of(rec[2]) .. '|' .. rec[3] .. '|1|' .. (rec[4] or '')
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
  return status .. '|' .. b .. '|0|' .. journal_id
end

-- A decision reply (the string above, or an array a script built) as the 4-element
-- array {status, balance, replayed, detail}, for a script that appends to it.
local function decision_table(reply)
  if type(reply) ~= 'string' then return reply end
  local status, balance, replayed, detail = string.match(reply, '^([^|]*)|([^|]*)|([^|]*)|(.*)$')
  return {status, balance, tonumber(replayed), detail}
end

-- A partition exists once its journal stream exists (created by Ledger.init or
-- restore). A Redis that lost its data has no streams: refuse to invent balances.
local function initialized(jkey)
  return redis.call('EXISTS', jkey) == 1
end

local NOT_INITIALIZED = 'NOT_INITIALIZED' .. '|0|0|'   -- (the status a literal of its own)

-- A decline (nothing applied) is stored only in an initialized partition; the applied
-- paths learn it from append_entry instead.
local function decline(jkey, txn_key, fingerprint, ttl_s, status, balance)
  if not initialized(jkey) then return NOT_INITIALIZED end
  return decide(txn_key, fingerprint, ttl_s, status, balance)
end
