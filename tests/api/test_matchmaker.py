"""The matcher over a store with real ratings (service/api/matchmaker.py): ratings come from the ratings projection
(rated games recorded in the store, folded on reading), an unrated player has the starting rating, and the bots that
fill a table are of the kind rated closest to its players."""

from __future__ import annotations

import msgspec

from service.api.games import Games
from service.api.matchmaker import Entry, Matchmaker, decode_status, encode
from service.rules.ratings import Place, RatedGame
from service.store.embedded import EmbeddedStore

FILL = 20_000


async def _rate(store, winners: list[str], losers: list[str], games: int) -> None:
    """Record ``games`` rated two-seat card games each won by a winner over a loser: winners rise, losers fall."""
    for n in range(games):
        for i, (w, l) in enumerate(zip(winners, losers, strict=True)):
            game = RatedGame(game_id=f"g_rated_{w}_{n}_{i}", kind="free-parking", finished_at=1000 + n, version=10,
                             places=(Place(seat=0, rank=1, rated_id=w, name=w), Place(seat=1, rank=2, rated_id=l, name=l)))
            await store.project_rated_game("free-parking", game.game_id, game.version, msgspec.json.encode(game))


async def _queue(store, player_id: str, since: int, seats: int = 4) -> None:
    entry = Entry(queue_id=f"q_{player_id}", player_id=player_id, name=player_id, kind="free-parking", seats=seats,
                  since=since)
    assert await store.queue_join(player_id, encode(entry))


async def test_players_are_seated_by_their_projected_ratings_and_the_closest_bot_fills(tmp_path):
    store = await EmbeddedStore(tmp_path / "data").open()
    try:
        strong, weak = [f"p_s{i}" for i in range(4)], [f"p_w{i}" for i in range(4)]
        await _rate(store, strong, weak, 8)  # strong ones far above the starting rating, weak ones below it
        await _rate(store, ["bot:expert"], ["bot:random"], 8)
        matcher = Matchmaker(Games(store), fill_ms=FILL)
        order = [strong[0], weak[0], strong[1], weak[1], strong[2], weak[2], strong[3], weak[3]]
        for i, pid in enumerate(order):
            await _queue(store, pid, since=i)
        assert await matcher.pass_once(now=10) == 2
        games = {pid: decode_status((await store.queue_of(pid))[1]).game_id for pid in order}
        assert len({games[p] for p in strong}) == 1 and len({games[p] for p in weak}) == 1
        assert games[strong[0]] != games[weak[0]]

        await _queue(store, "p_new", since=100)  # unrated: the starting rating; alone, bots after the fill wait
        assert await matcher.pass_once(now=100 + FILL - 1) == 0
        assert await matcher.pass_once(now=100 + FILL) == 1
        game = await Games(store).fresh(decode_status((await store.queue_of("p_new"))[1]).game_id)
        bots = {st.player.bot for st in game.state.seats if st.player and st.player.bot}
        assert len(bots) == 1 and bots != {"expert"}  # the expert is rated far above a new player
    finally:
        await store.close()
