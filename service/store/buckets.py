"""The rate limits' buckets on Redis (``Store.rate_take``, ``rate_take_all``, ``rate_give_back``): three small
scripts, each one atomic step; ``embedded.py`` takes the same steps in Python. A bucket is one key (``Keys.bucket``)."""

# a rate limit's bucket (GCRA): the theoretical arrival time of the next request, in ms; a token is taken when that
# time, less the burst's allowance, is not in the future. KEYS: the bucket; ARGV: now, interval, burst. Answers 0
# when taken, else the ms to wait. The key's TTL ends when the bucket is full again: an idle bucket vanishes.
RATE_TAKE_LUA = """
local now, interval, burst = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local tat = math.max(tonumber(redis.call('GET', KEYS[1]) or '0'), now)
local wait = tat + interval - burst * interval - now
if wait > 0 then
  return wait
end
redis.call('SET', KEYS[1], string.format('%d', tat + interval), 'PX', string.format('%d', tat + interval - now))
return 0
"""
# a token from every bucket or from none (RATE_TAKE_LUA's steps, all checked before any is set). KEYS: the buckets;
# ARGV: now, then each bucket's interval and burst. Answers {-1, 0} when all were taken, else {the first empty one's
# index from 0, its wait}.
RATE_TAKE_ALL_LUA = """
local now, next_tat = tonumber(ARGV[1]), {}
for i, key in ipairs(KEYS) do
  local interval, burst = tonumber(ARGV[2 * i]), tonumber(ARGV[2 * i + 1])
  local tat = math.max(tonumber(redis.call('GET', key) or '0'), now)
  local wait = tat + interval - burst * interval - now
  if wait > 0 then
    return {i - 1, wait}
  end
  next_tat[i] = tat + interval
end
for i, key in ipairs(KEYS) do
  redis.call('SET', key, string.format('%d', next_tat[i]), 'PX', string.format('%d', next_tat[i] - now))
end
return {-1, 0}
"""
# a token taken back into its bucket. KEYS: the bucket; ARGV: now, interval
RATE_GIVE_BACK_LUA = """
local now, interval = tonumber(ARGV[1]), tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0') - interval
if tat > now then
  redis.call('SET', KEYS[1], string.format('%d', tat), 'PX', string.format('%d', tat - now))
else
  redis.call('DEL', KEYS[1])
end
return 0
"""
