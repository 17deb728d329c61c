--[[
member_index: repair the member index of a partition (Ledger.rebuild_member_index). The
index is kept by the scripts that change members; this script is for an index that was
lost or damaged (a restore from an older snapshot, a hand edit). No money, not journaled.
Mode 'account' indexes one account; it answers STALE when the holder name changed
meanwhile (the caller reads again), and takes a closed account out of the index.
Mode 'sweep' removes each entry its account does not index (any more).
KEYS[1] account: the account hash; sweep: the member index
KEYS[2] account: the partition's member index; sweep: the account hash of entry ARGV[2]
KEYS[3..] sweep: the account hash of entry ARGV[i] in KEYS[i]
ARGV[1] mode: 'account' | 'sweep'
ARGV[2] account: account_id; sweep: the first index entry
ARGV[3] account: the holder name the caller computed ARGV[4] and ARGV[5] from; sweep: an entry
ARGV[4] account: the name key; sweep: an entry
ARGV[5] account: the pinyin initials; sweep: an entry
ARGV[6..] sweep: more index entries
Returns {status, count, 0, ''}: count = the entries written (account) or removed (sweep)
Statuses: APPLIED, ACCOUNT_NOT_FOUND
Errors: INVALID, STALE
]]
--@include members

local mode = ARGV[1]
if mode == 'account' then
  local prefix = string.match(KEYS[1] or '', '^(.*)a:')
  local account_id, holder, name_key, initials = ARGV[2], ARGV[3] or '', ARGV[4] or '', ARGV[5] or ''
  local bad = check_id(account_id, 'account_id') or (not prefix and invalid('KEYS[1]', 'not an account key'))
  if bad then return bad end
  if KEYS[1] ~= prefix .. 'a:' .. account_id then return invalid('KEYS[1]', 'not the key of this account') end
  bad = check_index_key(KEYS[2], prefix) or check_member_args('', name_key, initials)
  if bad then return bad end
  local m = redis.call('HMGET', KEYS[1], 'bal', 'st', 'nm', 'ph')
  if not m[1] then return {'ACCOUNT_NOT_FOUND', 0, 0, ''} end
  if (m[3] or '') ~= holder then return {'STALE', 0, 0, ''} end
  if m[2] == 'closed' then
    unindex_member(KEYS[2], KEYS[1], account_id)
    return {'APPLIED', 0, 0, ''}
  end
  index_member(KEYS[2], KEYS[1], account_id, holder, m[4] or '', name_key, initials)
  return {'APPLIED', #member_entries(account_id, m[4] or '', name_key, initials), 0, ''}
elseif mode == 'sweep' then
  local prefix = string.match(KEYS[1] or '', '^(.*)mx$')
  if not prefix then return invalid('KEYS[1]', 'not a member index') end
  local removed = 0
  for i = 2, #ARGV do
    local entry = ARGV[i]
    local account_id = string.match(entry, '%z([^%z]+)$')
    if not account_id or KEYS[i] ~= prefix .. 'a:' .. account_id then
      return invalid('KEYS', 'not the account of index entry ' .. (i - 1))
    end
    local keep = false
    local st = redis.call('HGET', KEYS[i], 'st')
    if st and st ~= 'closed' then
      for _, e in ipairs(indexed_entries(KEYS[i], account_id)) do
        if e == entry then keep = true end
      end
    end
    if not keep then removed = removed + redis.call('ZREM', KEYS[1], entry) end
  end
  return {'APPLIED', removed, 0, ''}
end
return invalid('mode', 'must be account or sweep')
