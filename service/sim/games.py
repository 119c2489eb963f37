"""Bot games played in memory, for ``python -m service simulate`` and ``make run``: no store, no HTTP."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field

from service.bots import Bot, bot, params_of, seated
from service.bots.sight import SIGHTED, bot_move
from service.events.base import Player
from service.events.common import Create, Resign, Seeding, TakeSeat, Timeout
from service.events.envelope import Envelope
from service.rules.engine import Game, rules_for
from service.rules.resign import is_resign

START_AT = 1_767_225_600_000  # 2026-01-01T00:00:00Z: simulated games keep a fixed clock so they replay byte for byte
STEP_MS = 1_000


@dataclass
class Simulation:
    """One game between bots: its ``game`` (state and head) and every envelope it produced."""

    game: Game
    envelopes: list[Envelope] = field(default_factory=list)
    at: int = START_AT

    def send(self, command, seat: int | None) -> list[Envelope]:
        self.at += STEP_MS
        out = self.game.play(command, seat, self.at)
        self.envelopes += out
        return out


def new_game(
    kind: str,
    seats: int,
    seed: bytes,
    game_id: str,
    bots: list[str],
    options: dict | None = None,
    rules_version: int | None = None,
    *,
    seeding: Seeding = "legacy",
    client_seeds: dict[int, bytes] | None = None,
    checkable: bool = False,
) -> Simulation:
    """A game created and seated with ``bots``, under the kind's current rules unless ``rules_version`` says which.

    ``checkable``: the bots' seats record their version and parameters, as the service seats them, so that
    ``replays verify`` re-derives their moves (with their defaults: a league's budget is not recorded).
    ``seeding`` is the game's (``docs/rng.md``): by default ``legacy``, the seed used as is, which is what every
    recorded simulation replays; ``combined`` seats seat *i* with ``client_seeds[i]`` where given (else derived)."""
    rules = rules_for(kind)
    config = rules.CONFIG(seats=seats, **(options or {}))
    sim = Simulation(Game.new(kind, game_id, config, seed, rules_version))
    sim.send(Create(seeding=seeding), None)
    for i, name in enumerate(bots):
        brought = (client_seeds or {}).get(i)
        seated = dict(bot_version=SIGHTED, bot_params=params_of(kind, name)) if checkable else {}
        player = Player(name=f"{name}-{i}", bot=name, **seated)
        sim.send(TakeSeat(player=player, client_seed=brought.hex() if brought else None), None)
    return sim


def play(
    sim: Simulation,
    bots: list[str],
    rnd: random.Random,
    *,
    timeouts: float = 0.0,
    turn_timeouts: float = 0.0,
    max_commands: int = 20_000,
    players: list[Bot] | None = None,
    bot_key: str | None = None,
    resigns: float = 0.0,
) -> Iterator[Envelope]:
    """Play until the game ends; with ``timeouts`` > 0 that share of waits is left to the server's deadline, and with
    ``turn_timeouts`` > 0 that share of turns with a turn clock (option ``turn_seconds``) to the server's default.

    ``players`` are bots already built, for a caller that sets them up (a search budget); by default each
    seat's bot is built from its name in ``bots``. Each bot plays the player it was seated as, wherever a trade of
    places moves that player (as the service's bots do): a bot that stayed with its seat would play its opponent's
    game after a trade, and a league would credit it with the other bot's play. Each bot is asked as the service asks
    it (``service/bots/sight.py``): on a world of its own seat, with randomness drawn from ``bot_key`` (the game's id
    by default: two games played with one key and one seed are played alike). With ``resigns`` > 0, that share of
    moments a seat still in resigns (bots never resign: this is for tests of the rule; 0 draws nothing, so a game
    without it plays as it always did)."""
    rules = sim.game.rules
    players = players or [bot(rules.KIND, name) for name in bots]
    playing = {st.player: p for st, p in zip(sim.game.state.seats, players, strict=True)}
    for _ in range(max_commands):
        s = sim.game.state
        if rules.status_of(s) == "finished":
            return
        if s.pending is not None and rnd.random() < timeouts:
            sim.at = max(sim.at, s.pending.deadline_at - STEP_MS)
            yield from sim.send(Timeout(), None)
            continue
        clock = getattr(rules, "turn_deadline", None)
        due = clock(s) if turn_timeouts and clock is not None else None
        if due is not None and rnd.random() < turn_timeouts:
            sim.at = max(sim.at, due - STEP_MS)
            yield from sim.send(Timeout(), None)
            continue
        if resigns and rnd.random() < resigns:
            can = [q for q in range(len(s.seats)) if any(is_resign(c) for c in rules.legal_commands(s, q))]
            if can:
                yield from sim.send(Resign(), rnd.choice(can))
                continue
        move = bot_move(rules, s, dict(enumerate(seated(playing, s))), bot_key or sim.game.game_id)
        if move is None:
            raise RuntimeError(f"no seat can act at version {s.version}")
        yield from sim.send(move[1], move[0])
    raise RuntimeError(f"game {sim.game.game_id} did not end within {max_commands} commands")


def simulate(kind: str, seats: int, seed: bytes, game_id: str, bots: list[str], rnd_seed: int = 0, **kw) -> Simulation:
    sim = new_game(kind, seats, seed, game_id, bots)
    for _ in play(sim, bots, random.Random(rnd_seed), **kw):
        pass
    return sim
