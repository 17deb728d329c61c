--[[
identity: the identity strings of the till's one look-up (card numbers, account ids,
phones), kept in the slot of each string: a phone in the phone index of partition_of(phone)
(<prefix>ph: phone -> account id), a card in the cards of its account (<prefix>ac:<account_id>).
No money, not journaled: rebuilt from the accounts and cards by Ledger.rebuild_member_index.
Mode 'claim': claim a phone for an account opening in another partition (open_account.lua
takes the finding): PHONE_TAKEN when it is another member's phone, a card number or another
account's id. Mode 'index': record an account's phone unless another member holds it
(restore, rebuild; PHONE_TAKEN: left as it is, reported). Mode 'release': drop a claim of
this account (an open that was declined after the claim). Mode 'card': record a card in its
account's card list: 'active' never replaces 'blocked'; 'blocked' always wins.
KEYS[1] claim, index, release: the phone index of the phone's partition; card: the account's cards
KEYS[2] claim: the account hash of the phone (<prefix>a:<phone>)
KEYS[3] claim: the card hash of the phone (<prefix>c:<phone>)
ARGV[1] mode: 'claim' | 'index' | 'release' | 'card'
ARGV[2] the phone (claim, index, release) or the card number (card)
ARGV[3] account_id
ARGV[4] card: 'active' | 'blocked'
Returns {status, 0, 0, ''}
Statuses: APPLIED, PHONE_TAKEN
Errors: INVALID
]]
--@include members

local mode, value, account_id = ARGV[1], ARGV[2] or '', ARGV[3]
local bad = check_id(account_id, 'account_id')
if bad then return bad end
if mode == 'card' then
  local prefix = string.match(KEYS[1] or '', '^(.*)ac:')
  bad = check_id(value, 'card_no') or ((not prefix or KEYS[1] ~= prefix .. 'ac:' .. account_id)
    and invalid('KEYS[1]', 'not the card list of this account'))
  if bad then return bad end
  local st = ARGV[4]
  if st == 'blocked' then redis.call('HSET', KEYS[1], value, 'blocked')
  elseif st == 'active' then redis.call('HSETNX', KEYS[1], value, 'active')
  else return invalid('state', 'must be active or blocked') end
  return {'APPLIED', 0, 0, ''}
end
local prefix = string.match(KEYS[1] or '', '^(.*)ph$')
if not prefix then return invalid('KEYS[1]', 'not a phone index') end
bad = value == '' and invalid('phone', 'must not be empty') or check_phone(value)
if bad then return bad end
local owner = redis.call('HGET', KEYS[1], value)
if mode == 'claim' then
  if KEYS[2] ~= prefix .. 'a:' .. value or KEYS[3] ~= prefix .. 'c:' .. value then
    return invalid('KEYS', 'not the account and card keys of the phone')
  end
  if owner == account_id then return {'APPLIED', 0, 0, ''} end
  if owner or (value ~= account_id and redis.call('EXISTS', KEYS[2]) == 1) or redis.call('EXISTS', KEYS[3]) == 1 then
    return {'PHONE_TAKEN', 0, 0, ''}
  end
  redis.call('HSET', KEYS[1], value, account_id)
  return {'APPLIED', 0, 0, ''}
elseif mode == 'index' then
  if owner and owner ~= account_id then return {'PHONE_TAKEN', 0, 0, ''} end
  redis.call('HSET', KEYS[1], value, account_id)
  return {'APPLIED', 0, 0, ''}
elseif mode == 'release' then
  if owner == account_id then redis.call('HDEL', KEYS[1], value) end
  return {'APPLIED', 0, 0, ''}
end
return invalid('mode', 'must be claim, index, release or card')
