"""The batched store calls give exactly the answers of the one-game calls they stand for: ``read_many`` those of
``read``, ``project_games`` those of ``project_game`` — on every store (``store`` runs them on each)."""

from __future__ import annotations

from service.store.store import ProjectionCorrupt, Projected
from tests.store.test_store_contract import append_all


async def test_read_many_answers_what_read_answers(store):
    await append_all(store, "g-many-a")
    await append_all(store, "g-many-b", upto=6)
    last = (await store.read("g-many-a"))[-1].seq
    wanted = [
        ("g-many-a", 0, None), ("g-many-a", 0, 5), ("g-many-a", 3, None), ("g-many-a", 3, 4), ("g-many-a", last, None),
        ("g-many-a", last + 5, None), ("g-many-b", 0, None), ("g-many-b", 2, 1), ("g-never-made", 0, None), ("g-never-made", 4, 2),
    ]
    assert await store.read_many(wanted) == [await store.read(g, after, count) for g, after, count in wanted]
    assert await store.read_many([]) == []


async def test_project_games_answers_what_project_game_answers(store):
    async def run(batched: bool, prefix: str) -> list:
        a, b, c = f"{prefix}-a", f"{prefix}-b", f"{prefix}-c"
        await store.project_game(b, 0, 2, b"model-b", ["one", "two"])
        await store.r.rpush(store.keys.game_projection("audit", c), "a line no projector wrote")
        items = [
            (a, 0, 3, b"model-a", ["1", "2", "3"]),  # applies
            (b, 0, 4, b"model-b2", ["3", "4"]),  # refused: the checkpoint is at 2
            (c, 0, 1, b"model-c", ["x"]),  # its audit list was written by someone else
        ]
        if batched:
            return await store.project_games(items)
        out = []
        for item in items:
            try:
                out.append(await store.project_game(*item))
            except ProjectionCorrupt as e:
                out.append(e)
        return out

    one_by_one, together = await run(False, "g-alone"), await run(True, "g-together")
    assert together[:2] == one_by_one[:2] == [Projected(True, 3), Projected(False, 2)]
    assert isinstance(together[2], ProjectionCorrupt) and isinstance(one_by_one[2], ProjectionCorrupt)
    model = store.keys.game_projection("scores", "g-together-a")
    assert await store.r.hmget(model, "applied", "model") == [b"3", b"model-a"]
    assert await store.r.lrange(store.keys.game_projection("audit", "g-together-a"), 0, -1) == [b"1", b"2", b"3"]
    assert await store.r.lrange(store.keys.game_projection("audit", "g-together-b"), 0, -1) == [b"one", b"two"]
