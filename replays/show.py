"""Step through an exported log and compare two: ``python -m replays show`` and ``python -m replays diff``.

Both fold the recorded events (the projection replay: no command is re-decided, nothing is verified —
``python -m replays verify`` does that) and draw the table with ``render``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import msgspec
from rich.console import Console
from rich.text import Text

from service.events.envelope import NULL, Envelope, canonical
from service.events.export import ExportHeader
from service.rules.engine import Game, audit_lines, rules_for

from .render import render
from .difference import diffs

Log = tuple[ExportHeader, list[Envelope]]


class Unreadable(ValueError):
    """The log cannot be folded at all (unknown kind, a config these rules do not read)."""


class FoldError(ValueError):
    """An event the rules cannot fold (a tampered or redacted log): the table stops before it."""

    def __init__(self, seq: int, error: Exception) -> None:
        super().__init__(f"seq {seq} cannot be folded: {type(error).__name__}: {error}")
        self.seq = seq


def new_game(header: ExportHeader) -> Game:
    """The game before its first event. Folding reads no randomness, so a log without its seed folds as well."""
    try:
        rules = rules_for(header.kind)
        config = msgspec.json.decode(header.config, type=rules.CONFIG)
    except (ValueError, msgspec.DecodeError) as e:
        raise Unreadable(str(e)) from None
    seed = bytes.fromhex(header.seed) if header.seed and _is_hex(header.seed) else bytes(32)
    return Game.new(header.kind, header.game_id, config, seed, header.rules_version)


def _is_hex(text: str) -> bool:
    try:
        bytes.fromhex(text)
    except ValueError:
        return False
    return True


def fold(game: Game, envelopes: list[Envelope]) -> Game:
    """Fold ``envelopes`` one by one into ``game``; ``FoldError`` names the first that fails."""
    for env in envelopes:
        try:
            game.fold([env])
        except Exception as e:  # a tampered event may break evolve in any way
            raise FoldError(env.seq, e) from None
    return game


def audit_line(game: Game, env: Envelope) -> str:
    """The event's audit line, its hidden part spelled out (an export is the full record)."""
    try:
        return audit_lines(game.rules, [env], reveal=True)[0]
    except Exception:  # an event these rules cannot read: show it raw
        return f"{env.seq}  {env.actor}  {env.type} {bytes(env.public).decode(errors='replace')}  {env.hash[:12]}"


def redacted(envelopes: list[Envelope]) -> bool:
    """Whether the log withholds a secret (a player's or spectator's export): its tables lack the hidden parts."""
    return any(env.secret_digest is not None and env.secret == NULL for env in envelopes)


REDACTED = "this log is redacted: hands and deck orders are not in it, so the tables show public facts only"


def table_console(**kw: Any) -> Console:
    """A console for tables: the terminal's width, or 160 columns when the output goes to a file or a pipe."""
    console = Console(highlight=False, **kw)
    if not console.is_terminal and "COLUMNS" not in os.environ and "width" not in kw:
        console = Console(highlight=False, width=160, **kw)
    return console


def _print(console: Console, text: str, style: str | None = None) -> None:
    console.print(Text(text, style=style or ""), soft_wrap=True)


# --- show -----------------------------------------------------------------------------------------------


def show(console: Console, log: Log, *, at: int | None, step: bool, to: int | None) -> int:
    """The table after event ``at`` (default: the last); with ``step``, each event from ``at`` (default: the
    first) to ``to`` (default: the last), its audit line and then the table after it. 0 shown, 2 out of range."""
    header, envelopes = log
    n = len(envelopes)
    start = (0 if step else n) if at is None else at
    end = n if to is None else to
    if not 0 <= start <= n:
        _print(console, f"--at {start}: this log has events 1 to {n}")
        return 2
    if step and not start <= end <= n:
        _print(console, f"--to {end}: expected a seq from {start} to {n}")
        return 2
    game = new_game(header)
    _print(console, f"{header.kind} game {header.game_id}: {n} events, head {header.head[:12]}", "bold")
    if redacted(envelopes):
        _print(console, f"({REDACTED})")
    try:
        fold(game, envelopes[: max(start - 1, 0)])
        if not step and start == 0:
            _print(console, "before the first event")
            console.print(render(game))
        for env in envelopes[max(start, 1) - 1 : end if step else start]:
            _step(console, game, env)
    except FoldError as e:
        _print(console, str(e), "bold red")
        return 1
    return 0


def _step(console: Console, game: Game, env: Envelope) -> None:
    _print(console, audit_line(game, env), "bold")
    fold(game, [env])
    console.print(render(game))
    console.print()


# --- diff -----------------------------------------------------------------------------------------------


@dataclass
class Parting:
    """Where two logs of one game part: ``seq`` (``None``: identical), and how."""

    how: str  # "identical" | "prefix" | "differ" | "different games"
    seq: int | None = None
    note: str = ""


def _comparable(a: Envelope, b: Envelope) -> tuple[bytes, bytes]:
    """Canonical bytes of both; a secret one log withholds (redacted: ``null``) is not a difference, its digest is."""
    if a.secret == NULL or b.secret == NULL:
        a, b = msgspec.structs.replace(a, secret=NULL), msgspec.structs.replace(b, secret=NULL)
    return canonical(a), canonical(b)


def parting(a: Log, b: Log) -> Parting:
    (ha, ea), (hb, eb) = a, b
    if (ha.kind, ha.game_id) != (hb.kind, hb.game_id):
        return Parting("different games", note=f"A is {ha.kind} game {ha.game_id}, B is {hb.kind} game {hb.game_id}")
    for x, y in zip(ea, eb, strict=False):
        left, right = _comparable(x, y)
        if left != right:
            return Parting("differ", x.seq)
    if len(ea) == len(eb):
        return Parting("identical")
    return Parting("prefix", min(len(ea), len(eb)) + 1)


def field_differences(a: Envelope, b: Envelope) -> list[str]:
    """``path: A's value ≠ B's value`` for every field where the two envelopes differ (into public, secret, command)."""

    ta, tb = msgspec.json.decode(canonical(a)), msgspec.json.decode(canonical(b))
    if a.secret == NULL or b.secret == NULL:
        ta.pop("secret", None), tb.pop("secret", None)

    def show(v: Any) -> str:
        return "(none)" if v is ... else canonical(v).decode()

    return [f"{path}: {show(x)} ≠ {show(y)}" for path, x, y in diffs(ta, tb, "")]


def diff(console: Console, a: Log, b: Log, names: tuple[str, str] = ("A", "B")) -> int:
    """0 identical; 1 they part (or are different games)."""
    p = parting(a, b)
    (ha, ea), (hb, eb) = a, b
    na, nb = names
    if p.how == "different games":
        _print(console, f"different games: {p.note}")
        return 1
    if p.how == "identical":
        _print(console, f"identical: {len(ea)} events, head {ea[-1].hash[:12] if ea else '-'}")
        for name, envs in ((na, ea), (nb, eb)):
            if redacted(envs):
                _print(console, f"({name} withholds the secrets; their digests are the same)")
        if (ha.seed is None) != (hb.seed is None):
            _print(console, f"(only {na if ha.seed else nb} has the seed in its header)")
        return 0
    for name, envs in ((na, ea), (nb, eb)):
        if redacted(envs):
            _print(console, f"({name}: {REDACTED}; a withheld secret is compared by its digest)")
    assert p.seq is not None
    seq = p.seq
    if p.how == "prefix":
        short, long_, sn, ln = (ea, eb, na, nb) if len(ea) < len(eb) else (eb, ea, nb, na)
        _print(console, f"{sn} is a prefix of {ln}: they agree on seqs 1–{len(short)}; {ln} goes on to seq {len(long_)}")
        game = fold(new_game(hb if long_ is eb else ha), long_[: seq - 1])
        _print(console, f"{ln}'s next event:", "bold")
        _print(console, audit_line(game, long_[seq - 1]))
        return 1
    _print(console, f"the logs part at seq {seq}: they agree on seqs 1–{seq - 1}", "bold")
    x, y = ea[seq - 1], eb[seq - 1]
    for name, header, envs, env in ((na, ha, ea, x), (nb, hb, eb, y)):
        game = new_game(header)
        try:
            fold(game, envs[: seq - 1])
        except FoldError:
            pass  # the audit line needs only the rules; the table below says what failed
        _print(console, f"{name}: {audit_line(game, env)}")
    _print(console, f"fields that differ ({na} ≠ {nb}):", "bold")
    for line in field_differences(x, y):
        _print(console, f"  {line}")
    for name, header, envs in ((na, ha, ea), (nb, hb, eb)):
        console.print()
        _print(console, f"{name}'s table after seq {seq}:", "bold underline")
        try:
            console.print(render(fold(new_game(header), envs[:seq])))
        except FoldError as e:
            _print(console, str(e), "bold red")
    return 1
