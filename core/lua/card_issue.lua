--[[
card_issue: make card_no a credential of an account (a new card, or a replacement after
card_block: 挂失 + 补卡 moves no money). A card number is issued once, for good.
CARD_IN_USE: issued already, or another account's id; CARD_NO_IS_PHONE: another member's
phone (card numbers, account ids and phones share the till's one look-up, so none may be
another member's); CARD_BLOCKED: blocked numbers are never reissued. Journaled as kind
'card_issue', amt 0, bal 0, field card. The account's own card list (cards.lua) is written
by the ledger once this answers APPLIED.
KEYS[1] card hash (<prefix>c:<card_no>)
KEYS[2] txn record
KEYS[3] journal of the card's partition
KEYS[4] the account hash whose id equals card_no (same slot as the card: a number that is
  another account's id is refused, so an account id scanned as a card stays unambiguous)
KEYS[5] the partition's card map (<prefix>cards: card_no -> account_id)
KEYS[6] the phone index of the card's partition (<prefix>ph: phone -> account id)
KEYS[7] the account's hash, only when the account lives in the card's partition (always on a
  standalone Redis); otherwise the ledger checked that it exists before calling
ARGV[1] txn_id
ARGV[2] account_id
ARGV[3] '0'
ARGV[4] retention_s
ARGV[5] terminal_id
ARGV[6] cashier_id
ARGV[7] card_no
ARGV[8] (without KEYS[7]) the ledger's finding on the account: '' (active), ACCOUNT_NOT_FOUND or
  ACCOUNT_CLOSED; a decline is stored like any other, so a retry answers it again even
  after the account appears (one txn id, one decision)
Returns {status, 0, replayed, journal_id}
Statuses: APPLIED, CARD_IN_USE, CARD_NO_IS_PHONE, CARD_BLOCKED, ACCOUNT_NOT_FOUND, ACCOUNT_CLOSED
Errors: INVALID, TXN_CONFLICT, NOT_INITIALIZED
]]
--@include checks
--@include decisions
--@include journal
--@include accounts
--@include members

local bad, prefix = check_member_request(false)
if bad then return bad end
local account_id, card_no = ARGV[2], ARGV[7]
bad = check_id(account_id, 'account_id') or check_id(card_no, 'card_no')
if bad then return bad end
if ARGV[3] ~= '0' then return invalid('amount_minor', 'must be 0 for card_issue') end
if KEYS[1] ~= prefix .. 'c:' .. card_no then return invalid('KEYS[1]', 'not the key of this card') end
if KEYS[4] ~= prefix .. 'a:' .. card_no then return invalid('KEYS[4]', 'not the account key of card_no') end
if KEYS[5] ~= prefix .. 'cards' then return invalid('KEYS[5]', 'not the card map of this partition') end
if KEYS[6] ~= prefix .. 'ph' then return invalid('KEYS[6]', 'not the phone index of this partition') end
if KEYS[7] and KEYS[7] ~= prefix .. 'a:' .. account_id then return invalid('KEYS[7]', 'not the key of this account') end
local found = ARGV[8] or ''
if found ~= '' and (KEYS[7] or (found ~= 'ACCOUNT_NOT_FOUND' and found ~= 'ACCOUNT_CLOSED')) then
  return invalid('ARGV[8]', 'ACCOUNT_NOT_FOUND or ACCOUNT_CLOSED, and only without KEYS[7]')
end
local card_key, txn_key, jkey, txn_id, ttl_s = KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[4]
local fp = 'card_issue|' .. account_id .. '|' .. card_no

local prior = replay(txn_key, fp)
if prior then return prior end
if not initialized(jkey) then return NOT_INITIALIZED end

if found ~= '' then return decide(txn_key, fp, ttl_s, found, 0) end
if KEYS[7] then
  local _, refused = account_of(KEYS[7])
  if refused then return decide(txn_key, fp, ttl_s, refused, 0) end
end
local st = redis.call('HGET', card_key, 'st')
if st == 'blocked' then return decide(txn_key, fp, ttl_s, 'CARD_BLOCKED', 0) end
if st then return decide(txn_key, fp, ttl_s, 'CARD_IN_USE', 0) end
if card_no ~= account_id and redis.call('EXISTS', KEYS[4]) == 1 then
  return decide(txn_key, fp, ttl_s, 'CARD_IN_USE', 0)
end
local phone_owner = redis.call('HGET', KEYS[6], card_no)
if phone_owner and phone_owner ~= account_id then return decide(txn_key, fp, ttl_s, 'CARD_NO_IS_PHONE', 0) end

redis.call('HSET', card_key, 'a', account_id, 'st', 'active', 'ti', now_ms())
redis.call('HSET', KEYS[5], card_no, account_id)
local jid = journal(jkey, card_key, txn_id, 'card_issue', account_id, 0, 0, '', {'card', card_no})
return decide(txn_key, fp, ttl_s, 'APPLIED', 0, jid)
