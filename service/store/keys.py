"""Where a game lives in Redis: every key of a game shares the hash tag of its partition.

The partition is a pure function of the game id (CRC-32 mod ``PARTITIONS``), so any worker finds a
game without a lookup, and Redis Cluster keeps a game's stream, metadata, command ids and its
partition's log in one slot — which lets one script append atomically. ``PARTITIONS`` is fixed for
the life of a deployment: changing it would move every game.
"""

from __future__ import annotations

import itertools
import zlib

PARTITIONS = 16
STATUSES = ("waiting", "playing", "finished")


def partition(game_id: str) -> int:
    return zlib.crc32(game_id.encode()) % PARTITIONS


def round_table_id(tournament_id: str, round_no: int, table: int) -> str:
    """The game id of table ``table`` of round ``round_no`` of a tournament over rounds, in its partition (as
    ``table_id``): ``g_<tournament>_r<round>t<table>_<n>``, the same whichever worker makes it."""
    home = partition(tournament_id)
    stem = tournament_id.removeprefix("t_")
    return next(g for n in itertools.count() if partition(g := f"g_{stem}_r{round_no}t{table}_{n}") == home)


def table_id(tournament_id: str, table: int) -> str:
    """The game id of a tournament's ``table``: the first of ``g_<tournament>_t<table>_<n>`` that falls in the
    tournament's partition (about ``PARTITIONS`` tries), so that a table's keys share the tournament's hash tag."""
    home = partition(tournament_id)
    stem = tournament_id.removeprefix("t_")
    return next(g for n in itertools.count() if partition(g := f"g_{stem}_t{table}_{n}") == home)


class Keys:
    """Key names under a namespace (so tests and deployments can share one server)."""

    def __init__(self, namespace: str = "fp") -> None:
        if "{" in namespace or "}" in namespace:
            raise ValueError("a namespace must not contain braces: they would change the hash tag")
        self.ns = namespace

    def tag(self, p: int) -> str:
        return f"{{p{p}}}"

    def stream(self, game_id: str) -> str:
        return f"{self.ns}:game:{self.tag(partition(game_id))}:{game_id}"

    def meta(self, game_id: str) -> str:
        return f"{self.ns}:meta:{self.tag(partition(game_id))}:{game_id}"

    def commands(self, game_id: str) -> str:
        return f"{self.ns}:cmds:{self.tag(partition(game_id))}:{game_id}"

    def log(self, p: int) -> str:
        return f"{self.ns}:log:{self.tag(p)}"

    def index(self, p: int, status: str, kind: str = "") -> str:
        """A partition's games of one status (of one kind, given ``kind``), scored by creation time: the lobby's pages."""
        return f"{self.ns}:games:{self.tag(p)}:{kind}:{status}" if kind else f"{self.ns}:games:{self.tag(p)}:{status}"

    def archived(self, p: int) -> str:
        """How many of a partition's games are archived (their events moved out: ``Store.forget_events``)."""
        return f"{self.ns}:archived:{self.tag(p)}"

    def lease(self, name: str, p: int) -> str:
        """Who holds a partition's lease for ``name`` (one archiver a partition), until it runs out."""
        return f"{self.ns}:lease:{name}:{self.tag(p)}"

    def due(self, p: int) -> str:
        return f"{self.ns}:due:{self.tag(p)}"

    def game_keys(self, game_id: str, kind: str = "") -> list[str]:
        """The keys of the append script, in its order; with ``kind``, the indexes of that kind's games by status too."""
        p = partition(game_id)
        return [
            self.stream(game_id),
            self.meta(game_id),
            self.commands(game_id),
            self.log(p),
            *(self.index(p, s) for s in STATUSES),
            self.due(p),
            self.outbox(game_id),
            *(self.index(p, s, kind) for s in (STATUSES if kind else ())),
        ]

    def outbox(self, game_id: str) -> str:
        """What a game's appends have to tell its players and is not yet in their streams (``Store.tell_players``): a
        stream whose entries are those appends' events with their batch's last version (``v``), in the game's slot so
        the append writes it."""
        return f"{self.ns}:told:{self.tag(partition(game_id))}:{game_id}"

    def queue_seats(self, game_id: str) -> str:
        """Which of the play-now queue's claims a game seated (queue id -> the game's id), or ``lost`` for a claim
        settled as never finished (``Store.queue_fence``): in the game's slot, so a seat's append checks and takes its
        claim atomically, and a worker that wakes after its claim was settled seats nobody."""
        return f"{self.ns}:qseats:{self.tag(partition(game_id))}:{game_id}"

    def player_stream(self, player_id: str) -> str:
        """A player's own events (``GET /players/me/stream``), beside ``player_told`` in one slot: the player's id tags both."""
        return f"{self.ns}:pstream:{{{player_id}}}"

    def player_told(self, player_id: str) -> str:
        """The last version of each game whose events are in the player's stream (game id -> version): a relay told twice
        writes once."""
        return f"{self.ns}:ptold:{{{player_id}}}"

    def player_log(self) -> str:
        """One pointer per player event (the player's id), which each worker follows to wake the streams it serves."""
        return f"{self.ns}:plog"

    def forget_keys(self, game_id: str) -> list[str]:
        """The keys of the script that removes an archived game's events (``FORGET_EVENTS_LUA``), in its order: meta,
        stream, command ids, scores and audit read models, the partition's due set, its count of archived games, the game's
        outbox (refused while it holds something untold) and the queue's claims it seated.
        One slot, like every key of the game, so the script runs on a cluster's one primary."""
        p = partition(game_id)
        return [self.meta(game_id), self.stream(game_id), self.commands(game_id), self.game_projection("scores", game_id),
                self.game_projection("audit", game_id), self.due(p), self.archived(p), self.outbox(game_id),
                self.queue_seats(game_id)]

    def listing_head(self) -> str:
        """The head of the key listing's chain the service last started on (``n:head``): kept in the store, not beside
        the keyring, so that whoever edits the keyring's files does not rewrite it too (service/api/signing.py)."""
        return f"{self.ns}:keys:listing"

    def token(self, digest: str) -> str:
        return f"{self.ns}:token:{digest}"

    def bucket(self, name: str) -> str:
        """A rate limit's bucket: one key of its own (no hash tag), so buckets spread over a cluster's slots."""
        return f"{self.ns}:limit:{name}"

    def player(self, player_id: str) -> str:
        return f"{self.ns}:player:{player_id}"

    def tournament(self, tournament_id: str) -> str:
        """A tournament's record, in its partition: the partition its tables are created in."""
        return f"{self.ns}:tournament:{self.tag(partition(tournament_id))}:{tournament_id}"

    def tournament_seats(self, tournament_id: str) -> str:
        """Which table each registered player of a tournament sits at (or is reserved at): player id -> game id, in
        the tournament's partition, so a table's append checks and takes its claim atomically."""
        return f"{self.ns}:tseats:{self.tag(partition(tournament_id))}:{tournament_id}"

    def tournament_state(self, tournament_id: str) -> str:
        """A tournament over rounds' state as it goes (``Store.tournament_enter``…): its entrants (``e:<player id>``),
        whether entry is closed (``closed``), its start (``started``: the combined seed) and each round's draw
        (``draw:<round>``), each written once; in the tournament's partition, beside its record and tables."""
        return f"{self.ns}:tstate:{self.tag(partition(tournament_id))}:{tournament_id}"

    def tournaments_playing(self) -> str:
        """The tournaments over rounds still playing (a set): each worker's advancer draws their next rounds."""
        return f"{self.ns}:tplaying"

    def tournament_projection(self, name: str, tournament_id: str) -> str:
        return f"{self.ns}:proj:{name}:{self.tag(partition(tournament_id))}:{tournament_id}"

    def leaderboard(self, board: str) -> str:
        """The leaderboard's keys (a sorted set per kind and ``all``; ``seq``: each player's snapshot), in one slot."""
        return f"{self.ns}:proj:leaderboard:{{lb}}:{board}"

    def ratings(self, kind: str) -> str:
        """One kind's rated games (a hash, field ``g:<game_id>``), in one slot: the ratings fold reads them all."""
        return f"{self.ns}:proj:ratings:{{rt}}:{kind}"

    def projection(self, name: str, ref: str) -> str:
        """A read model; ``ref`` is a game id (then it shares the game's slot) or a player id."""
        return f"{self.ns}:proj:{name}:{ref}"

    def player_projection(self, name: str, player_id: str, part: str) -> str:
        """One part of a player's read model kept in several keys: the player id is their hash tag, one slot for all."""
        return f"{self.ns}:proj:{name}:{{{player_id}}}:{part}"

    def game_projection(self, name: str, game_id: str) -> str:
        return f"{self.ns}:proj:{name}:{self.tag(partition(game_id))}:{game_id}"
