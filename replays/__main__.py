"""``python -m replays verify FILE|DIR …``: check exported logs offline; exit 0 only if every one verifies.

``python -m replays golden [--write]``: verify the golden logs; with ``--write``, first record the missing ones.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console
from rich.progress import Progress

from service.events.export import ExportError, load

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
    failed = 0
    with Progress(console=Console(stderr=True), transient=True, disable=len(files) < 20 or args.quiet) as bar:
        task = bar.add_task("verifying", total=len(files))
        for path in files:
            try:
                header, envelopes = load(path.read_bytes())
            except (OSError, ExportError) as e:
                console.print(f"REJECTED {path}: {e}", markup=False)
                failed += 1
                bar.advance(task)
                continue
            verdict = verify(header, envelopes, commitment=args.commitment)
            failed += not verdict.ok
            if not verdict.ok or not args.quiet:
                console.print(f"{verdict.summary()}" + (f"  ({path})" if len(files) > 1 else ""), markup=False)
            bar.advance(task)
    if len(files) > 1:
        total = f"{len(files) - failed} of {len(files)} logs verified" + (f", {failed} rejected" if failed else "")
        console.print(total, markup=False)
    return 1 if failed else 0


def _golden(args: argparse.Namespace) -> int:
    from . import golden

    console = _console()
    if args.write:
        for recipe, written in golden.write():
            state = "written" if written else "kept (a golden is never rewritten)"
            console.print(f"{recipe.path.name}: {state}", markup=False)
    missing = [r.path.name for r in golden.RECIPES if not r.path.exists()]
    if missing:
        console.print(f"missing (record them with --write): {', '.join(missing)}", markup=False)
    return _verify(argparse.Namespace(logs=[str(golden.DIR)], commitment=None, quiet=False)) or (1 if missing else 0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m replays", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    v = sub.add_parser("verify", help="verify exported logs (files, or folders of *.ndjson)")
    v.add_argument("logs", nargs="+")
    v.add_argument("--commitment", help="the seed commitment you were shown when the game began")
    v.add_argument("-q", "--quiet", action="store_true", help="print only rejections and the total")
    v.set_defaults(func=_verify)
    g = sub.add_parser("golden", help="verify the golden logs in replays/golden/; --write records the missing ones")
    g.add_argument("--write", action="store_true", help="record every golden not yet recorded (never rewrites one)")
    g.set_defaults(func=_golden)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
