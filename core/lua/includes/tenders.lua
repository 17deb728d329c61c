--[[
The tenders of a split-tender sale (sale.lua, tender_refund.lua): '<method>:<minor>'
joined by ';', each method at most once, in the order of TENDER_METHODS (the till's
payment methods, core/sales.py TENDER_METHODS and core/members.py PAYMENT_METHODS).
]]
--@include checks

local TENDER_METHODS = {'cash', 'wechat', 'alipay', 'bank_card', 'other'}
local TENDER_RANK = {cash = 1, wechat = 2, alipay = 3, bank_card = 4, other = 5}
local MAX_TENDERS_LEN = 200

local function check_tender_method(method)
  if type(method) ~= 'string' or not TENDER_RANK[method] then
    return invalid('method', 'must be one of ' .. table.concat(TENDER_METHODS, ', '))
  end
  return nil
end

-- The tenders as a list of {method, amount}, or nil and an INVALID reply naming the field.
local function parse_tenders(text)
  if type(text) ~= 'string' or text == '' or #text > MAX_TENDERS_LEN then
    return nil, invalid('tenders', 'at least one tender besides the card')
  end
  local out, last_rank = {}, 0
  for part in string.gmatch(text .. ';', '([^;]*);') do
    local method, amount = string.match(part, '^([a-z_]+):(%d+)$')
    if not method then return nil, invalid('tenders', 'each tender is <method>:<minor units>') end
    local rank = TENDER_RANK[method]
    if not rank then return nil, invalid('tenders', 'unknown method ' .. method) end
    if rank <= last_rank then return nil, invalid('tenders', 'each method once, in the order ' .. table.concat(TENDER_METHODS, ', ')) end
    local bad = check_amount(amount, 'tenders')
    if bad then return nil, bad end
    last_rank = rank
    out[#out + 1] = {method, tonumber(amount)}
  end
  return out, nil
end

-- The amount of `method` among parsed tenders, or nil.
local function tender_amount(parsed, method)
  for _, t in ipairs(parsed) do
    if t[1] == method then return t[2] end
  end
  return nil
end
