"""``python -m service [COMMAND] [OPTIONS]``: with no command (or ``serve``) it runs the HTTP service, whose options
are listed below; ``python -m service COMMAND --help`` says what each other command takes.

``make run`` runs it: the service on http://127.0.0.1:8000, on the embedded store unless ``REDIS_URL`` is set.
"""

from __future__ import annotations

import argparse
import sys

from service.api.settings import SettingsError
from service.cli import archive, compact, demo, golden, keys, league, play, projections, serve, simulate, solitaire_rates

USAGE = "python -m service [serve] [OPTIONS]\n       python -m service COMMAND [OPTIONS]   (COMMAND --help for its own)"


def parser() -> argparse.ArgumentParser:
    """The commands, and serve's options beside them: a newcomer looks for ``--port`` in the first help they read,
    and serve is what runs with no command. They are listed here only; ``main`` hands them to ``serve`` to parse."""
    # allow_abbrev=False: argparse matches every argument, a command's included, against these options first, and
    # a command's own option that begins one of serve's (demo's --games, serve's --games-burst) would be "ambiguous"
    p = argparse.ArgumentParser(prog="python -m service", usage=USAGE, description=__doc__.replace("``", ""),
                                allow_abbrev=False)
    p._positionals.title = "commands"  # listed first, then serve's options
    p._optionals.title = "options of serve, the default command"
    sub = p.add_subparsers(dest="command", metavar="COMMAND", prog="python -m service")
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
    compact.add_parser(sub)
    golden.add_parser(sub)
    serve.add_arguments(p)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help")):
        argv = ["serve", *argv]  # the default command, options and all
    try:
        args = parser().parse_args(argv)
        return args.func(args)
    except SettingsError as e:  # the environment's settings are read while the options are built
        print(f"free-parking: not started: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
