--[[
The base of every ledger script: the limits, exact numbers, the INVALID reply and the
clock. The loader (core/scripts.py) pastes the includes a script names with
`--@include <name>`, each after the includes it names itself; none is sent on its own.
  common     limits, int_str, invalid, now_ms (this file)
  checks     the checks of a request's KEYS and ARGV (check_request, check_id, ...)
  decisions  the idempotency record: replay, decide, decline, NOT_INITIALIZED
  journal    journal entries: append_entry, journal
  accounts   the account hash: account_of (missing / closed), set_balance
  holds      active holds of an account
  account_status, buckets, members, resolve_hold: what a few scripts share

Conventions every script follows:
  * A header (the long comment it opens with) that is its contract: KEYS[i] and ARGV[i]
    one a line in order, then Returns, Statuses and Errors lines (parsed by
    core/scripts.py parse_header, checked against the code by tests/core/test_lua_headers.py).
  * KEYS[1] account hash, KEYS[2] idempotency record of this txn, KEYS[3] journal
    stream of the partition. All keys share one hash tag, so one slot.
  * ARGV[1] txn_id, ARGV[2] account_id, ARGV[3] amount (decimal digits),
    ARGV[4] idempotency retention in seconds, ARGV[5] terminal_id, ARGV[6] cashier_id.
  * Reply: one string 'status|balance_minor|replayed|detail' (decisions.lua; balance as exact
      decimal digits, replayed 0/1; scripts outside the decisions may answer the array
      {status, balance_minor, replayed, detail}: core/runner.py decode takes both)
      detail = journal entry id when applied, the reason when INVALID, the stored
      fingerprint on TXN_CONFLICT, '' otherwise.
  * Every number a script writes (journal fields, records, balances, scores) or returns
    goes through int_str: exact decimal digits, never Lua's tostring (14 significant
    digits: 1e+14, 1.2345678901234e+14) nor Redis's own conversion of Lua numbers.
  * Txn ids: clients use 1-64 of A-Z a-z 0-9 . _ : - (check_id). Ids the ledger makes
    itself (hold expiry, reconcile compensation, restore) start with '@', which no
    client id may contain (check_internal_id): no client id can ever equal one.
]]

-- core/validation.py has the same limits; tests/core/test_limits.py checks they are equal
local MAX_AMOUNT_MINOR = 100000000000        -- 1e11: one operation
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

-- Redis server time in ms, as exact digits: the seconds' digits, then the milliseconds
-- as 3 digits: the thousands of the microseconds (0-999999, TIME's digits), zero-padded
-- to six and cut (what '%s%03d' of seconds and microseconds / 1000 printed, without
-- string.format's cost). Read once per call: every use in one call sees the same
-- instant (the cache is keyed by the call's own ARGV table).
local now_for_argv, now_value
local function now_ms()
  if now_for_argv ~= ARGV then
    local t = redis.call('TIME')
    now_value = t[1] .. string.sub('00000' .. t[2], -6, -4)
    now_for_argv = ARGV
  end
  return now_value
end
