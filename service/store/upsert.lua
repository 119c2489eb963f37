-- Upsert one item (a game) of a cross-slot read model (a player's results), idempotently.
-- KEYS: the read model's hash
-- ARGV: item, version, entry, n, [counter field, delta]*n
-- The hash keeps 'g:<item>' = entry and 'c:<item>' = '<version> <field>=<delta> ...' (what the item added to the
-- counters). An item already stored at this version or later is left alone (answers {0, stored version}); an older
-- one is replaced, its counters taken back before the new ones are added (answers {1, version}). Each write that
-- takes adds one to the field 'seq', so a reader of the whole hash can tell a newer snapshot of it from an older one.
local item, version = ARGV[1], tonumber(ARGV[2])
local old = redis.call('HGET', KEYS[1], 'c:' .. item)
if old then
  local stored = tonumber(string.match(old, '^(%d+)'))
  if stored >= version then
    return {0, stored}
  end
  for field, delta in string.gmatch(old, ' ([^ =]+)=(-?%d+)') do
    redis.call('HINCRBY', KEYS[1], field, 0 - tonumber(delta))
  end
end
local added = {ARGV[2]}
local n = tonumber(ARGV[4])
for i = 0, n - 1 do
  local field, delta = ARGV[5 + 2 * i], ARGV[6 + 2 * i]
  redis.call('HINCRBY', KEYS[1], field, delta)
  added[#added + 1] = field .. '=' .. delta
end
redis.call('HSET', KEYS[1], 'g:' .. item, ARGV[3], 'c:' .. item, table.concat(added, ' '))
redis.call('HINCRBY', KEYS[1], 'seq', 1)
return {1, version}
