--[[
Journal entries: every applied change is one entry of the partition's journal stream
(KEYS[3] of most scripts), which the reconcile service copies to the database of record.

Encoding version 1 (docs/ledger.md "Journal entry encoding", core/journal_codec.py): one
stream field 'j1' = txn|kind|acct|amt|bal|term|cash|orig, then each extra name|value
pair, names and values escaped ('%' -> '%25', '|' -> '%7C'). One field instead of 8-12
name/value pairs: XADD parses and stores a fraction of the arguments (issue 30).
]]
--@include common

local JOURNAL_FIELD = 'j1'
local JOURNAL_ESCAPES = {['%'] = '%25', ['|'] = '%7C'}

-- '|' and the extra name/value pairs ('' when none), each escaped only when one of them
-- holds '%' or '|' (names, JSON): the common extras (digits, a method) cost one scan of
-- them all and no gsub (a gsub per value cost a hold 11k instructions, issue 30).
local function journal_extras(extra)
  if not extra then return '' end
  local n = #extra
  if n == 0 then return '' end
  for i = 1, n do
    if type(extra[i]) ~= 'string' then      -- a number: exact digits (concat would use %.14g)
      local copy = {}
      for j = 1, n do copy[j] = type(extra[j]) == 'string' and extra[j] or int_str(extra[j]) end
      extra = copy
      break
    end
  end
  if not string.find(table.concat(extra), '[%%|]') then return '|' .. table.concat(extra, '|') end
  local out = {}
  for i = 1, n do out[i] = (string.gsub(extra[i], '[%%|]', JOURNAL_ESCAPES)) end
  return '|' .. table.concat(out, '|')
end

-- The encoded entry, every field escaped (the scripts off the hot path, whose fields
-- may not be checked ids).
local function journal_entry(txn_id, kind, account_id, signed_amount, balance_after, term, cash,
                             original_txn_id, extra)
  return journal_extras({txn_id, kind, account_id, int_str(signed_amount), int_str(balance_after),
                         term or '', cash or '', original_txn_id or ''}):sub(2) .. journal_extras(extra)
end

-- Append the journal entry of an applied change and remember it on `acct_key` (field
-- lj): the scripts off the hot paths, whose txn or account may not be the call's
-- (expire_holds, the card scripts). `extra` is an optional flat list of more field,
-- value pairs (open/restore: name). The balance scripts use append_entry.
local function journal(jkey, acct_key, txn_id, kind, account_id, signed_amount, balance_after,
                       original_txn_id, extra)
  local id = redis.call('XADD', jkey, '*', JOURNAL_FIELD,
    journal_entry(txn_id, kind, account_id, signed_amount, balance_after, ARGV[5], ARGV[6],
                  original_txn_id, extra))
  redis.call('HSET', acct_key, 'lj', id)
  return id
end

-- The journal entry of an applied balance change of the call's account (ARGV[1] txn,
-- ARGV[2] account, ARGV[5]/[6] terminal/cashier: ids the script checked, so never a
-- '|' to escape), as the call's first write. NOMKSTREAM: a partition without its stream
-- (a Redis that lost its data) gets nothing and the answer is nil, for the caller's
-- NOT_INITIALIZED; so the hot paths need no EXISTS of the stream. `signed_amount`,
-- `balance_after`: exact digits. `extra`: a flat list of name, value pairs (journal_extras),
-- or those pairs already encoded ('|name|value...', nothing to escape: digits and fixed
-- names, hold.lua), which skips journal_extras' table and scan. Then the caller sets
-- balance and last journal id in one HSET (set_balance).
-- No time field: an entry's time is its stream id's milliseconds (XADD '*' takes them
-- from Redis's clock, never going back), so no call pays a TIME for its journal entry.
local function append_entry(jkey, kind, signed_amount, balance_after, original_txn_id, extra)
  if type(signed_amount) ~= 'string' then signed_amount = int_str(signed_amount) end
  if type(balance_after) ~= 'string' then balance_after = int_str(balance_after) end
  local entry = ARGV[1] .. '|' .. kind .. '|' .. ARGV[2] .. '|' .. signed_amount .. '|' .. balance_after
    .. '|' .. (ARGV[5] or '') .. '|' .. (ARGV[6] or '') .. '|' .. (original_txn_id or '')
  if extra then
    if type(extra) == 'string' then entry = entry .. extra else entry = entry .. journal_extras(extra) end
  end
  return redis.call('XADD', jkey, 'NOMKSTREAM', '*', JOURNAL_FIELD, entry)
end
