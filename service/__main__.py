"""``python -m service [play|simulate] …``; with no command it plays one game (``play``).

The HTTP service will take over the default; until then ``make run`` shows one audited bot game.
"""

from __future__ import annotations

import argparse
import sys

from service.cli import play, simulate


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m service", description=__doc__.replace("``", ""))
    sub = p.add_subparsers(dest="command")
    play.add_parser(sub)
    simulate.add_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help")):
        argv = ["play", *argv]  # the default command, options and all
    args = parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
