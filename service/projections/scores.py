"""The scores of a game: who sits where, their Point cards and points, the status and the winner (a solitaire's:
its outcome, runs, moves, redeals and time; a Monopoly game's points: each seat's worth at the end).

A pure fold of the events' public parts (``fold``): the projector stores its result with the checkpoint
(``ns:proj:scores:{pN}:<game_id>``, fields ``applied`` and ``model``). Points belong to the seat and the
player sits in it: when two players trade places each takes over the other seat's Point cards, so scores
follow the player (RULES.md §1, "Trade places").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import msgspec

from service.events.base import Player
from service.events.envelope import Envelope
from service.store.store import Store
from service.rules.engine import rules_for
from service.rules.free_parking import cards as fp_cards


class OutOfOrder(Exception):
    """Events handed to a fold do not follow the version it reflects: a bug, never folded."""


class SeatScore(msgspec.Struct, kw_only=True, omit_defaults=True):
    seat: int
    player: Player | None = None
    points: int = 0
    point_cards: list[str] = []


class SolitaireScore(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What a solitaire's scores keep: its outcome, how it was reached, how long it took, and whether the player knew
    more of the deal than a fair one shows (a seed they chose, a redeal they undid): statistics keep those apart."""

    seed_chosen: bool = False
    redeal_undone: bool = False  # a redeal was undone: the player has seen what it deals (RULES.md §2)
    result: Literal["won", "lost"] | None = None
    reason: Literal["no_moves", "resigned", "idle"] | None = None
    runs: list[int] = []  # each row's run when the game ended
    moves: int = 0  # moves made, undone ones included
    undos: int = 0
    redeals: int = 0  # redeals standing at the end (one undone is given back)
    dealt_at: int | None = None  # when the layout was dealt: the game counts as started from then
    first_move_at: int | None = None  # the player's first move, redeal or undo
    last_move_at: int | None = None  # and the last (a resignation or a close is not one)
    time_ms: int | None = None  # at the end: from the first move to the last (RULES.md §2); None with no move


class Scores(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One game's scores as of ``version`` (the last event folded in)."""

    game_id: str
    kind: str
    version: int = 0
    status: str = "waiting"
    mode: str | None = None
    round: int = 0
    seats: list[SeatScore] = []
    winner: int | None = None
    created_at: int = 0
    updated_at: int = 0
    finished_version: int | None = None  # the seq of the event that ended the game
    finished_at: int | None = None
    solitaire: SolitaireScore | None = None


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(Scores)


class _Kind(msgspec.Struct):
    kind: str


_kind = msgspec.json.Decoder(_Kind)


def encode(scores: Scores) -> bytes:
    return _encoder.encode(scores)


def decode(raw: bytes) -> Scores:
    return _decoder.decode(raw)


def copy(scores: Scores) -> Scores:
    return _decoder.decode(_encoder.encode(scores))


def start(env: Envelope) -> Scores:
    """The empty scores of a game whose first event is ``env`` (``game_created``: it names the kind)."""
    if env.seq != 1:
        raise OutOfOrder(f"game {env.game_id}: a projection starts at seq 1, not {env.seq}")
    return Scores(game_id=env.game_id, kind=_kind.decode(env.public).kind, created_at=env.at)


def fold(scores: Scores | None, envelopes: Sequence[Envelope], events: Sequence[Any] | None = None) -> Scores:
    """``scores`` (``None``: before the first event) with ``envelopes`` folded in; the input is left as it was.

    Only public parts are read (a redacted log folds the same). Events must follow ``scores.version`` one by one.
    ``events``, when given, are the envelopes' public parts already decoded (``decode_public``), so that a
    projector that also writes audit lines decodes each event once.
    """
    if not envelopes:
        if scores is None:
            raise ValueError("nothing to fold")
        return scores
    out = copy(scores) if scores is not None else start(envelopes[0])
    codec = rules_for(out.kind).CODEC
    steps = STEPS.get(out.kind, {})
    for i, env in enumerate(envelopes):
        if env.seq != out.version + 1:
            raise OutOfOrder(f"game {out.game_id}: seq {env.seq} after version {out.version}")
        step = steps.get(env.type)
        if step is not None:
            step(out, codec.join(env.public) if events is None else events[i], env)
        out.version, out.updated_at = env.seq, env.at
    return out


def kind_of(scores: Scores | None, envelopes: Sequence[Envelope]) -> str:
    """The game kind of a fold of ``envelopes`` onto ``scores`` (the first event, ``game_created``, names it)."""
    return scores.kind if scores is not None else _kind.decode(envelopes[0].public).kind


def decode_public(kind: str, envelopes: Sequence[Envelope]) -> list[Any]:
    """Each envelope's public part as its event struct (its secret left out)."""
    join = rules_for(kind).CODEC.join
    return [join(env.public) for env in envelopes]


# --- the card game ---------------------------------------------------------------------------


def _score(seat: SeatScore) -> None:
    seat.points = sum(fp_cards.value_of(c) for c in seat.point_cards)


def _game_created(s: Scores, e: Any, env: Envelope) -> None:
    s.seats = [SeatScore(seat=i) for i in range(getattr(e.config, "seats", 1))]
    s.mode = getattr(e.config, "mode", None)


def _seat_taken(s: Scores, e: Any, env: Envelope) -> None:
    s.seats[e.seat].player = e.player


def _round_dealt(s: Scores, e: Any, env: Envelope) -> None:
    s.round = e.round
    for seat in s.seats:  # a new round starts from no Point cards down
        seat.point_cards, seat.points = [], 0


def _turn_began(s: Scores, e: Any, env: Envelope) -> None:
    if s.status == "waiting":
        s.status = "playing"


def _errand_run(s: Scores, e: Any, env: Envelope) -> None:
    seat = s.seats[e.seat]
    seat.point_cards.append(e.card)
    _score(seat)


def _point_card_moved(s: Scores, e: Any, env: Envelope) -> None:
    seat = s.seats[e.seat]
    seat.point_cards.remove(e.card)
    _score(seat)
    if e.to is not None:
        s.seats[e.to].point_cards.append(e.card)
        _score(s.seats[e.to])


def _places_traded(s: Scores, e: Any, env: Envelope) -> None:
    a, b = s.seats[e.seat], s.seats[e.other]
    a.player, b.player = b.player, a.player


def _game_won(s: Scores, e: Any, env: Envelope) -> None:
    s.status, s.winner = "finished", e.seat
    s.finished_version, s.finished_at = env.seq, env.at


def _closed(s: Scores, e: Any, env: Envelope) -> None:
    """The server closed the game, nobody having moved (any kind): finished, with no winner."""
    s.status, s.winner = "finished", None
    s.finished_version, s.finished_at = env.seq, env.at


# --- the solitaire -----------------------------------------------------------------------------

WON_RUNS = [12, 12, 12, 12]
"""A won board: every row two to king."""


def _solitaire_created(s: Scores, e: Any, env: Envelope) -> None:
    s.seats = [SeatScore(seat=0)]
    s.solitaire = SolitaireScore(seed_chosen=e.config.seed_chosen)


def _layout_dealt(s: Scores, e: Any, env: Envelope) -> None:
    assert s.solitaire is not None
    s.status, s.solitaire.dealt_at = "playing", env.at


def _played(s: Scores, env: Envelope) -> SolitaireScore:
    """A move, redeal or undo of the player: the game's time runs from the first to the last of them."""
    solo = s.solitaire
    assert solo is not None
    if solo.first_move_at is None:
        solo.first_move_at = env.at
    solo.last_move_at = env.at
    return solo


def _card_moved(s: Scores, e: Any, env: Envelope) -> None:
    _played(s, env).moves += 1


def _redealt(s: Scores, e: Any, env: Envelope) -> None:
    _played(s, env).redeals += 1


def _undone(s: Scores, e: Any, env: Envelope) -> None:
    solo = _played(s, env)
    solo.undos += 1
    if e.step == "redealt":
        solo.redeals -= 1
        solo.redeal_undone = True


def _solitaire_ended(s: Scores, env: Envelope, result: Literal["won", "lost"]) -> SolitaireScore:
    """Finished at ``env``; its time from the first move to the last (to the last move, not to the end: a resignation
    or the server's close is not played time)."""
    solo = s.solitaire
    assert solo is not None
    s.status, s.finished_version, s.finished_at = "finished", env.seq, env.at
    solo.result = result
    if solo.first_move_at is not None and solo.last_move_at is not None:
        solo.time_ms = solo.last_move_at - solo.first_move_at
    return solo


def _solitaire_won(s: Scores, e: Any, env: Envelope) -> None:
    solo = _solitaire_ended(s, env, "won")
    s.winner = 0
    solo.runs, solo.redeals = list(WON_RUNS), e.redeals_used


def _solitaire_lost(s: Scores, e: Any, env: Envelope) -> None:
    solo = _solitaire_ended(s, env, "lost")
    solo.reason, solo.runs = e.reason, list(e.runs)


def _solitaire_closed(s: Scores, e: Any, env: Envelope) -> None:
    """Lost, as a game left for the configured time (RULES.md §2)."""
    _solitaire_ended(s, env, "lost").reason = "idle"


# --- Monopoly ----------------------------------------------------------------------------------


def _monopoly_turn_began(s: Scores, e: Any, env: Envelope) -> None:
    s.status, s.round = "playing", e.round


def _monopoly_ended(s: Scores, e: Any, env: Envelope) -> None:
    """A seat's score is its worth when the game ended (0 for the bankrupt), as the rules counted it."""
    s.status, s.winner = "finished", e.winner
    s.finished_version, s.finished_at = env.seq, env.at
    for seat, worth in zip(s.seats, e.worth, strict=False):
        seat.points = worth


Step = Callable[[Scores, Any, Envelope], None]

STEPS: dict[str, dict[str, Step]] = {
    "free-parking": {
        "game_created": _game_created,
        "seat_taken": _seat_taken,
        "round_dealt": _round_dealt,
        "turn_began": _turn_began,
        "errand_run": _errand_run,
        "point_card_moved": _point_card_moved,
        "places_traded": _places_traded,
        "game_won": _game_won,
        "game_closed": _closed,
    },
    "solitaire": {
        "game_created": _solitaire_created,
        "seat_taken": _seat_taken,
        "layout_dealt": _layout_dealt,
        "card_moved": _card_moved,
        "redealt": _redealt,
        "undone": _undone,
        "game_won": _solitaire_won,
        "game_lost": _solitaire_lost,
        "game_closed": _solitaire_closed,
    },
    "monopoly": {
        "game_created": _game_created,
        "seat_taken": _seat_taken,
        "turn_began": _monopoly_turn_began,
        "game_ended": _monopoly_ended,
        "game_closed": _closed,
    },
}
"""Per kind, the events that change the scores (every other event only moves the version)."""


# --- reading ---------------------------------------------------------------------------------


async def load(store: Store, game_id: str) -> tuple[int, Scores | None]:
    """The checkpoint and the scores stored with it, read together (``0, None`` before the first apply)."""
    applied, model = await store._read(store.r.hmget(store.keys.game_projection("scores", game_id), "applied", "model"))
    return int(applied or 0), decode(model) if model else None


async def load_many(store: Store, game_ids: Sequence[str]) -> list[tuple[int, Scores | None]]:
    """``load`` of several games in one round trip."""
    pipe = store.r.pipeline(transaction=False)
    for game_id in game_ids:
        pipe.hmget(store.keys.game_projection("scores", game_id), "applied", "model")
    replies = await store._read(pipe.execute()) if game_ids else []
    return [(int(applied or 0), decode(model) if model else None) for applied, model in replies]


async def read_scores(store: Store, game_id: str) -> tuple[Scores | None, int]:
    """A game's scores and the version they reflect (``None, 0``: not projected yet, or no such game)."""
    applied, model = await load(store, game_id)
    return model, applied
