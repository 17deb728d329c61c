--[[
Two buckets per account (issue 14): principal (money the member paid, owed back on
退卡) and bonus (top-up promotions: spendable, never paid out). The account hash keeps
bal = principal + bonus (what every availability check reads, unchanged) and bo = the
bonus (absent = 0), so principal = bal - bo. A deduction or capture takes from the
buckets in the shop's spending order (the partition's settings hash, field
spend_order: principal_first (default), bonus_first, proportional) and its txn record
keeps what it took from the bonus ('tb', absent = 0; the principal part is the rest), so
a refund gives back to each bucket what the original took, partial refunds in
proportion, exact in integers. Journal fields pd / bd (signed deltas) are written only
when the bonus is involved: absent means pd = amt, bd = 0.
]]
--@include common

-- floor(a * b / c), exact, for whole numbers 0 <= a, b <= 1e15 and 1 <= c <= 1e15 with a
-- result <= 1e15: a*b (up to 1e30) has no exact double, so the double estimate is
-- corrected with the exact remainder a*b - q*c, computed in base-1e7 limbs.
local LIMB = 10000000

local function limbs(x)
  local l0 = x % LIMB
  local rest = (x - l0) / LIMB
  local l1 = rest % LIMB
  return {l0, l1, (rest - l1) / LIMB}
end

local function product(x, y)
  local a, b = limbs(x), limbs(y)
  local p = {0, 0, 0, 0, 0}
  for i = 1, 3 do
    for j = 1, 3 do p[i + j - 1] = p[i + j - 1] + a[i] * b[j] end   -- each < 3e14: exact
  end
  return p
end

local EXACT = 9007199254740992             -- 2^53

local function muldiv_floor(a, b, c)
  if a == 0 or b == 0 then return 0 end
  local q = math.floor(a * b / c)
  -- a*b below 2^53 is exact, and then so is the floor of its quotient (the distance to
  -- the next integer, at least 1/c, is more than half a unit of the quotient's last place)
  if a * b < EXACT then return q end
  local p, s = product(a, b), product(q, c)
  local carry, d = 0, {}
  for i = 1, 5 do
    local v = p[i] - s[i] + carry
    local low = v % LIMB                      -- Lua's % is floored: 0 <= low < LIMB
    carry = (v - low) / LIMB
    d[i] = low
  end
  local e = carry                             -- the remainder a*b - q*c, small: exact
  for i = 5, 1, -1 do e = e * LIMB + d[i] end
  while e < 0 do q = q - 1; e = e + c end
  while e >= c do q = q + 1; e = e - c end
  return q
end

local SPEND_ORDERS = {principal_first = true, bonus_first = true, proportional = true}

local function check_settings_key(key, prefix)
  if key and key ~= prefix .. 'cfg' then return invalid('KEYS', 'not the settings of this partition') end
  return nil
end

-- (principal taken, bonus taken) for a deduction of `amount` (<= balance) from an
-- account holding `balance` of which `bonus` is bonus.
local function split_take(amount, balance, bonus, cfg_key)
  if bonus <= 0 then return amount, 0 end
  local order = cfg_key and redis.call('HGET', cfg_key, 'spend_order') or 'principal_first'
  if not SPEND_ORDERS[order] then order = 'principal_first' end
  local take_b
  if order == 'bonus_first' then
    take_b = math.min(amount, bonus)
  elseif order == 'proportional' then
    take_b = muldiv_floor(amount, bonus, balance)
  else
    take_b = math.max(0, amount - (balance - bonus))
  end
  return amount - take_b, take_b
end

-- (principal given back, bonus given back) for a refund of `amount` of an original that
-- took `original` in all, `taken_b` of it from the bonus, `refunded` refunded before: the
-- bonus given back so far is always floor(refunded_total * taken_b / original).
local function split_refund(amount, refunded, original, taken_b)
  if taken_b <= 0 then return amount, 0 end
  local give_b = muldiv_floor(refunded + amount, taken_b, original) - muldiv_floor(refunded, taken_b, original)
  return amount - give_b, give_b
end

-- Journal fields of the bucket deltas, or nil when only the principal moved.
local function bucket_fields(delta_p, delta_b, extra)
  if delta_b == 0 then return extra end
  local out = {'pd', int_str(delta_p), 'bd', int_str(delta_b)}
  if extra then for i = 1, #extra do out[#out + 1] = extra[i] end end
  return out
end
