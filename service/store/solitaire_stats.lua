-- Upsert one solitaire into its player's statistics (every key in the player's slot), idempotently and in order.
-- KEYS: the versions hash, the latest sorted set, then per bucket its started, finished, times and wins sorted sets
-- ARGV: game, version, bucket (0-based, in KEYS' order), started_at, finished_at or '', time_ms or '', won ('1'/'0')
-- A game stored at this version or later is left alone (answers {0, stored version}). Otherwise it leaves every
-- bucket's sets and is written into its own: started (score: the deal's time), finished (its end), times (the time
-- from its first move to its last, when it has one and ended) and wins (the same time, won); latest holds its end or,
-- before it, its deal. So the sets always reflect the newest snapshot of each game, however often it moved bucket.
local game, version = ARGV[1], tonumber(ARGV[2])
local stored = redis.call('HGET', KEYS[1], game)
if stored and tonumber(stored) >= version then
  return {0, tonumber(stored)}
end
for i = 3, #KEYS do
  redis.call('ZREM', KEYS[i], game)
end
local base = 2 + 4 * tonumber(ARGV[3])
redis.call('ZADD', KEYS[base + 1], ARGV[4], game)
local latest = ARGV[4]
if ARGV[5] ~= '' then
  latest = ARGV[5]
  redis.call('ZADD', KEYS[base + 2], ARGV[5], game)
  if ARGV[6] ~= '' then
    redis.call('ZADD', KEYS[base + 3], ARGV[6], game)
    if ARGV[7] == '1' then
      redis.call('ZADD', KEYS[base + 4], ARGV[6], game)
    end
  end
end
redis.call('ZADD', KEYS[2], latest, game)
redis.call('HSET', KEYS[1], game, ARGV[2])
return {1, version}
