--[[
card_block: stop a card (lost, damaged, stolen, other). The account and its money stay;
issue a new card to it with card_issue. An account id used as a card (cards printed
before the member layer) can be blocked too: the block is recorded on that number.
CARD_BLOCKED: blocked already. Journaled as kind 'card_block' (acct = the card's account,
amt 0, bal 0, fields card, rsn).
KEYS[1] card hash
KEYS[2] txn record
KEYS[3] journal of the card's partition
KEYS[4] the account hash whose id equals card_no
KEYS[5] the partition's card map
ARGV[1] txn_id
ARGV[2] unused ('')
ARGV[3] '0'
ARGV[4] retention_s
ARGV[5] terminal_id
ARGV[6] cashier_id
ARGV[7] card_no
ARGV[8] reason
Returns {status, 0, replayed, journal_id}
Statuses: APPLIED, CARD_NOT_FOUND, CARD_BLOCKED
Errors: INVALID, TXN_CONFLICT, NOT_INITIALIZED
]]
--@include checks
--@include decisions
--@include journal
--@include members

local bad, prefix = check_member_request(false)
if bad then return bad end
local card_no, reason = ARGV[7], ARGV[8]
bad = check_id(card_no, 'card_no')
if bad then return bad end
if ARGV[3] ~= '0' then return invalid('amount_minor', 'must be 0 for card_block') end
if reason ~= 'lost' and reason ~= 'damaged' and reason ~= 'stolen' and reason ~= 'other' then
  return invalid('reason', 'must be lost, damaged, stolen or other')
end
if KEYS[1] ~= prefix .. 'c:' .. card_no then return invalid('KEYS[1]', 'not the key of this card') end
if KEYS[4] ~= prefix .. 'a:' .. card_no then return invalid('KEYS[4]', 'not the account key of card_no') end
if KEYS[5] ~= prefix .. 'cards' then return invalid('KEYS[5]', 'not the card map of this partition') end
local card_key, txn_key, jkey, txn_id, ttl_s = KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[4]
local fp = 'card_block|' .. card_no .. '|' .. reason

local prior = replay(txn_key, fp)
if prior then return prior end
if not initialized(jkey) then return NOT_INITIALIZED end

local card = redis.call('HMGET', card_key, 'a', 'st')
local account_id = card[1]
if not account_id then
  if redis.call('EXISTS', KEYS[4]) == 0 then return decide(txn_key, fp, ttl_s, 'CARD_NOT_FOUND', 0) end
  account_id = card_no                       -- the account's own id, used as its card
  redis.call('HSET', KEYS[5], card_no, account_id)
elseif card[2] == 'blocked' then
  return decide(txn_key, fp, ttl_s, 'CARD_BLOCKED', 0)
end

redis.call('HSET', card_key, 'a', account_id, 'st', 'blocked', 'br', reason, 'bt', now_ms())
local jid = journal(jkey, card_key, txn_id, 'card_block', account_id, 0, 0, '',
                    {'card', card_no, 'rsn', reason})
return decide(txn_key, fp, ttl_s, 'APPLIED', 0, jid)
