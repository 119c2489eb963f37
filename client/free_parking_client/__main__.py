"""``python -m free_parking_client play BOT``: play a bot of your own against the service (the bot kit, ``kit.py``).

    python -m free_parking_client play mybot:MyBot --url http://127.0.0.1:8000 --kind free-parking --games 20

``BOT`` is ``module:Class`` (the module importable from here) or ``path/to/file.py:Class``. The kit registers a bot
account on its first run (kept in ``OUT/player.json``, so the next run goes on as the same player and its rating goes
on too), queues for games (solitaire: creates its own), plays them, prints each result (with a progress bar on a
terminal), then the bot's rating, and writes each game's log and receipts to ``--out`` with the ``replays verify``
command that checks them.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import importlib.util
import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from .client import AsyncClient
from .errors import ApiError
from .kit import Bot, BotFailed, Kit, Plan, Played
from . import saved
from .signing import PlayerKey


def load_bot(spec: str) -> Callable[[], Bot]:
    """The bot class ``spec`` names: ``module:Class``, or ``file.py:Class`` (its folder goes on the path, so the
    modules beside it import)."""
    where, _, name = spec.rpartition(":")
    if not where or not name:
        raise SystemExit(f"BOT is module:Class or path/to/file.py:Class, not {spec!r}")
    if where.endswith(".py"):
        path = Path(where).resolve()
        if not path.exists():
            raise SystemExit(f"no such file: {where}")
        sys.path.insert(0, str(path.parent))
        loaded = importlib.util.spec_from_file_location(path.stem, path)
        assert loaded is not None and loaded.loader is not None
        module = importlib.util.module_from_spec(loaded)
        sys.modules[path.stem] = module
        loaded.loader.exec_module(module)
    else:
        sys.path.insert(0, str(Path.cwd()))
        module = importlib.import_module(where)
    made = getattr(module, name, None)
    if made is None:
        raise SystemExit(f"{where} has no {name}")
    return made


class Progress:
    """A line a finished game; on a terminal, a bar below them that each game moves on."""

    WIDTH = 30

    def __init__(self, total: int, out: Any = None) -> None:
        self.total, self.done, self.won = total, 0, 0
        self.out = out or sys.stdout
        self.tty = self.out.isatty()
        self._bar()

    def _bar(self) -> None:
        if self.tty:
            filled = self.WIDTH * self.done // self.total
            self.out.write(f"\r[{'#' * filled}{'.' * (self.WIDTH - filled)}] {self.done}/{self.total} games")
            self.out.flush()

    def game(self, played: Played) -> None:
        self.done += 1
        self.won += played.won
        line = (f"[{self.done:>{len(str(self.total))}}/{self.total}] {played.game_id} "
                f"{'won ' if played.won else 'lost'} ({played.ended_by}) — won {self.won} of {self.done}")
        self.out.write(("\r\033[K" if self.tty else "") + line + "\n")
        self._bar()

    def close(self) -> None:
        if self.tty:
            self.out.write("\r\033[K")
            self.out.flush()


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m free_parking_client", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    play = commands.add_parser("play", help="play a bot of your own: queue, play, print results and rating")
    play.add_argument("bot", help="module:Class, or path/to/file.py:Class (a free_parking_client.kit.Bot)")
    play.add_argument("--url", default="http://127.0.0.1:8000", help="the service (default: %(default)s)")
    play.add_argument("--kind", required=True, choices=("free-parking", "monopoly", "solitaire"))
    play.add_argument("--games", type=int, default=20, help="games to play (default: %(default)s)")
    play.add_argument("--seats", type=int, help="seats a table (the queue's default: 4)")
    play.add_argument("--options", type=json.loads, help='the game\'s options as JSON, e.g. \'{"max_rounds": 20}\'')
    play.add_argument("--parallel", type=int, default=1, help="games at once (default: %(default)s)")
    play.add_argument("--name", help="the player's name (default: the bot's class name)")
    play.add_argument("--out", type=Path, default=Path("bot-games"), help="where each game's log and receipts go")
    play.add_argument("--key", type=Path, help="the player's key file, made if missing (default: OUT/bot.key)")
    play.add_argument("--player", type=Path, help="the player this bot plays as, registered and kept there on the first "
                                                  "run, played again by the next (default: OUT/player.json)")
    args = parser.parse_args(argv)
    if args.games < 1 or args.parallel < 1:
        parser.error("--games and --parallel are 1 or more")
    return args


async def play(args: argparse.Namespace, make_bot: Callable[[], Bot]) -> list[Played]:
    args.out.mkdir(parents=True, exist_ok=True)
    key = PlayerKey.load_or_create(args.key or args.out / "bot.key")
    name = args.name or getattr(make_bot, "__name__", "bot")
    path = args.player or args.out / "player.json"
    async with AsyncClient(args.url, key=key) as client:
        player, again = await _player(client, path, args.url, name, key)
        print(f"{name} (player {player.player_id}{', as before' if again else ''}) plays {args.games} {args.kind} "
              f"game(s) at {args.url}", flush=True)
        progress = Progress(args.games)
        plan = Plan(args.kind, args.games, args.out, args.seats, args.options, args.parallel, after=player.last_event)
        kit = Kit(client, make_bot, plan, on_game=progress.game)
        try:
            played = await kit.run()
        finally:
            progress.close()
            if kit.last_event != player.last_event:  # the next run reads the player's stream from here
                saved.save(path, msgspec.structs.replace(player, last_event=kit.last_event))
        won = sum(p.won for p in played)
        print(f"won {won} of {len(played)}")
        rating = await kit.rating() if args.kind != "solitaire" else None
        if args.kind == "solitaire":
            print("a solitaire is not rated")
        elif rating is None:
            print(f"no rating yet in {args.kind} (no rated game)")
        else:
            print(f"rating in {args.kind}: {rating.rating:.2f} (mu {rating.mu:.2f}, sigma {rating.sigma:.2f}, "
                  f"{rating.games} rated game(s))")
    _tell_verify(args.out, played)
    return played


async def _player(client: AsyncClient, path: Path, url: str, name: str, key: PlayerKey) -> tuple[saved.SavedPlayer, bool]:
    """The player kept at ``path`` where it still fits (this service knows it, this key keys it), else a bot account
    registered now and kept there; and whether it played here before."""
    kept = saved.load(path)
    if kept is not None and kept.fits(url, key.public_key):
        try:
            await client.resume(kept.player_id, kept.token, kept.public_key)
            return kept, True
        except ApiError as e:
            if e.status not in (401, 404):
                raise
            print(f"{path}: the service no longer knows player {kept.player_id} ({e.code}): registering a new one")
    elif kept is not None:
        print(f"{path}: player {kept.player_id} was registered at {kept.url} with another key: registering a new one")
    created = await client.register(name, account="bot")
    player = saved.SavedPlayer(url=saved.same_url(url), player_id=created.player_id, token=created.token,
                               name=created.name, account=created.account, public_key=key.public_key)
    saved.save(path, player)
    return player, False


def _tell_verify(out: Path, played: list[Played]) -> None:
    lines = [shlex.join([sys.executable, "-m", "replays", "verify", *p.verify]) for p in played]
    (out / "verify.sh").write_text("".join(f"{line}\n" for line in lines))
    print(f"each game's log and receipts are in {out}/; check one from the service's repository with:\n  {lines[0]}\n"
          f"(every game's command: {out / 'verify.sh'})")


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    make_bot: Any = load_bot(args.bot)
    try:
        asyncio.run(play(args, make_bot))
    # the bot's failure, the service's refusal (a kind's unknown option...), or a --player file that is not one
    except (BotFailed, ApiError, saved.NotAPlayerFile) as e:
        print(f"stopped: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
