"""Commands packed by hiredis's C packer in redis-py's asyncio client, which otherwise packs in Python.

redis-py's asyncio connections encode every argument of every command in Python (its sync client can use hiredis,
its asyncio one cannot). An append is one ``EVALSHA`` of twenty-odd arguments: packing it cost ~50 µs against
~4 µs in C — more than a tenth of a busy worker's time went to it. ``fast_packing(client)`` makes the client's
pool build connections whose ``pack_command`` is hiredis's, byte for byte the same output; any argument hiredis
does not take (``None``, ``bool``, ``bytearray``…) falls back to redis-py's own packer, and its errors.
"""

from __future__ import annotations

from typing import Any

try:
    from hiredis import pack_command as _pack
except ImportError:  # hiredis is optional for redis-py: then nothing changes
    _pack = None


class _HiredisPacking:
    def pack_command(self, *args: Any) -> list[bytes]:
        first = args[0]
        # as redis-py does: a command name with literal arguments in it ('SCRIPT LOAD') is sent as separate words
        if isinstance(first, str):
            if " " in first:
                args = (*first.encode().split(), *args[1:])
        elif isinstance(first, bytes) and b" " in first:
            args = (*first.split(), *args[1:])
        try:
            return [_pack(args)]  # type: ignore[misc]
        except TypeError:
            return super().pack_command(*args)  # type: ignore[misc]


_CLASSES: dict[type, type] = {}


def fast_packing(client: Any) -> Any:
    """``client`` (a ``redis.asyncio.Redis``), its pool now making connections that pack with hiredis."""
    pool = getattr(client, "connection_pool", None)
    if _pack is None or pool is None:
        return client
    base = pool.connection_class
    if not issubclass(base, _HiredisPacking):
        if base not in _CLASSES:
            _CLASSES[base] = type(f"Hiredis{base.__name__}", (_HiredisPacking, base), {})
        pool.connection_class = _CLASSES[base]
    return client
