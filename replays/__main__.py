"""``python -m replays verify FILE|DIR … [--receipts FILE …] [--key PUBKEY]``: check exported logs offline; exit 0 only if
every one verifies (and agrees with every receipt players kept, each signed by a key given); 1 if one is REJECTED; 3
if none is but one is CONTESTED (receipts the service signed with a key after its listed retirement disagree with it);
2 if a file is the service's JSON error answer instead of a log (it says so, with the error's code and message).
A file whose first line is a tournament manifest is a bundle: every table, its manifest entry and the standings.

``python -m replays audit BUNDLE [--csv FILE] [--ranking-csv FILE]``: a tournament bundle told for a person, its
ranking across tables last; exit 0 only if it verifies.

``python -m replays golden``: verify the golden logs (``python -m service golden --write`` records the missing ones).

``python -m replays show LOG [--at N] [--step [--to M]]``: the table after event N (every hand: an export is the
full record); with ``--step``, each event from N (or the first) to M (or the last), its audit line and the table.

``python -m replays ratings FILE|DIR … [--kind KIND --json]``: every kind's ratings recomputed from exported logs and
bundles, with no store (RULES.md §4); ``--json`` prints one kind's table exactly as ``GET /ratings`` answers it.

``python -m replays diff LOG_A LOG_B``: where two logs of one game part, both events there and both tables;
exit 0 identical, 1 they differ (or one is a prefix of the other, or they are different games), 2 unreadable.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import msgspec
from rich.console import Console
from rich.progress import Progress

from service.events.export import ExportError, load
from service.rules.free_parking.bundle import is_bundle, load_bundle, ranking_csv, standings_csv
from service.rules.rounds.bundle import is_rounds_bundle, load_rounds

from service.events.receipt import Receipt

from .bundle import BundleVerdict, audit, verify_bundle
from .rounds import verify_rounds
from .receipts import Keys, ReceiptsUnreadable, load_keys, read_receipts
from .verify import receipts_part, receipts_verdict
from .verify import verify


def _console() -> Console:
    return Console(highlight=False, soft_wrap=True)


def _files(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        out += sorted(p.glob("*.ndjson")) if p.is_dir() else [p]
    return out


def _verify(args: argparse.Namespace) -> int:
    console = _console()
    files = _files(args.logs)
    if not files:
        console.print("no logs found", markup=False)
        return 2
    try:
        args.evidence = _evidence(args)
    except (OSError, ReceiptsUnreadable) as e:
        console.print(f"UNREADABLE receipts or keys: {e}", markup=False)
        return 2
    for note in args.notes:  # said first: what follows is the verdict on the rest
        console.print(f"set aside from the receipts: {note}", markup=False)
    failed, args.contested, errors = 0, 0, 0
    bundles = any(map(_starts_bundle, files))
    with _progress(disable=(len(files) < 20 and not bundles) or args.quiet) as bar:
        task = bar.add_task("verifying", total=len(files))
        for path in files:
            where = f"  ({path})" if len(files) > 1 else ""
            try:
                data = path.read_bytes()
                if said := service_error(data):
                    console.print(f"NOT AN EXPORT {path}: {said}", markup=False)
                    errors += 1
                    ok = False
                else:
                    first = data.split(b"\n", 1)[0]
                    check = _check_bundle if is_bundle(data) else _check_rounds if is_rounds_bundle(first) else _check_log
                    ok = check(data, args, console, bar, where)
            except (OSError, ExportError) as e:
                console.print(f"REJECTED {path}: {e}", markup=False)
                ok = False
            failed += not ok
            bar.advance(task)
    rejected = failed - args.contested - errors
    if len(files) > 1:
        total = f"{len(files) - failed} of {len(files)} logs verified" + (f", {rejected} rejected" if rejected else "")
        total += f", {args.contested} contested" if args.contested else ""
        console.print(total, markup=False)
    return 1 if rejected else 2 if errors else 3 if args.contested else 0


def service_error(data: bytes) -> str | None:
    """What the service said, when ``data`` is one of its error answers (``{"error": {"code", "message", …}}``) rather
    than a log — the 403 body of an export fetched before the game ended, saved by ``curl -o``. Such a file is no
    forged log to reject: it says why there was no log to save, and that is what a person needs to read."""
    try:
        body = msgspec.json.decode(data.strip() or b"null")
    except (msgspec.DecodeError, RecursionError):
        return None
    error = body.get("error") if isinstance(body, dict) and len(body) == 1 else None
    if not isinstance(error, dict) or not isinstance(error.get("code"), str):
        return None
    return (f"this is the service's error answer, not an exported log — {error['code']}: {error.get('message', '')} "
            "(fetch the export again once that is resolved: a game's full log is published when it is finished)")


def _evidence(args: argparse.Namespace) -> tuple[list[Receipt] | None, Keys | None]:
    """The receipts of every ``--receipts`` file, merged, and the ``--key`` public keys (each hex, or a file). An item
    that is not a receipt is set aside, with a note in ``args.notes`` naming it; a file of none is refused."""
    receipts = None
    args.notes = []
    if getattr(args, "receipts", None):
        receipts = []
        for path in args.receipts:
            found, notes = read_receipts(Path(path).read_bytes())
            if not found:
                why = f" ({notes[0]})" if notes else ""
                raise ReceiptsUnreadable(f"{path} holds no receipt (a file of a service that signs nothing, or empty){why}")
            receipts += found
            args.notes += [f"{path}: {note}" for note in notes]
    keys = None
    if getattr(args, "key", None):
        keys = load_keys(Path(k).read_bytes() if Path(k).is_file() else k for k in args.key)
    return receipts, keys


def _check_log(data: bytes, args: argparse.Namespace, console: Console, bar: Progress, where: str) -> bool:
    header, envelopes = load(data)
    receipts, keys = args.evidence
    client_seeds = dict(args.client_seed or []) or None
    player_keys = dict(getattr(args, "player_key", None) or []) or None
    verdict = verify(header, envelopes, commitment=args.commitment, client_seeds=client_seeds, receipts=receipts, keys=keys,
                     player_keys=player_keys)
    if not verdict.ok or not args.quiet:
        console.print(verdict.summary() + where, markup=False)
    args.contested += verdict.status == "CONTESTED"
    return verdict.ok


def _check_bundle(data: bytes, args: argparse.Namespace, console: Console, bar: Progress, where: str) -> bool:
    """One line per table's log, one per problem with the manifest, one per table that receipts were given for, and
    the bundle's verdict last."""
    verdict = _verify_bundle(data, bar, args.jobs)
    lines = verdict.lines()
    for line in lines[:-1]:
        if not (args.quiet and line.startswith("OK ")):
            console.print(line, markup=False)
    receipts, keys = args.evidence
    agreed, contested = True, False
    if receipts is not None or keys is not None:
        for line, ok in _bundle_receipts(data, receipts or [], keys):
            agreed &= ok or line.startswith("CONTESTED ")
            contested |= line.startswith("CONTESTED ")
            console.print(line, markup=False)
    args.contested += verdict.ok and agreed and contested
    last = lines[-1]
    if verdict.ok and not (agreed and not contested):  # the last line is the verdict: the receipts' say is in it
        status = "CONTESTED" if agreed else "REJECTED"
        last = f"{status} {last.removeprefix('OK ')}; but the receipts given disagree with a table's log (above)"
    console.print(last + where, markup=False)
    return verdict.ok and agreed and not contested


def _check_rounds(data: bytes, args: argparse.Namespace, console: Console, bar: Progress, where: str) -> bool:
    """A tournament over rounds' bundle (``replays/rounds.py``): a line per table's log, per note and per problem, and
    its verdict last."""
    manifest, exports = load_rounds(data)
    task = bar.add_task(f"tournament {manifest.tournament_id}", total=sum(len(envelopes) for _, envelopes in exports))
    verdict = verify_rounds(manifest, exports, progress=lambda done: bar.update(task, completed=done), jobs=args.jobs)
    bar.remove_task(task)
    lines = verdict.lines()
    for line in lines[:-1]:
        if not (args.quiet and line.startswith("OK ")):
            console.print(line, markup=False)
    console.print(lines[-1] + where, markup=False)
    return verdict.ok


def _bundle_receipts(data: bytes, receipts: list[Receipt], keys: Keys | None) -> list[tuple[str, bool]]:
    """Each table's log against the receipts of its game (and its export's own): a player of a tournament keeps the
    receipts of their table."""
    _, exports = load_bundle(data)
    out, matched = [], 0
    for header, envelopes in exports:
        mine = [r for r in receipts if r.game_id == header.game_id]
        matched += len(mine)
        verdict = receipts_verdict(header, envelopes, mine or None, keys)  # a table no receipt names: its own only
        if verdict.status != "OK":
            out.append((verdict.summary(), False))
        elif mine:
            out.append((f"OK {header.game_id}: {receipts_part(verdict.receipts)}", True))
    if receipts and not matched:
        out.append((f"REJECTED: none of the {len(receipts)} receipts is of a table of this tournament", False))
    return out


def _progress(*, disable: bool) -> Progress:
    """A bar on stderr, so the verdicts on stdout stay clean for a script to read."""
    return Progress(console=Console(stderr=True), transient=True, disable=disable)


def _starts_bundle(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return is_bundle(f.readline())
    except OSError:
        return False


def _verify_bundle(data: bytes, bar: Progress, jobs: int = 1) -> BundleVerdict:
    """Every check of a bundle, the bar following its events (its tables in ``jobs`` processes)."""
    manifest, exports = load_bundle(data)
    task = bar.add_task(f"tournament {manifest.tournament_id}", total=sum(len(envelopes) for _, envelopes in exports))
    verdict = verify_bundle(manifest, exports, progress=lambda done: bar.update(task, completed=done), jobs=jobs)
    bar.remove_task(task)
    return verdict


def _audit(args: argparse.Namespace) -> int:
    console = _console()
    try:
        manifest, exports = load_bundle(Path(args.bundle).read_bytes())
    except (OSError, ExportError) as e:
        console.print(f"REJECTED {args.bundle}: {e}", markup=False)
        return 2
    events = sum(len(envelopes) for _, envelopes in exports)
    with _progress(disable=args.quiet) as bar:
        task = bar.add_task(f"auditing {manifest.tournament_id}", total=2 * events)
        verdict = verify_bundle(manifest, exports, progress=lambda done: bar.update(task, completed=done))
        report = audit(manifest, exports, verdict, progress=lambda done: bar.update(task, completed=events + done))
    for line in report:
        console.print(line, markup=False)
    if args.csv:
        Path(args.csv).write_bytes(standings_csv(manifest))
    if args.ranking_csv:
        Path(args.ranking_csv).write_bytes(ranking_csv(manifest))
    return 0 if verdict.ok else 1


def _golden(args: argparse.Namespace) -> int:
    from . import golden

    console = _console()
    missing = [r.path.name for r in golden.RECIPES if not r.path.exists()]
    if missing:
        console.print(f"missing (record them with python -m service golden --write): {', '.join(missing)}", markup=False)
    return _verify(argparse.Namespace(logs=[str(golden.DIR)], commitment=None, client_seed=None, quiet=False, receipts=None,
                                      key=None)) or (1 if missing else 0)


def _read(path: str, console: Console) -> tuple | None:
    try:
        return load(Path(path).read_bytes())
    except (OSError, ExportError) as e:
        console.print(f"UNREADABLE {path}: {e}", markup=False)
        return None


def _show(args: argparse.Namespace) -> int:
    from .show import Unreadable, show, table_console

    console = table_console()
    log = _read(args.log, console)
    if log is None:
        return 2
    try:
        return show(console, log, at=args.at, step=args.step, to=args.to)
    except Unreadable as e:
        console.print(f"UNREADABLE {args.log}: {e}", markup=False)
        return 2


def _diff(args: argparse.Namespace) -> int:
    from .show import Unreadable, diff, table_console

    console = table_console()
    a, b = _read(args.log_a, console), _read(args.log_b, console)
    if a is None or b is None:
        return 2
    console.print(f"A = {args.log_a}\nB = {args.log_b}", markup=False)
    try:
        return diff(console, a, b)
    except Unreadable as e:
        console.print(f"UNREADABLE: {e}", markup=False)
        return 2


def _ratings(args: argparse.Namespace) -> int:
    from .ratings import Unreadable, as_json, lines, recompute

    console = _console()
    try:
        ratings, rated = recompute(args.logs)
    except Unreadable as e:
        console.print(f"UNREADABLE {e}", markup=False)
        return 2
    if args.json:
        sys.stdout.write(as_json(ratings, args.kind, args.limit).decode() + "\n")
        return 0
    for line in lines(ratings, rated):
        console.print(line, markup=False)
    return 0


def _jobs(text: str) -> int:
    if not text.isdecimal() or not 1 <= int(text) <= 256:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of processes (1-256)")
    return int(text)


def _claim(text: str) -> tuple[int, str]:
    from .seeds import parse_claim

    try:
        return parse_claim(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _key_claim(text: str) -> tuple[int, str]:
    """``SEAT:HEX`` as ``--player-key`` takes it: the public key the player joined SEAT with."""
    try:
        return _claim(text)
    except argparse.ArgumentTypeError as e:
        raise argparse.ArgumentTypeError(str(e).replace("client seed", "public key")) from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m replays", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    v = sub.add_parser("verify", help="verify exported logs or tournament bundles (files, or folders of *.ndjson)")
    v.add_argument("logs", nargs="+")
    v.add_argument("--commitment", help="the seed commitment you were shown when the game began")
    v.add_argument("--receipts", action="append", metavar="FILE",
                   help="receipts players kept (a JSON list or NDJSON; repeat to merge several players' files): the log "
                        "must agree with every one")
    v.add_argument("--key", action="append", metavar="PUBKEY",
                   help="a public key that signs receipts: 64 hex digits, or a file of GET /keys (repeatable)")
    v.add_argument("--client-seed", action="append", type=_claim, metavar="SEAT:HEX",
                   help="the client seed you sent for SEAT (repeatable): the log must record exactly that one")
    v.add_argument("--player-key", action="append", type=_key_claim, metavar="SEAT:HEX",
                   help="the public key you joined SEAT with (repeatable): the log must record exactly that one, and "
                        "every move in your name must carry its signature")
    v.add_argument("-q", "--quiet", action="store_true", help="print only rejections and the total")
    v.add_argument("--jobs", type=_jobs, default=1, metavar="N",
                   help="verify a bundle's tables in N processes at once (default 1; the verdict is the same)")
    v.set_defaults(func=_verify)
    g = sub.add_parser("golden", help="verify the golden logs in replays/golden/ (python -m service golden --write "
                                      "records the missing ones)")
    g.set_defaults(func=_golden)
    a = sub.add_parser("audit", help="a tournament bundle's report: rounds, scores, specials, winners")
    a.add_argument("bundle")
    a.add_argument("--csv", help="also write the manifest's standings to this CSV file, one row per player per round with their rank")
    a.add_argument("--ranking-csv", metavar="FILE", help="also write the ranking across tables to this CSV file, one row per player")
    a.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    a.set_defaults(func=_audit)
    s = sub.add_parser("show", help="the table after event N of an exported log; --step walks on event by event")
    s.add_argument("log")
    s.add_argument("--at", type=int, metavar="N", help="after event N (default: the last; with --step, from the first)")
    s.add_argument("--step", action="store_true", help="print every event from N on: its audit line, then the table")
    s.add_argument("--to", type=int, metavar="M", help="with --step, stop after event M (default: the last)")
    s.set_defaults(func=_show)
    r = sub.add_parser("ratings", help="every kind's ratings recomputed from exported logs and bundles (no store)")
    r.add_argument("logs", nargs="+")
    r.add_argument("--kind", default="free-parking", choices=["free-parking", "monopoly"], help="the kind --json prints")
    r.add_argument("--limit", type=int, default=None, help="with --json, the first LIMIT rows (as GET /ratings?limit=)")
    r.add_argument("--json", action="store_true", help="print --kind's table as GET /ratings answers it")
    r.set_defaults(func=_ratings)
    d = sub.add_parser("diff", help="the first seq where two logs of one game part, both events and both tables there")
    d.add_argument("log_a")
    d.add_argument("log_b")
    d.set_defaults(func=_diff)
    args = parser.parse_args(argv)
    if args.func is _show and args.to is not None and not args.step:
        parser.error("--to goes with --step")
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
