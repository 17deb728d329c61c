--[[
card_restore: bring back a card record that Redis lost, from the database of record
(reconcile-service restore). Never overwrites a card Redis holds; not journaled (the
database already has the card's card_issue / card_block entries). CARD_IN_USE: Redis
holds the card already.
KEYS[1] card hash
KEYS[2] the partition's card map
ARGV[1] card_no
ARGV[2] account_id
ARGV[3] status ('active' | 'blocked')
ARGV[4] reason ('' when active)
Returns {status, 0, 0, ''}
Statuses: APPLIED, CARD_IN_USE
Errors: INVALID
]]
--@include checks

local card_no, account_id, st, reason = ARGV[1], ARGV[2], ARGV[3], ARGV[4] or ''
local bad = check_id(card_no, 'card_no') or check_id(account_id, 'account_id')
if bad then return bad end
if st ~= 'active' and st ~= 'blocked' then return invalid('status', 'must be active or blocked') end
local prefix = string.match(KEYS[1] or '', '^(.*)c:')
if not prefix or KEYS[1] ~= prefix .. 'c:' .. card_no then return invalid('KEYS[1]', 'not the key of this card') end
if KEYS[2] ~= prefix .. 'cards' then return invalid('KEYS[2]', 'not the card map of this partition') end
if redis.call('EXISTS', KEYS[1]) == 1 then return {'CARD_IN_USE', 0, 0, ''} end
redis.call('HSET', KEYS[1], 'a', account_id, 'st', st)
if st == 'blocked' then redis.call('HSET', KEYS[1], 'br', reason) end
redis.call('HSET', KEYS[2], card_no, account_id)
return {'APPLIED', 0, 0, ''}
