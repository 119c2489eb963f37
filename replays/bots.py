"""Every server bot's move re-derived from its own seat (docs/fairness.md, "Bots that never peek").

A bot seated from ``bot_version`` 1 on is asked on a world of its seat's own — every place it cannot see dealt afresh
from its own randomness (``service/bots/sight.py``) — so its move is a function of what its seat knows, that
randomness and its recorded parameters. Re-deciding the game gives the true table before each of its moves; the seat's
world is dealt from it exactly as the service dealt it, and the bot must choose exactly the recorded command. A bot
that read another hand, the next card of a deck or the next dice chose on what its world does not hold, and in all
but a few deals comes out otherwise: the log is refused at that move, naming it. Bots seated before version 1 were
asked on the true table: their moves are reported as not checkable, and the log verifies as before.
"""

from __future__ import annotations

from typing import Any

import msgspec

from service.events.envelope import NULL, Envelope, actor_seat
from service.rules.engine import Game

from .verdict import fail


class BotReport(msgspec.Struct, kw_only=True):
    checked: int = 0
    """Bot moves re-derived from their seats' own worlds."""
    unchecked: list[int] = []
    """Seats of bots seated before bots were checkable (no ``bot_version``)."""

    def words(self) -> str:
        text = f"{self.checked} bot moves re-derived from their seats' own views" if self.checked else ""
        if self.unchecked:
            seats = ", ".join(map(str, self.unchecked))
            text += ("; " if text else "") + f"the bot moves of seats {seats} were played before bots were checkable"
        return text


SIGHTED = 1
"""``service.bots.sight.SIGHTED``, repeated: the bots are imported only for a log that has one to re-derive, so that
a log of people alone (or of bots from before) verifies with nothing that played it (tests/replays/test_golden.py)."""


def check(game: Game, envelopes: list[Envelope]) -> BotReport:
    """Fold ``envelopes`` into ``game`` (new, at version 0), re-deriving each bot's command before its batch is
    folded; ``Rejected`` at the first that does not come out the same."""
    report, bots, unchecked = BotReport(), {}, set()
    _versions_alike(envelopes)
    i = 0
    while i < len(envelopes):
        first = envelopes[i]
        j = i + 1
        while j < len(envelopes) and envelopes[j].command == NULL:
            j += 1
        seat = actor_seat(first.actor)
        player = game.state.seats[seat].player if seat is not None and seat < len(game.state.seats) else None
        if player is not None and player.bot:
            if player.bot_version is None:
                unchecked.add(seat)
            elif player.bot_version > SIGHTED:  # not "from before": a version no service this verifier knows wrote
                fail(first.seq, f"bot seated (seat {seat}'s {player.bot} bot)", f"bot_version {SIGHTED} or none",
                     f"bot_version {player.bot_version}, which this verifier cannot re-derive", ("known", "the log has"))
            else:
                from service.bots import bot, unfit

                why = unfit(game.rules.KIND, player.bot, player.bot_params)
                if why is not None:  # never made: a name, a parameter or a search no service seats
                    fail(first.seq, f"bot seated (seat {seat}'s {player.bot} bot)", "a bot the service seats", why,
                         ("known", "the log has"))
                mine = bots.get(player) or bots.setdefault(player, bot(game.rules.KIND, player.bot, player.bot_params))
                _same(game, seat, mine, first)
                report.checked += 1
        game.fold(envelopes[i:j])
        i = j
    report.unchecked = sorted(unchecked)
    return report


def _versions_alike(envelopes: list[Envelope]) -> None:
    """The service seats every bot of a table the same way: a table where some bots record a version and another none
    had a version taken out, to pass a bot's moves off as "played before bots were checkable"."""
    seated = [(e.seq, msgspec.json.decode(e.public).get("player") or {}) for e in envelopes if e.type == "seat_taken"]
    bots = [(seq, p.get("bot_version")) for seq, p in seated if isinstance(p, dict) and p.get("bot")]
    if any(v is not None for _, v in bots):
        for seq, version in bots:
            if version is None:
                fail(seq, "bot seated without a bot_version (the other bots of this table have one)",
                     "a bot_version, as the service records for every bot it seats", "none")


def _same(game: Game, seat: int, player: Any, first: Envelope) -> None:
    """The command ``player`` (seat ``seat``'s bot) chooses on its own world, against the one recorded at ``first``."""
    from service.bots.sight import decide

    chosen = decide(player, game.rules, game.state, seat, game.game_id)
    mine = game.codec.command_body(chosen) if chosen is not None else b"nothing (it lets the moment pass)"
    recorded = bytes(first.command)
    if mine != recorded:
        name = game.state.seats[seat].player.bot
        fail(first.seq, f"bot move (seat {seat}'s {name} bot chose what its own view does not give)",
             mine.decode(errors="replace"), recorded.decode(errors="replace"),
             (f"its own view gives", f"the log has it choose"))
