--[[
expire_holds: journal the release of expired holds of one account and forget them.
Correctness never waits for this: an expired hold already stops counting at its expiry.
The reconcile service runs it so the database learns of every release.
Each hold still present and past its expiry is released and journaled as kind
'hold_expire', txn '@hx:' .. sha1(hold txn id) (an internal id: no client id can
equal it), orig = the hold's txn id; its record, when it still exists, is marked
expired. Others are skipped.
KEYS[1] account hash
KEYS[2] unused (pass the hold expiries again: keeps the shared layout)
KEYS[3] partition journal
KEYS[4] holds of the account
KEYS[5] hold expiries
KEYS[6..] txn records of the holds named in ARGV[7..], in the same order
ARGV[1] unused ('-')
ARGV[2] account_id
ARGV[3] unused ('0')
ARGV[4] unused
ARGV[5] terminal_id
ARGV[6] cashier_id
ARGV[7..] hold txn ids believed expired
Returns {released_count} (digits)
Statuses: none
Errors: INVALID
]]
--@include checks
--@include journal
--@include holds

local account_id = ARGV[2]
local bad = check_id(account_id, 'account_id')
if bad then return bad end
local prefix = string.sub(KEYS[3] or '', 1, -2)
if string.sub(KEYS[3] or '', -1) ~= 'j' or KEYS[1] ~= prefix .. 'a:' .. account_id then
  return invalid('KEYS', 'not the keys of this account')
end
bad = check_hold_keys(prefix, account_id)
if bad then return bad end
local now = tonumber(now_ms())
local bal = redis.call('HGET', KEYS[1], 'bal')
if not bal then return {'0'} end
local released = 0
for i = 7, #ARGV do
  local hold_txn = ARGV[i]
  local hold_key = KEYS[i - 1]
  if check_id(hold_txn, 'hold_txn_id') or hold_key ~= txn_key_of(prefix, hold_txn) then
    return invalid('KEYS[' .. int_str(i - 1) .. ']', 'not the record of hold ' .. (hold_txn or '?'))
  end
  local expiry = redis.call('ZSCORE', KEYS[5], hold_txn)
  if expiry and tonumber(expiry) <= now then
    redis.call('HDEL', KEYS[4], hold_txn)
    redis.call('ZREM', KEYS[5], hold_txn)
    if redis.call('HEXISTS', hold_key, 'hs') == 1 then redis.call('HSET', hold_key, 'hs', 'expired') end
    journal(KEYS[3], KEYS[1], '@hx:' .. redis.sha1hex(hold_txn), 'hold_expire', account_id, 0, bal, hold_txn)
    released = released + 1
  end
end
return {int_str(released)}
