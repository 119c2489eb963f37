"""A tournament's seeds (docs/tournaments.md, "Seeds"): nobody — not the organiser, not an entrant — chooses a draw.

The organiser's service draws a server seed at creation and publishes only its commitment (``seed_commitment``, as a
game does). Each entrant brings a client seed when entering (an entrant the organiser names gets one derived from the
server seed and their id, as a bot's seat does: fixed by the commitment). When entry closes the tournament's seed is
combined from the server seed and every entrant's client seed, in player-id order, with the games' own function
(``rng.game_seed``); every draw of tables, and a duplicate round's deal, comes from it.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping

from .. import rng

ENTRANT_DOMAIN = b"free-parking/entrant-seed/v1"
ROUND_DOMAIN = b"free-parking/round-seed/v1"
TABLE_DOMAIN = b"free-parking/table-seed/v1"


def entrant_seed(server_seed: bytes, player_id: str) -> bytes:
    """The client seed of an entrant who brought none (named by the organiser):
    ``HMAC-SHA256(key=server_seed, msg=utf8("free-parking/entrant-seed/v1:" + player_id))``."""
    return hmac.digest(server_seed, ENTRANT_DOMAIN + b":" + player_id.encode(), "sha256")


def tournament_seed(server_seed: bytes, client_seeds: Mapping[str, bytes]) -> bytes:
    """The seed every draw is made from: ``rng.game_seed`` of the server seed and the entrants' client seeds in the
    order of their player ids (so the order they entered in changes nothing)."""
    return rng.game_seed(server_seed, [client_seeds[p] for p in sorted(client_seeds)])


def round_seed(seed: bytes, round_no: int) -> bytes:
    """A duplicate round's deal, the same at every table: ``HMAC-SHA256(key=tournament seed,
    msg=utf8("free-parking/round-seed/v1:<round>"))``."""
    return hmac.digest(seed, ROUND_DOMAIN + b":%d" % round_no, "sha256")


def table_seed(seed: bytes, round_no: int, table: int) -> bytes:
    """A table's deal in a round without duplicate deals: ``HMAC-SHA256(key=tournament seed,
    msg=utf8("free-parking/table-seed/v1:<round>:<table>"))`` — every table its own, none chosen."""
    return hmac.digest(seed, TABLE_DOMAIN + b":%d:%d" % (round_no, table), "sha256")


def commitment(seed: bytes) -> str:
    """What the tournament publishes of its server seed before it reveals it: SHA-256, hex (as a game's)."""
    return hashlib.sha256(seed).hexdigest()
