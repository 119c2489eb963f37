"""Leases: one holder of a named job per partition at a time (the archiver's), held while it is renewed."""

from __future__ import annotations

from .store import Store

TAKE_LUA = """
local holder = redis.call('GET', KEYS[1])
if holder == false or holder == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
"""


async def take_lease(store: Store, name: str, p: int, owner: str, ttl_ms: int) -> bool:
    """Take (or renew) partition ``p``'s lease for ``name`` as ``owner`` for ``ttl_ms``: whether it is ``owner``'s.
    One script, so two workers never both take it; on the embedded store not journalled (a restart frees it)."""
    return bool(await store._read(store.r.eval(TAKE_LUA, 1, store.keys.lease(name, p), owner, ttl_ms)))
