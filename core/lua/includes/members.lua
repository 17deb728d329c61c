--[[
Shared pieces of the member layer (core/members.py): the member index of a partition,
cards, shop settings. Pasted where a script says `--@include members`.

Member index: one sorted set per partition, KEYS[n] = '<prefix>mx', every score 0, so
ZRANGEBYLEX answers phone (exact) and name / pinyin-initials (prefix) lookups. Members:
  'p:<phone>\0<account_id>'      phone, digits with an optional leading '+'
  'n:<name key>\0<account_id>'   the holder name, NFKC + casefold (computed by Python)
  'i:<initials>\0<account_id>'   pinyin initials of a Chinese name ('zs' for 张三), one
                                 entry per reading of a polyphonic name (at most 4)
The account hash remembers what it indexed (ph phone, nk name key when it differs from
nm, pi initials separated by spaces) so that a change or a close removes exactly those
entries. The index lives in the account's own slot and is changed by the same script
that changes the member: it can never disagree with the accounts.
]]
--@include checks

local MAX_PHONE_LEN = 20
local MAX_INITIALS_LEN = 200

local function check_phone(value)
  if value == nil or value == '' then return nil end
  if #value > MAX_PHONE_LEN or not string.match(value, '^%+?[0-9][0-9]+$') then
    return invalid('phone', 'digits only (an optional leading +), 2 to 20 characters')
  end
  return nil
end

local function check_member_args(phone, name_key, initials)
  return check_phone(phone)
      or check_holder(name_key)
      or ((#(initials or '') > MAX_INITIALS_LEN or not string.match(initials or '', '^[a-z ]*$'))
          and invalid('initials', 'lowercase letters and spaces, at most 200') or nil)
end

local function check_index_key(key, prefix)
  if key ~= prefix .. 'mx' then return invalid('KEYS', 'not the member index of this partition') end
  return nil
end

local function member_entries(account_id, phone, name_key, initials)
  local out = {}
  if phone ~= '' then out[#out + 1] = 'p:' .. phone .. '\0' .. account_id end
  if name_key ~= '' then out[#out + 1] = 'n:' .. name_key .. '\0' .. account_id end
  for ini in string.gmatch(initials or '', '[a-z]+') do out[#out + 1] = 'i:' .. ini .. '\0' .. account_id end
  return out
end

-- The entries the account hash says are indexed now.
local function indexed_entries(acct_key, account_id)
  local m = redis.call('HMGET', acct_key, 'ph', 'nk', 'nm', 'pi')
  return member_entries(account_id, m[1] or '', m[2] or m[3] or '', m[4] or '')
end

local function unindex_member(index_key, acct_key, account_id)
  local old = indexed_entries(acct_key, account_id)
  if #old > 0 then redis.call('ZREM', index_key, unpack(old)) end
end

-- Index (phone, name_key, initials) for the account, replacing what it had; records
-- ph / nk / pi on the account hash (nm, the name shown, is set by the caller).
local function index_member(index_key, acct_key, account_id, holder, phone, name_key, initials)
  unindex_member(index_key, acct_key, account_id)
  for _, e in ipairs(member_entries(account_id, phone, name_key, initials)) do
    redis.call('ZADD', index_key, '0', e)
  end
  if phone ~= '' then redis.call('HSET', acct_key, 'ph', phone) else redis.call('HDEL', acct_key, 'ph') end
  if name_key ~= '' and name_key ~= holder then redis.call('HSET', acct_key, 'nk', name_key)
  else redis.call('HDEL', acct_key, 'nk') end
  if initials ~= '' then redis.call('HSET', acct_key, 'pi', initials) else redis.call('HDEL', acct_key, 'pi') end
end

-- Journal fields of a member's identity (open / restore entries).
local function member_fields(holder, phone)
  local extra = {}
  if holder ~= '' then extra[#extra + 1] = 'name'; extra[#extra + 1] = holder end
  if phone ~= '' then extra[#extra + 1] = 'ph'; extra[#extra + 1] = phone end
  if #extra == 0 then return nil end
  return extra
end

-- Settings on partitions after the first run under '@set:' + 24 hex digits
-- (core/members.py partition_txn_id), the reserved namespace of internal txn ids
-- (checks.lua check_internal_id): no client id can equal one.

-- The standard txn / terminal / cashier checks of member scripts, whose KEYS[1] is not
-- an account hash. Internal setting txn ids ('@set:...') are accepted where allowed.
local function check_member_request(allow_internal)
  local jkey = KEYS[3]
  if type(jkey) ~= 'string' or string.sub(jkey, -1) ~= 'j' then return invalid('KEYS[3]', 'not a journal key') end
  local prefix = string.sub(jkey, 1, -2)
  local bad
  if allow_internal and string.sub(ARGV[1] or '', 1, 1) == '@' then bad = check_internal_id(ARGV[1], 'txn_id')
  else bad = check_id(ARGV[1], 'txn_id') end
  bad = bad or check_ttl(ARGV[4]) or check_id(ARGV[5], 'terminal_id', true) or check_id(ARGV[6], 'cashier_id', true)
  if bad then return bad, prefix end
  if KEYS[2] ~= prefix .. 't:' .. ARGV[1] then return invalid('KEYS[2]', 'not the key of this txn_id'), prefix end
  return nil, prefix
end
