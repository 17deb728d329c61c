--[[
xfer_out: the first half of an internal transfer between two sub-balances of one
account (root 'A' or shards 'A#k'), which live in different slots. Takes the amount
from the source and leaves a durable in-flight record in the source's slot; xfer_in.lua
adds it to the destination. The ledger's settle step completes any transfer whose
second half a crash left undone (Ledger.settle_transfers). Money in flight is counted
by Ledger.balance(), so the account's total never dips.
KEYS[1] source account hash   KEYS[2] transfer record (t:<xfer_id>, source slot)
KEYS[3] source journal   KEYS[4] holds of the source   KEYS[5] hold expiries of the source
KEYS[6] in-flight hash of the source (x:<source_id>: xfer_id -> 'amount|dest_id|ms')
ARGV[1] xfer_id ('#' + 24 hex)  ARGV[2] source id  ARGV[3] amount_minor  ARGV[4] retention_s
ARGV[5] '' ARGV[6] ''  ARGV[7] destination id  ARGV[8] root account id
ARGV[9] origin txn id (the deduction, split or merge that asked for it; may be internal)
Only the source's *available* balance (balance - active holds) can leave.
Returns {status, balance_minor (source after), replayed, journal_id}; statuses:
APPLIED, INSUFFICIENT_FUNDS, ACCOUNT_NOT_FOUND (all stored under the xfer id).
Journaled as kind 'xfer_out', txn '<xfer_id>.out', amt -amount, with root, peer
(= destination), xfer (= xfer id).
]]
--@include common

local xfer_id, src, dst, root, origin = ARGV[1], ARGV[2], ARGV[7], ARGV[8], ARGV[9] or ''
local bad = check_internal_id(xfer_id, 'xfer_id') or check_account(src, 'source')
  or check_account(dst, 'destination') or check_id(root, 'root')
  or check_amount(ARGV[3], 'amount_minor', false, MAX_BALANCE_MINOR) or check_ttl(ARGV[4])
if bad then return bad end
if src == dst then return invalid('destination', 'must differ from the source') end
if (root_of(src) or src) ~= root or (root_of(dst) or dst) ~= root then
  return invalid('root', 'source and destination must be sub-balances of the root account')
end
if origin ~= '' and check_id(origin, 'origin') and check_internal_id(origin, 'origin') then
  return invalid('origin', 'not a txn id')
end
local jkey = KEYS[3]
local prefix = string.sub(jkey or '', 1, -2)
if string.sub(jkey or '', -1) ~= 'j' then return invalid('KEYS[3]', 'not a journal key') end
bad = check_keys(prefix, KEYS[1], KEYS[2], src, xfer_id) or check_hold_keys(prefix, src)
if bad then return bad end
if KEYS[6] ~= prefix .. 'x:' .. src then return invalid('KEYS[6]', 'not the in-flight hash of the source') end
local acct_key, txn_key, ttl_s, amount = KEYS[1], KEYS[2], ARGV[4], tonumber(ARGV[3])
local fp = 'xfer|' .. src .. '|' .. dst .. '|' .. ARGV[3]

local prior = replay(txn_key, fp)
if prior then return prior end
if not initialized(jkey) then return NOT_INITIALIZED end
local bal = redis.call('HGET', acct_key, 'bal')
if not bal then return decide(txn_key, fp, ttl_s, 'ACCOUNT_NOT_FOUND', 0) end
local now = now_ms()
local held = active_holds(KEYS[4], KEYS[5], now)
if tonumber(bal) - held < amount then return decide(txn_key, fp, ttl_s, 'INSUFFICIENT_FUNDS', tonumber(bal)) end

local after = redis.call('HINCRBY', acct_key, 'bal', -amount)
redis.call('HSET', KEYS[6], xfer_id, ARGV[3] .. '|' .. dst .. '|' .. now)
local jid = journal(jkey, acct_key, xfer_id .. '.out', 'xfer_out', src, -amount, after, origin, nil, nil,
                    {'root', root, 'peer', dst, 'xfer', xfer_id})
return decide(txn_key, fp, ttl_s, 'APPLIED', after, jid)
