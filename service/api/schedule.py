"""When the server owes a game an action, and which: a passed deadline, a server-seated bot's move, or closing a
game nobody joined or moved in for the idle time.

Every append records the game's next due time in its partition's ``due`` set, so any worker — or a
worker started after a crash — finds overdue deadlines, waiting bots and idle games again.
"""

from __future__ import annotations

from collections import OrderedDict

import msgspec

from service.bots import Bot, awaited, bot, holds_up
from service.bots.sight import bot_move
from service.events.base import BotParams
from service.events.common import Close, Timeout
from service.rules.engine import Game
from service.rules.resign import bot_legal

from . import chances


class ServerMove(msgspec.Struct, frozen=True):
    command: msgspec.Struct
    seat: int | None
    command_id: str


SEATED_BOTS = 10_000
"""Bots this worker keeps between their moves (the least recently used go first)."""
_seated: OrderedDict[tuple[str, int, str], Bot] = OrderedDict()


def seated_bot(game_id: str, seat: int, kind: str, name: str, params: BotParams | None = None) -> Bot:
    """The bot at ``seat`` of ``game_id``, the same one move after move in this worker: a bot may follow a plan it
    searched for (the solitaire solver follows its line; one made afresh each move would search again each time).
    A bot checks its plan against the board it is shown, so one this worker lost or another worker's moves are safe."""
    key = (game_id, seat, name)
    player = _seated.get(key)
    if player is None:
        player = _seated[key] = bot(kind, name, params)
        while len(_seated) > SEATED_BOTS:
            _seated.popitem(last=False)
    _seated.move_to_end(key)
    return player


def bot_seats(game: Game) -> dict[int, str]:
    return {i: st.player.bot for i, st in enumerate(game.state.seats) if st.player is not None and st.player.bot}


def _waits_on(pending: msgspec.Struct, bots: dict[int, str]) -> bool:
    """Whether a wait is a bot's: any of the seats it awaits (an auction's bidders, say) is a server bot, which then
    answers at once; a wait on people alone lasts to its deadline."""
    return any(seat in bots for seat in awaited(pending))


def _bot_plays_on(game: Game, bots: dict[int, str]) -> bool:
    """Whether a bot's turn goes on past a wait on people that holds up nothing (a Monopoly trade offer): the bot
    whose turn it is has something to do, and does it now rather than at the offer's deadline."""
    s = game.state
    return not holds_up(s) and s.turn_seat in bots and bool(bot_legal(game.rules, s, s.turn_seat))


def pace(game: Game, bot_delay_ms: int, human_pace_ms: int, chance_ms: int = 0, before: object | None = None) -> int:
    """How long a server bot waits before it acts: ``bot_delay_ms`` always, and at least ``human_pace_ms`` at a table
    where a person sits — so that the person can read what the bot did. When the event just appended opened a chance
    for a person to act out of turn (``before``: the state before it; see ``chances``), or a person still bids in an
    auction, at least ``chance_ms``: time to see the chance and take it before a bot's move closes it. Bots alone play
    at once."""
    if not chances.people(game.state):
        return bot_delay_ms
    wait = max(bot_delay_ms, human_pace_ms)
    if chance_ms > wait and bot_seats(game) and chances.holds_back(game, before):  # no bots: nobody to hold back
        return chance_ms
    return wait


def turn_due(game: Game, bots: dict[int, str]) -> int | None:
    """When the turn clock of a person's turn runs out (the kind's ``turn_deadline``), if the game has one running. A
    bot's turn has none here: the bot plays before it."""
    clock = getattr(game.rules, "turn_deadline", None)
    if clock is None or game.state.turn_seat in bots:
        return None
    return clock(game.state)


def due_at(
    game: Game, now: int, bot_delay_ms: int = 0, human_pace_ms: int = 0, *, chance_ms: int = 0,
    before: object | None = None,
) -> int | None:
    """The next moment the server must look at this game, or ``None`` if it waits on people only. ``now`` is the time
    of the game's last event, and ``before`` the state before it (for ``pace``: did it open a person's chance?)."""
    s, rules = game.state, game.rules
    if rules.status_of(s) != "playing":
        return None
    bot_delay_ms = pace(game, bot_delay_ms, human_pace_ms, chance_ms, before)
    bots = bot_seats(game)
    pending = s.pending
    turn = turn_due(game, bots)
    if pending is not None:
        if _waits_on(pending, bots) or _bot_plays_on(game, bots):
            return now + bot_delay_ms
        return min(pending.deadline_at, turn) if turn is not None else pending.deadline_at
    if any(bot_legal(rules, s, seat) for seat in bots):
        return now + bot_delay_ms
    return turn


def idle_due(game: Game, idle_ms: int) -> int | None:
    """When the server closes the game if nobody moves it on first: the time of its last event that did
    (``progress_at``: a trade offer, say, does not) + ``idle_ms`` (0: never), for a game waiting or playing. A game of
    bots alone is never idle: the server plays it."""
    status = game.rules.status_of(game.state)
    if not idle_ms or status not in ("waiting", "playing"):
        return None
    if status == "playing" and len(bot_seats(game)) == len(game.state.seats):
        return None
    return game.progress_at + idle_ms


def archive_due(game: Game, after_ms: int) -> int | None:
    """When a finished game moves to the archive: its last event's time + ``after_ms`` (0: never)."""
    if not after_ms or game.rules.status_of(game.state) != "finished":
        return None
    return game.last_at + after_ms


def next_due(
    game: Game, now: int, bot_delay_ms: int = 0, idle_ms: int = 0, human_pace_ms: int = 0, *, chance_ms: int = 0,
    before: object | None = None,
) -> int | None:
    """The next moment the server must look at the game: for a move it owes (``due_at``) or to close it, if sooner."""
    owed = due_at(game, now, bot_delay_ms, human_pace_ms, chance_ms=chance_ms, before=before)
    times = [t for t in (owed, idle_due(game, idle_ms)) if t is not None]
    return min(times, default=None)


def server_move(game: Game, now: int, idle_ms: int = 0) -> ServerMove | None:
    """What the server does for this game now: time out an overdue wait, play a bot's move, or — owing it nothing
    else — close it once nobody has moved for ``idle_ms`` (``close:<game>:<version>``: two workers, one event)."""
    move = _owed_move(game, now)
    if move is not None:
        return move
    idle = idle_due(game, idle_ms)
    if idle is not None and now >= idle:
        return ServerMove(Close(idle_ms=idle_ms, since=game.progress_at), None, f"close:{game.game_id}:{game.version}")
    return None


def _owed_move(game: Game, now: int) -> ServerMove | None:
    """Time out an overdue wait or turn, or play a bot's move."""
    s, rules = game.state, game.rules
    if rules.status_of(s) != "playing":
        return None
    bots = bot_seats(game)
    pending = s.pending
    if pending is not None and not _waits_on(pending, bots):
        if now >= pending.deadline_at:
            return ServerMove(Timeout(), None, f"timeout:{game.game_id}:{game.version}")
        if holds_up(s):
            return None
    turn = turn_due(game, bots)
    if turn is not None and now >= turn:  # a person's turn clock ran out: the server plays their turn
        return ServerMove(Timeout(), None, f"timeout:{game.game_id}:{game.version}")
    move = _bot_move(game, bots) if bots else None  # people alone: no bot to ask (a solitaire has no "random" one)
    if move is None:
        if pending is not None and now >= pending.deadline_at:  # the bots awaited let it pass: the deadline holds
            return ServerMove(Timeout(), None, f"timeout:{game.game_id}:{game.version}")
        return None
    seat, command = move
    return ServerMove(command, seat, f"bot:{game.game_id}:{game.version}")


def _bot_move(game: Game, bots: dict[int, str]) -> tuple[int, msgspec.Struct] | None:
    """The move of one of the server's bots now, if any makes one (the other seats' stand-ins are never asked)."""
    s, rules = game.state, game.rules
    players = {i: seated_bot(game.game_id, i, rules.KIND, name, s.seats[i].player.bot_params) for i, name in bots.items()}
    return bot_move(rules, s, players, game.game_id)  # each on a world of its own seat's (service/bots/sight.py)
