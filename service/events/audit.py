"""The audit line format of API.md: ``seq  at(ISO 8601)  actor  summary  hash[:12]``."""

from __future__ import annotations

import time

from .envelope import Envelope

_last: tuple[int, str] = (-1, "")


def iso(at_ms: int) -> str:
    """``at_ms`` (ms since the epoch) as ``YYYY-MM-DDTHH:MM:SS.mmmZ``, in integers (no float on the way).

    The events of one command share their time, so the last answer is kept: a rebuild formats every event's time,
    and ``datetime`` costs more than the rest of an audit line."""
    global _last
    if _last[0] == at_ms:
        return _last[1]
    seconds, ms = divmod(at_ms, 1000)
    day, second = divmod(seconds, 86_400)
    date = _days.get(day)
    if date is None:
        t = time.gmtime(day * 86_400)
        date = _days[day] = "%04d-%02d-%02dT" % (t.tm_year, t.tm_mon, t.tm_mday)
        if len(_days) > 1024:
            _days.pop(next(iter(_days)))
    hour, second = divmod(second, 3600)
    minute, second = divmod(second, 60)
    text = "%s%02d:%02d:%02d.%03dZ" % (date, hour, minute, second, ms)
    _last = (at_ms, text)
    return text


_days: dict[int, str] = {}


def line(env: Envelope, summary: str) -> str:
    return f"{env.seq}  {iso(env.at)}  {env.actor}  {summary}  {env.hash[:12]}"
