"""How a game's seed is made, shown before anyone joins (issue 29): the lobby's listing (``GET /games``) and the view
say each game's ``seeding`` — ``combined`` for a game the service draws, ``fixed`` for one dealt from a seed given at
creation — and, for a fixed one, who chose the seed (``seed_chosen_by``), before and after its seats are taken."""

from __future__ import annotations

import pytest

from tests.api.conftest import ADMIN_HEADERS, bearer
from tests.api.helpers import fill, view

pytestmark = pytest.mark.parametrize("store_kind", ["embedded", "redis"])  # the store fixture's two kinds

SEED = "5e" * 32


async def listed(api, game_id: str, status: str) -> dict:
    r = await api.get("/games", params={"status": status})
    assert r.status_code == 200, r.text
    return next(g for g in r.json()["games"] if g["game_id"] == game_id)


async def seeding_of(api, game_id: str, status: str) -> tuple[tuple[str, str | None], tuple[str, str | None]]:
    """What the listing and a spectator's view say of how the game's seed is made."""
    summary, seen = await listed(api, game_id, status), await view(api, game_id)
    return (summary["seeding"], summary["seed_chosen_by"]), (seen["seeding"], seen["seed_chosen_by"])


async def test_a_drawn_game_is_combined_and_an_admin_fixed_one_says_the_admin_chose_its_seed(api):
    drawn = (await api.post("/games", json={"kind": "free-parking", "seats": 2})).json()["game_id"]
    r = await api.post("/games", json={"kind": "free-parking", "seats": 2, "seed": SEED}, headers=ADMIN_HEADERS)
    assert r.status_code == 201, r.text
    fixed = r.json()["game_id"]
    for game_id, said in ((drawn, ("combined", None)), (fixed, ("fixed", "admin"))):
        assert await seeding_of(api, game_id, "waiting") == (said, said)  # before anyone joins
        await fill(api, game_id, 2)
        assert await seeding_of(api, game_id, "playing") == (said, said)


async def test_a_solitaire_players_chosen_deal_says_its_creator_chose_the_seed(api):
    player = (await api.post("/players", json={"name": "Sol"})).json()
    r = await api.post("/games", json={"kind": "solitaire", "seed": SEED}, headers=bearer(player["token"]))
    assert r.status_code == 201, r.text
    game_id = r.json()["game_id"]
    assert await seeding_of(api, game_id, "waiting") == (("fixed", "creator"), ("fixed", "creator"))


async def test_a_listing_reads_the_seeding_of_a_game_whose_record_predates_it_from_its_first_event(api):
    fixed = (await api.post("/games", json={"kind": "free-parking", "seats": 2, "seed": SEED}, headers=ADMIN_HEADERS)).json()["game_id"]
    drawn = (await api.post("/games", json={"kind": "free-parking", "seats": 2})).json()["game_id"]
    store = api.app.ctx.store
    for game_id in (fixed, drawn):  # metadata as a service before this field wrote it
        await store.r.hdel(store.keys.meta(game_id), "seeding")
        assert "seeding" not in await store.meta(game_id)
    assert (await listed(api, fixed, "waiting"))["seeding"] == "fixed"
    assert (await listed(api, drawn, "waiting"))["seeding"] == "combined"


async def test_the_published_schema_documents_both_fields_in_the_listing_and_every_kinds_view(api):
    schemas = (await api.get("/openapi.json")).json()["components"]["schemas"]
    for name in ("GameSummary", "FreeParkingView", "SolitaireView", "MonopolyView"):
        properties = schemas[name]["properties"]
        assert {"seeding", "seed_chosen_by"} <= set(properties), name
        assert "seed_chosen_by" not in schemas[name].get("required", []), name  # old clients: nothing new is required
    assert set(schemas["GameSummary"]["properties"]["seeding"]["enum"]) == {"combined", "fixed", "legacy", "duplicate",
                                                                          "tournament"}
