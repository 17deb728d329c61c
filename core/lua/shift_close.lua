--[[
shift_close: journal a terminal's Z record (one closed shift; moves no money, amount 0).
Journal entry: kind 'shift_close', acct '~' (no account), amt 0, bal 0, term, cash,
shift, by, opened, z. Idempotent by txn id like every script: the same request again
replays the first decision; another request under the same txn id is TXN_CONFLICT.
KEYS[1] txn record
KEYS[2] journal of the terminal's partition
ARGV[1] txn_id
ARGV[2] terminal_id
ARGV[3] shift number (1..1e12)
ARGV[4] retention_s
ARGV[5] cashier_id ('' if none)
ARGV[6] closed_by
ARGV[7] opened at (ms, '' if unknown)
ARGV[8] the totals, a JSON object of whole numbers (at most 4096 bytes)
Returns {status, 0, replayed, journal_id}
Statuses: APPLIED
Errors: INVALID, TXN_CONFLICT, NOT_INITIALIZED
]]
--@include checks
--@include decisions
--@include journal

-- core/shifts.py has the same limits (tests/core/test_limits.py)
local MAX_Z_BYTES = 4096
local MAX_SHIFT_NO = 1000000000000
local MAX_TOTAL = 1000000000000000

local txn_key, jkey = KEYS[1], KEYS[2]
local txn_id, terminal_id, shift_no, ttl_s = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local cashier_id, closed_by, opened, z = ARGV[5], ARGV[6], ARGV[7], ARGV[8]

if type(jkey) ~= 'string' or string.sub(jkey, -1) ~= 'j' then return invalid('KEYS[2]', 'not a journal key') end
local prefix = string.sub(jkey, 1, -2)
local bad = check_id(txn_id, 'txn_id') or check_id(terminal_id, 'terminal_id')
    or check_ttl(ttl_s) or check_id(cashier_id, 'cashier_id', true) or check_id(closed_by, 'closed_by')
if bad then return bad end
if txn_key ~= prefix .. 't:' .. txn_id then return invalid('KEYS[1]', 'not the key of this txn_id') end
if type(shift_no) ~= 'string' or not string.match(shift_no, '^[1-9][0-9]*$') or #shift_no > 13
   or tonumber(shift_no) > MAX_SHIFT_NO then
  return invalid('shift_no', 'must be a whole number from 1 to 10^12')
end
if type(opened) ~= 'string' or (opened ~= '' and (not string.match(opened, '^[1-9][0-9]*$') or #opened > 15)) then
  return invalid('opened_ms', 'must be empty or milliseconds since the epoch')
end
if type(z) ~= 'string' or #z > MAX_Z_BYTES then return invalid('totals', 'missing or longer than 4096 bytes') end
local ok, totals = pcall(cjson.decode, z)
if not ok or type(totals) ~= 'table' or string.sub(z, 1, 1) ~= '{' then
  return invalid('totals', 'not a JSON object')
end
for name, value in pairs(totals) do
  if type(name) ~= 'string' or type(value) ~= 'number' or value ~= math.floor(value)
     or math.abs(value) > MAX_TOTAL then
    return invalid('totals', 'every total must be a whole number')
  end
end

-- the whole request, so a retry with other totals under the same txn id is a conflict
local fp = 'shift_close|' .. terminal_id .. '|' .. shift_no .. '|'
    .. redis.sha1hex(cashier_id .. '|' .. closed_by .. '|' .. opened .. '|' .. z)
local prior = replay(txn_key, fp)
if prior then return prior end
if not initialized(jkey) then return NOT_INITIALIZED end

local id = redis.call('XADD', jkey, '*', JOURNAL_FIELD,
  journal_entry(txn_id, 'shift_close', '~', 0, 0, terminal_id, cashier_id, '',
                {'shift', shift_no, 'by', closed_by, 'opened', opened, 'z', z}))
return decide(txn_key, fp, ttl_s, 'APPLIED', 0, id)
