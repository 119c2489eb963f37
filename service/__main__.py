"""``python -m service [serve|demo|play|simulate|solitaire-rates|bot-league|rebuild|project|keys|archive|golden] …``; with no command it serves HTTP.

``make run`` runs it: the service on http://127.0.0.1:8000, on the embedded store unless ``REDIS_URL`` is set.
"""

from __future__ import annotations

import argparse
import sys

from service.cli import archive, demo, golden, keys, league, play, projections, serve, simulate, solitaire_rates


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m service", description=__doc__.replace("``", ""))
    sub = p.add_subparsers(dest="command")
    serve.add_parser(sub)
    demo.add_parser(sub)
    play.add_parser(sub)
    simulate.add_parser(sub)
    solitaire_rates.add_parser(sub)
    league.add_parser(sub)
    projections.add_rebuild_parser(sub)
    projections.add_project_parser(sub)
    keys.add_parser(sub)
    archive.add_parser(sub)
    golden.add_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help")):
        argv = ["serve", *argv]  # the default command, options and all
    args = parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
