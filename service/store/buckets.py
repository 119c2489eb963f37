"""The rate limits' buckets on Redis (``Store.rate_take``, ``rate_take_all``, ``rate_give_back``): three small
scripts, each one atomic step; ``InProcessBuckets`` takes the same steps in Python for the embedded store. A bucket is
one key (``Keys.bucket``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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


class InProcessBuckets:
    """The scripts' steps in Python, for the embedded store (mixed into ``EmbeddedStore``): each in one synchronous step
    on its server's client without asyncio (``_now``), so nothing comes between a bucket's read and its write."""

    _now: Any
    keys: Any
    _refuse_if_broken: Callable[[], None]

    async def rate_take(self, bucket: str, now: int, interval_ms: int, burst: int) -> int:
        """The rate script's contract (``RATE_TAKE_LUA``), step for step, in one synchronous step (nothing comes
        between its read and its write); not journalled: a restart empties every bucket."""
        self._refuse_if_broken()
        key = self.keys.bucket(bucket)
        tat = max(int(self._now.get(key) or 0), now)
        wait = tat + interval_ms - burst * interval_ms - now
        if wait > 0:
            return wait
        self._now.set(key, tat + interval_ms, px=tat + interval_ms - now)
        return 0

    async def rate_take_all(self, takes: list[tuple[str, int, int]], now: int) -> tuple[int, int]:
        """``RATE_TAKE_ALL_LUA``, step for step, in one synchronous step: every bucket checked, then every one set."""
        self._refuse_if_broken()
        keys = [self.keys.bucket(bucket) for bucket, _, _ in takes]
        next_tat = []
        for i, (key, (_, interval_ms, burst)) in enumerate(zip(keys, takes, strict=True)):
            tat = max(int(self._now.get(key) or 0), now)
            wait = tat + interval_ms - burst * interval_ms - now
            if wait > 0:
                return i, wait
            next_tat.append(tat + interval_ms)
        for key, tat in zip(keys, next_tat, strict=True):
            self._now.set(key, tat, px=tat - now)
        return -1, 0

    async def rate_give_back(self, bucket: str, now: int, interval_ms: int) -> None:
        """``RATE_GIVE_BACK_LUA``, step for step."""
        self._refuse_if_broken()
        key = self.keys.bucket(bucket)
        tat = int(self._now.get(key) or 0) - interval_ms
        if tat > now:
            self._now.set(key, tat, px=tat - now)
        else:
            self._now.delete(key)
