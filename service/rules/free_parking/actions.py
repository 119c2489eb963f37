"""Actions against players, as scripts of steps: Officer Jones, Time Expires and the Second Chance effects.

A step is ``"<what>:<who>"``; ``who`` is ``by`` (who played or drew the card), ``t`` (the action's
target, named in an earlier step or by the card played) or a seat number. Wait steps —
``respond``, ``target``, ``card``, ``position`` — stop the game until that seat answers; the others
(``fan`` and the effects) happen at once. Each script is the ruling of RULES.md §1 for its card:

- *Talk Your Way Out of It* answers every ``respond`` step; it is offered only where an action
  takes from a player (minutes, Point cards, place), whoever drew it, the drawer included. A trade of places
  takes a place from two players, so (rules version 2) it asks both.
- *A card that would give, lose or take a Point card where there is none has no effect*; likewise an
  action that would change nothing (minutes off an empty meter) resolves at once, without a wait.
"""

from __future__ import annotations

from .cards import METER_MAX, SECOND_CHANCE_MINUTES
from .state import State

# Second Chance effects that change only the drawer's meter, upwards: no one to ask.
METER_GAINS = {"add_20": 20, "add_40": 40, "set_60": METER_MAX}


def script(s: State, kind: str, by: int, target: int | None = None) -> tuple[str, ...]:
    """The steps of an action of ``kind`` started by seat ``by`` (against ``target``, for the specials
    played on a seat) on the table ``s``, after the card left the hand."""
    me = s.seats[by]
    if kind == "officer_jones":
        return ("respond:t", "card:t", "lose:t")
    if kind == "time_expires":
        return ("respond:t", "expire:t") if target is not None and s.seats[target].meter > 0 else ()
    if kind == "take_point":
        if not any(s.seats[o].points for o in s.opponents(by)):
            return ()
        return ("target:by", "respond:t", "fan:t", "position:by", "take:t")
    if kind == "give_point":
        return ("respond:by", "card:by", "target:by", "give:by") if me.points else ()
    if kind == "lose_point":
        return ("respond:by", "card:by", "lose:by") if me.points else ()
    if kind == "trade_places":
        return _trade_places(s)
    if kind in METER_GAINS:
        return ("gain:by",) if me.meter < METER_MAX else ()
    if kind in ("minus_20", "violation"):
        return ("respond:by", f"{kind}:by") if me.meter > 0 else ()
    if kind == "all_minus_20":
        steps: list[str] = []
        for o in s.opponents(by):
            if s.seats[o].meter > 0:
                steps += [f"respond:{o}", f"minus_20:{o}"]
        return tuple(steps)
    if kind == "draw_2":
        return ("draw_2:by",)
    raise ValueError(f"no script for {kind}")


def _trade_places(s: State) -> tuple[str, ...]:
    """A trade takes a place from two players: from version 2 the named player is asked first, then the drawer, and a
    talk-out by either cancels it. Neither wait is ever skipped: a trade always moves two players, which everyone sees.
    Version 1 asked the named player only."""
    if s.rules_version == 1:
        return ("target:by", "respond:t", "trade:t")
    return ("target:by", "respond:t", "respond:by", "trade:t")


def who(s: State, step: str) -> int:
    """The seat a step concerns."""
    action = s.action
    assert action is not None
    ref = step.split(":", 1)[1]
    if ref == "by":
        return action.by
    if ref == "t":
        assert action.target is not None
        return action.target
    return int(ref)


def what(step: str) -> str:
    return step.split(":", 1)[0]


def target_options(s: State) -> tuple[int, ...]:
    """Seats the drawer may name, clockwise from their left (so the first is the server's default)."""
    action = s.action
    assert action is not None
    opponents = s.opponents(action.by)
    if action.kind == "take_point":
        return tuple(o for o in opponents if s.seats[o].points)
    return tuple(opponents)


def meter_after(kind: str, meter: int) -> int:
    """Where a meter-changing step leaves a meter (capped at 60, floored at 0)."""
    if kind == "expire" or kind == "violation":
        return 0
    if kind == "minus_20":
        return max(0, meter - SECOND_CHANCE_MINUTES)
    raise ValueError(kind)


def gain_after(effect: str, meter: int) -> int:
    """Add 20 or 40 minutes (capped at 60), or set the meter to 60."""
    return METER_MAX if effect == "set_60" else min(METER_MAX, meter + METER_GAINS[effect])
