--[[
chain_anchor: keep a copy of a partition's chain head outside the database of record
(issue 25 item 9). The reconcile service calls it after each batch's COMMIT with the
book's new head (chain_seq and row hash of the partition's last row); the anchor only
moves forward (a slower consumer's older head never replaces a newer one), so a book
whose head is found behind its anchor lost its tail. Not journaled: the anchor is
evidence about the book, not a change of the ledger. Runs on a full Redis too (allow-oom:
one small hash per partition), so the drain's anchors keep up while Redis refuses sales.
KEYS[1] the partition's chain anchor (<prefix>anchor)
ARGV[1] chain_seq of the head (a whole number, 1 or more)
ARGV[2] row hash of the head (64 lower-case hex digits)
Returns {status, anchored chain_seq, 0, ''}
Statuses: APPLIED
Errors: INVALID
]]
--@include checks
--@flags allow-oom

local seq, hash = ARGV[1], ARGV[2]
if type(seq) ~= 'string' or #seq > 18 or not string.match(seq, '^[1-9]%d*$') then
  return invalid('chain_seq', 'must be a positive whole number')
end
if type(hash) ~= 'string' or not string.match(hash, '^' .. string.rep('[0-9a-f]', 64) .. '$') then
  return invalid('row_hash', 'must be 64 lower-case hex digits')
end
if not string.match(KEYS[1] or '', '^cs:{[^}]+}:anchor$') then
  return invalid('KEYS[1]', 'not the chain anchor of a partition')
end
local stored = redis.call('HGET', KEYS[1], 'seq')
if stored and tonumber(stored) >= tonumber(seq) then return {'APPLIED', tonumber(stored), 0, ''} end
redis.call('HSET', KEYS[1], 'seq', seq, 'hash', hash, 'ms', redis.call('TIME')[1] .. '000')
return {'APPLIED', tonumber(seq), 0, ''}
