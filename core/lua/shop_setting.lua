--[[
shop_setting: set (or remove) one shop setting of a partition: the spending order and
the balance cap, which the balance scripts read from the partition's own 'cfg' hash (so
they stay in one slot), and the top-up promotions (kept on partition 0 only).
Settings: spend_order: principal_first | bonus_first | proportional; balance_cap: minor
units; member_pin_above: minor units (0 allowed), charges above it need the member's
payment PIN when the member has one (read by the gateway; set on every partition);
offline_member_limit: minor units, the most one till may sell one member offline in one
window (offline_deduct.lua enforces it at settlement); offline_till_budget: minor units,
the most one till may sell offline in all (the till and the gateway's settlement check);
offline_max_duration_s: seconds (1 .. 86400), how long a till may sell offline, and the
window of offline_member_limit (all three set on every partition);
promo:<id>: '<min_minor>:<bonus_minor>', or with dates (epoch ms, 0: none)
'<min_minor>:<bonus_minor>:<starts_ms>:<ends_ms>'. SETTING_NOT_FOUND: removing what is not
set. Journaled as kind 'setting' (acct 'shop', amt 0, bal 0, fields set, val).
KEYS[1] the partition's settings hash (<prefix>cfg)
KEYS[2] txn record
KEYS[3] journal
ARGV[1] txn_id (partitions after the first: the ledger's internal id derived from it)
ARGV[2] 'shop'
ARGV[3] '0'
ARGV[4] retention_s
ARGV[5] terminal_id
ARGV[6] cashier_id
ARGV[7] name: spend_order | balance_cap | member_pin_above | offline_member_limit |
  offline_till_budget | offline_max_duration_s | promo:<id>
ARGV[8] value ('' removes the setting)
Returns {status, 0, replayed, journal_id}
Statuses: APPLIED, SETTING_NOT_FOUND
Errors: INVALID, TXN_CONFLICT, NOT_INITIALIZED
]]
--@include checks
--@include decisions
--@include journal
--@include members

local bad, prefix = check_member_request(true)
if bad then return bad end
if ARGV[2] ~= 'shop' then return invalid('account_id', "must be 'shop' for a setting") end
if ARGV[3] ~= '0' then return invalid('amount_minor', 'must be 0 for a setting') end
if KEYS[1] ~= prefix .. 'cfg' then return invalid('KEYS[1]', 'not the settings of this partition') end
local name, value = ARGV[7] or '', ARGV[8] or ''
if name == 'spend_order' then
  if value ~= '' and value ~= 'principal_first' and value ~= 'bonus_first' and value ~= 'proportional' then
    return invalid('spend_order', 'must be principal_first, bonus_first or proportional')
  end
elseif name == 'balance_cap' then
  bad = value ~= '' and check_amount(value, 'balance_cap', false, MAX_BALANCE_MINOR)
  if bad then return bad end
elseif name == 'member_pin_above' then
  bad = value ~= '' and check_amount(value, 'member_pin_above_minor', true)
  if bad then return bad end
elseif name == 'offline_member_limit' or name == 'offline_till_budget' then
  bad = value ~= '' and check_amount(value, name .. '_minor', true)
  if bad then return bad end
elseif name == 'offline_max_duration_s' then
  if value ~= '' and (not string.match(value, '^[1-9]%d*$') or #value > 5 or tonumber(value) > 86400) then
    return invalid('offline_max_duration_s', 'must be a whole number of seconds, 1 to 86400')
  end
elseif string.match(name, '^promo:[A-Za-z0-9._-]+$') and #name <= 70 then
  if value ~= '' then
    local min, bonus = string.match(value, '^([0-9]+):([0-9]+)$')
    local starts, ends
    if not min then      -- with dates: from starts (ms, 0 = always) until before ends (0 = no end)
      min, bonus, starts, ends = string.match(value, '^([0-9]+):([0-9]+):([0-9]+):([0-9]+)$')
    end
    bad = (not min and invalid('promotion', 'must be <min_minor>:<bonus_minor>[:<starts_ms>:<ends_ms>]'))
       or check_amount(min, 'min_minor', false) or check_amount(bonus, 'bonus_minor', false)
       or (starts and (#starts > 15 or #ends > 15) and invalid('promotion', 'dates are epoch milliseconds'))
       or (starts and tonumber(ends) ~= 0 and tonumber(ends) <= tonumber(starts)
           and invalid('ends_ms', 'must be after the start'))
    if bad then return bad end
  end
else
  return invalid('setting', 'must be spend_order, balance_cap, member_pin_above, offline_member_limit, '
                 .. 'offline_till_budget, offline_max_duration_s or promo:<id>')
end
local cfg_key, txn_key, jkey, txn_id, ttl_s = KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[4]
local fp = 'setting|' .. name .. '|' .. value

local prior = replay(txn_key, fp)
if prior then return prior end
if not initialized(jkey) then return NOT_INITIALIZED end

if value == '' then
  if redis.call('HDEL', cfg_key, name) == 0 then return decide(txn_key, fp, ttl_s, 'SETTING_NOT_FOUND', 0) end
else
  redis.call('HSET', cfg_key, name, value)
end
local jid = journal(jkey, cfg_key, txn_id, 'setting', 'shop', 0, 0, '', {'set', name, 'val', value})
return decide(txn_key, fp, ttl_s, 'APPLIED', 0, jid)
