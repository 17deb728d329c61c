--[[
Journal entries: every applied change is one entry of the partition's journal stream
(KEYS[3] of most scripts), which the reconcile service copies to the database of record.
]]
--@include common

-- Append the journal entry of an applied change and remember it on `acct_key` (field
-- lj): the scripts off the hot paths, whose txn or account may not be the call's
-- (expire_holds, the card scripts). `extra` is an optional flat list of more field,
-- value pairs (open/restore: name). The balance scripts use append_entry.
local function journal(jkey, acct_key, txn_id, kind, account_id, signed_amount, balance_after,
                       original_txn_id, extra)
  local fields = {'txn', txn_id, 'kind', kind, 'acct', account_id,
    'amt', int_str(signed_amount), 'bal', int_str(balance_after),
    'term', ARGV[5] or '', 'cash', ARGV[6] or '',
    'orig', original_txn_id or ''}
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
