"""The bot kit: write a ``Bot`` (its ``act`` chooses a command from the view), and ``Kit`` plays it for you.

The kit registers a player, reads the player's stream (docs/player-stream.md) and acts on every game the player is
seated at, several at once: each ``turn`` it reads the view, asks the bot, sends the answer (``Client.act``: signed,
checked against ``legal``, retried), and goes on while the seat still has a move. It queues for the next game until
it has started as many as asked (docs/queue.md); a solitaire has no queue, so the kit creates its own games. When a
game ends it writes the game's log, its receipts and the service's keys, and keeps the ``replays verify`` command
that checks them; ``python -m free_parking_client play`` (``__main__.py``) is the same from the command line.

    class FirstMove(Bot):
        def act(self, view):
            return view.playable[0]     # any command of ``legal`` but resign
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .client import AsyncClient
from .errors import ApiError, NotLegal
from .models import GameEvent, GameOver, KindRating, PlayerEvent, QueueEvent, Seated, Turn, View

Command = dict[str, Any]


class Bot:
    """A bot: one is made for each game (so what it remembers is that game's), ``start`` is told the first view the
    kit reads, ``act`` is asked whenever the seat has a move, ``end`` is told the last view and whether it won.

    ``view`` is the client's typed view (``FreeParkingView``, ``MonopolyView``, ``SolitaireView``); ``view.raw`` is
    the JSON exactly as ``GET /games/{id}`` gave it, ``view.playable`` its ``legal`` less ``resign``. ``act`` returns
    a command (one of ``legal``, or for a bid, a build order, a claim or a trade offer one that ``legal_forms`` admits)
    or ``None``: nothing now — the kit asks again when the game moves on. An answer the game awaits (a response, a
    bid) does not wait for ever: at its deadline the server plays its default. ``act`` may be ``async``; a plain one
    runs in a thread, so a slow search holds up no other game."""

    def start(self, view: View) -> None:
        """A new game: ``view`` is the first the kit read."""

    def act(self, view: View) -> Command | None:
        raise NotImplementedError("a Bot chooses its command in act(view)")

    def end(self, view: View, won: bool) -> None:
        """The game is over: ``view`` is its last."""


class BotFailed(Exception):
    """The bot raised, or chose a command the view does not admit: the run stops and says where."""

    def __init__(self, game_id: str, version: int, cause: BaseException) -> None:
        super().__init__(f"the bot failed in game {game_id} at version {version}: {cause!r}")
        self.game_id, self.version = game_id, version


@dataclass
class Played:
    """One finished game: how it ended for the bot, and where its evidence is."""

    game_id: str
    kind: str
    seat: int | None
    won: bool
    ended_by: str
    """The event that ended it: the card game's ``game_won``, Monopoly's ``game_ended``, ``game_closed`` (nobody
    moved for the idle time); a solitaire's ``game_won`` or ``game_lost``."""
    rated: bool
    log: Path
    receipts: Path
    verify: list[str]
    """The arguments of ``python -m replays verify`` that check the game against what the kit kept."""


@dataclass
class Plan:
    """What to play: ``games`` games of ``kind`` (``seats`` and ``options`` as the queue or ``POST /games`` takes
    them), ``parallel`` at once, their evidence written to ``out``."""

    kind: str
    games: int
    out: Path
    seats: int | None = None
    options: dict[str, Any] | None = None
    parallel: int = 1
    after: str | None = None
    """Where the player's stream is read from: the id of the last event an earlier run of this player read
    (``Kit.last_event``); ``None``: from the oldest kept — for a player that has played before, that replays
    notices of games long over."""


@dataclass
class _Game:
    game_id: str
    bot: Bot | None = None
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    over: GameOver | None = None
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None
    events: AsyncIterator[GameEvent] | None = None
    """The game's event stream, opened the first time the bot lets a moment pass, and kept open until the end."""
    ours: bool = False
    """Started by this run (a solitaire it made, a queue entry it made) — not a seat its stream told of, which may
    be a game an earlier run of the player left, over by now."""


class Kit:
    """Plays ``plan`` with a bot made by ``make_bot`` (a ``Bot`` subclass, or any callable making one) as the player
    ``client`` is registered as. ``on_game`` is told of each game as it finishes."""

    def __init__(self, client: AsyncClient, make_bot: Callable[[], Bot], plan: Plan,
                 on_game: Callable[[Played], None] | None = None) -> None:
        self.client, self.make_bot, self.plan, self.on_game = client, make_bot, plan, on_game
        self.games: dict[str, _Game] = {}
        self.played: list[Played] = []
        self.queued = False
        self.keys_file = plan.out / "keys.json"
        self._done = asyncio.Event()
        self._rated_before = 0  # the player's rated games in the plan's kind before this run
        self.last_event: str | None = plan.after
        """The id of the last event read from the player's stream: the next run of this player reads from there."""
        self._past: set[str] = set()  # games its stream told of that were over before this run looked
        self._starting = asyncio.Lock()
        self._failed: BaseException | None = None

    @property
    def solitaire(self) -> bool:
        return self.plan.kind == "solitaire"

    async def run(self) -> list[Played]:
        """Play until ``plan.games`` games are over; their ``Played`` in the order they finished."""
        self.plan.out.mkdir(parents=True, exist_ok=True)
        self.keys_file.write_text(json.dumps(await self.client.keys()))
        self._rated_before = await self._rated_games()  # a player kept from an earlier run has its games counted
        stream = asyncio.create_task(self._follow())
        try:
            await self._more()
            waiting = asyncio.create_task(self._done.wait())
            await asyncio.wait({waiting, stream}, return_when=asyncio.FIRST_COMPLETED)
            waiting.cancel()
            if stream.done():
                stream.result()  # the stream's error, raised here
            if self._failed is not None:
                raise self._failed
        finally:
            stream.cancel()
            for game in self.games.values():
                if game.task is not None:
                    game.task.cancel()
            await asyncio.gather(stream, *(g.task for g in self.games.values() if g.task), return_exceptions=True)
            if self.queued:
                await self.client.leave_queue()
        return self.played

    async def rating(self, settle: float = 30.0) -> KindRating | None:
        """The player's rating in the plan's kind once it counts every rated game played (ratings are a read model:
        it lags the games a moment), or as it stands after ``settle`` seconds; ``None`` when it has none."""
        rated = sum(p.rated for p in self.played)
        for _ in range(max(1, int(settle / 0.5))):
            rating = await self._rating_now()
            if rated == 0 or (rating is not None and rating.games >= self._rated_before + rated):
                return rating
            await asyncio.sleep(0.5)
        return rating

    async def _rating_now(self) -> KindRating | None:
        assert self.client.player_id is not None
        return (await self.client.player(self.client.player_id)).ratings.get(self.plan.kind)

    async def _rated_games(self) -> int:
        rating = await self._rating_now()
        return 0 if rating is None else rating.games

    # --- starting games ------------------------------------------------------------------------------------------

    def _active(self) -> int:
        return sum(1 for g in self.games.values() if not g.ended.is_set())

    async def _more(self) -> None:
        """Start games while fewer than ``parallel`` are on and fewer than ``games`` started: queue for one (one
        queue entry at a time), or create and join a solitaire."""
        async with self._starting:
            await self._start_games()

    async def _start_games(self) -> None:
        while len(self.games) < self.plan.games and self._active() < self.plan.parallel:
            if self.solitaire:
                created = await self.client.create_game("solitaire", options=self.plan.options)
                self._game(created.game_id).ours = True
                await self.client.join(created.game_id)
                self._wake(created.game_id)
            elif not self.queued:
                self.queued = True
                await self.client.join_queue(self.plan.kind, self.plan.seats, self.plan.options)
                return
            else:
                return

    def _game(self, game_id: str) -> _Game:
        game = self.games.get(game_id)
        if game is None:
            game = self.games[game_id] = _Game(game_id)
            game.task = asyncio.create_task(self._play(game))
            game.task.add_done_callback(self._task_done)
        return game

    def _task_done(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None and self._failed is None:
            self._failed = task.exception()
            self._done.set()

    def _wake(self, game_id: str, ours: bool = False) -> None:
        if game_id in self._past:
            return
        game = self._game(game_id)
        game.ours = game.ours or ours
        game.wake.set()

    # --- the player's stream -------------------------------------------------------------------------------------

    async def _follow(self) -> None:
        async for event in self.client.player_events(after=self.plan.after):
            self.last_event = event.id or self.last_event
            await self._told(event)

    async def _told(self, event: PlayerEvent) -> None:
        if isinstance(event, QueueEvent):
            queued = self.queued
            if event.status in ("seated", "cancelled", "left"):
                self.queued = False
            if event.status == "seated" and event.game_id is not None:
                self._wake(event.game_id, ours=queued)
            await self._more()
        elif isinstance(event, (Seated, Turn)):
            if event.game_id in self.games or len(self.games) < self.plan.games:
                self._wake(event.game_id)
        elif isinstance(event, GameOver) and event.game_id in self.games:
            game = self.games[event.game_id]
            game.over = event
            game.ended.set()
            game.wake.set()

    # --- playing a game ------------------------------------------------------------------------------------------

    async def _play(self, game: _Game) -> None:
        """Act whenever the seat has a move, until the game is over; then keep its evidence."""
        await game.wake.wait()
        while True:
            game.wake.clear()
            view = await self.client.view(game.game_id)
            if game.bot is None and view.finished and not game.ours:
                self._past.add(game.game_id)  # an earlier run's game, over before this run looked: not this run's
                del self.games[game.game_id]
                await self._more()
                return
            if game.bot is None:
                game.bot = self.make_bot()
                game.bot.start(view)
            view = await self._moves(game, view)
            if view.finished:
                break
            await game.wake.wait()
        await game.ended.wait()
        if game.events is not None:
            await game.events.aclose()  # type: ignore[attr-defined]
        await self._finish(game, view)

    async def _moves(self, game: _Game, view: View) -> View:
        """Ask the bot while the seat has a move; when it lets the moment pass, wait for the game's next event and
        ask again (the stream tells a ``turn`` only when moves go from none to some)."""
        while view.playable and not view.finished:
            command = await self._ask(game, view)
            if command is None:
                view = await self._next(game, view.version)
                continue
            try:
                view = (await self.client.act(game.game_id, command, view=view)).view
            except ApiError as e:
                if not e.conflict:
                    raise BotFailed(game.game_id, view.version, e) from e
                view = await self.client.view(game.game_id)  # the game moved on: decide anew
            except NotLegal as e:
                raise BotFailed(game.game_id, view.version, e) from e
        return view

    async def _ask(self, game: _Game, view: View) -> Command | None:
        assert game.bot is not None
        try:
            if inspect.iscoroutinefunction(game.bot.act):
                return await game.bot.act(view)
            return await asyncio.to_thread(game.bot.act, view)
        except Exception as e:
            raise BotFailed(game.game_id, view.version, e) from e

    async def _next(self, game: _Game, version: int) -> View:
        """The view once the game has moved past ``version`` (or ended), told by the game's event stream."""
        if game.events is None:
            game.events = self.client.game_events(game.game_id, after=version)
        async for event in game.events:
            if event.seq > version:
                break
        return await self.client.view(game.game_id)

    async def _finish(self, game: _Game, view: View) -> None:
        """Write the game's log and receipts, tell the bot, and count the game."""
        over = game.over
        assert over is not None and game.bot is not None
        log = self.plan.out / f"{game.game_id}.ndjson"
        receipts = self.plan.out / f"{game.game_id}.receipts.json"
        log.write_bytes(await self.client.export(game.game_id))
        self.client.receipts.write(receipts, game.game_id)
        won, ended_by = outcome(view, over)
        game.bot.end(view, won)
        played = Played(game.game_id, view.kind, view.seat, won, ended_by, over.rated, log, receipts,
                        self.client.receipts.verify_args(game.game_id, log, receipts, self.keys_file))
        self.played.append(played)
        if self.on_game is not None:
            self.on_game(played)
        if len(self.played) >= self.plan.games:
            self._done.set()
        else:
            await self._more()


def outcome(view: View, over: GameOver) -> tuple[bool, str]:
    """Whether the seat won, and the event that ended the game, read off the last view: a solitaire is won or lost
    (its ``result``), any other game won by its ``winner``. (The stream's ``game_over`` of a solitaire names neither:
    its won game reads as not won, its lost one as ended by ``seed_revealed``.)"""
    if view.kind == "solitaire":
        won = view.raw.get("result") == "won"
        return won, "game_won" if won else "game_lost"
    return view.winner is not None and view.winner == view.seat, str(over.result.get("ended_by", ""))
