--[[
Cards presented with a charge (deduct.lua, hold.lua) and the account's own list of its
cards. A card record (<prefix>c:<card_no>) lives in the slot of the card number, for the
look-up; each account also keeps its cards in its own slot, <prefix>ac:<account_id>:
card_no -> 'active' | 'blocked' (written by Ledger.issue_card after the card is claimed,
and by Ledger.block_card *before* the card record is blocked; blocked never goes back), so
a charge checks the card it was presented with in the same script as the balance.
]]
--@include checks

-- nil when the card arguments are acceptable, else an INVALID reply.
local function check_presented_card(cards_key, card_no, prefix, account_id)
  if card_no == nil or card_no == '' then return nil end
  local bad = check_id(card_no, 'card_no')
  if bad then return bad end
  if cards_key ~= prefix .. 'ac:' .. account_id then return invalid('KEYS', 'not the card list of this account') end
  return nil
end

-- The part of a request's fingerprint that says which card it was presented with.
local function card_fingerprint(card_no)
  if card_no == nil or card_no == '' then return '' end
  return '|card:' .. card_no
end

-- The decline a charge presented with `card_no` gets from the card, or nil: CARD_BLOCKED
-- (reported lost or stolen), CARD_NOT_THIS_ACCOUNT (not one of the account's cards). The
-- account's own id used as its card (cards printed before the member layer) is its card
-- unless that number was blocked.
local function presented_card_refusal(cards_key, card_no, account_id)
  if card_no == nil or card_no == '' then return nil end
  local st = redis.call('HGET', cards_key, card_no)
  if st == 'blocked' then return 'CARD_BLOCKED' end
  if st == 'active' or card_no == account_id then return nil end
  return 'CARD_NOT_THIS_ACCOUNT'
end
