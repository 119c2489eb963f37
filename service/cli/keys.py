"""``python -m service keys list|rotate``: the keyring that signs receipts (docs/fairness.md).

``list`` prints every key with its validity; ``rotate`` starts a new key and keeps the old one listed without its
private half (so what it signed stays checkable). Workers read the keyring when they start: restart the service after
a rotation, every worker together, so that they sign with one key. A key given in ``FREE_PARKING_SIGNING_KEY`` is the
deployment's to rotate (``rotate`` refuses, and says how): this command cannot change the environment of every host.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import msgspec
from rich.console import Console
from rich.table import Table

from service.api.settings import Settings
from service.api.signing import KEYRING, KeyringError, keyring_at, retired_from, rotate


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("keys", help="the keys that sign receipts: list them, or rotate to a new one")
    p.add_argument("action", choices=("list", "rotate"))
    env = Settings.from_env()
    p.add_argument("--keys", type=Path, default=env.keys_folder, metavar="DIR",
                   help=f"the keyring's folder (default: {env.keys_folder}, i.e. <data>/keys)")
    p.add_argument("--json", action="store_true", help="list: the keys as GET /keys gives them")
    p.set_defaults(func=main)


ENV_KEY = ("the signing key is FREE_PARKING_SIGNING_KEY's, which rotate cannot change: give every host a new key there "
           "and list the old one (keys list --json, with a not_after) in the file FREE_PARKING_RETIRED_KEYS names, then "
           "restart every worker (docs/fairness.md, Keys)")


def main(args: argparse.Namespace) -> int:
    """The keys as GET /keys would list them with these settings: the environment's key and retired keys included."""
    now = time.time_ns() // 1_000_000
    env = Settings.from_env()
    try:
        if args.action == "rotate":
            if env.signing_key is not None:  # the file's key would change, the service would go on signing with this
                print(f"free-parking keys: {ENV_KEY}", file=sys.stderr)
                return 2
            if not (args.keys / KEYRING).exists():
                keyring_at(args.keys, now)
            old, new = rotate(args.keys, now)
            print(f"key {new} signs from now; {old} stays listed until now. Restart the service to sign with the new key.")
            return 0
        retired = retired_from(env.retired_keys) if env.retired_keys is not None else []
        keys = keyring_at(args.keys, now, env.signing_key, retired).keys
    except KeyringError as e:
        print(f"free-parking keys: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(msgspec.json.encode({"keys": keys}).decode())
        return 0
    table = Table("key_id", "public key", "not before (ms)", "not after (ms)")
    for k in keys:
        table.add_row(k.key_id, k.public_key, str(k.not_before), "" if k.not_after is None else str(k.not_after))
    Console().print(table)
    return 0
