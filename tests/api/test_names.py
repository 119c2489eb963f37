"""A name (``POST /players``, ``POST /games/{id}/seats``, a tournament's) has at least one visible character and no
character that hides, reorders or breaks the text around it (docs/limits.md): each class of Unicode's, as all of a
name and inside one; names are kept exactly as sent; and the pattern OpenAPI publishes admits every accepted name."""

from __future__ import annotations

import json
import re
import sys
import unicodedata

import pytest

from service.api.names import NAME_PATTERN, PUBLISHED_PATTERN
from tests.api.conftest import ADMIN_HEADERS, fresh_app, make_settings
from tests.api.helpers import assert_error, log_of, new_game
from tests.http import serving

embedded = pytest.mark.parametrize("store_kind", ["embedded"])  # decoding at the edge: no store is reached

SCOTLAND = "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"

NEVER = {  # refused anywhere: alone, at the start, inside and at the end of a name
    "C0 control": "\x00",
    "unit separator": "\x1f",
    "DEL": "\x7f",
    "next line (C1)": "\x85",
    "CSI (C1)": "\x9b",
    "private use": "\ue000",
    "private use, plane 15": "\U000f0001",
    "private use, plane 16": "\U0010fffd",
    "unassigned": "\u0378",
    "noncharacter U+FFFF": "\uffff",
    "noncharacter U+FDD0": "\ufdd0",
    "noncharacter U+1FFFE": "\U0001fffe",
    "line separator": "\u2028",
    "paragraph separator": "\u2029",
    "right-to-left override": "\u202e",
    "left-to-right embedding": "\u202a",
    "first strong isolate": "\u2068",
    "pop directional isolate": "\u2069",
    "Arabic letter mark": "\u061c",
    "interlinear annotation anchor": "\ufff9",
    "interlinear annotation terminator": "\ufffb",
    "soft hyphen": "\u00ad",
    "zero-width space": "\u200b",
    "word joiner": "\u2060",
    "byte-order mark": "\ufeff",
    "Mongolian vowel separator": "\u180e",
    "Arabic number sign": "\u0600",
    "language tag": "\U000e0001",
    "a tag outside a flag": "\U000e0041",
    "a cancel tag outside a flag": "\U000e007f",
    "tags without their cancel tag": "\U0001f3f4\U000e0067\U000e0062",
}
BLANK = {  # allowed inside a name, never all of it
    "combining marks": "\u0301\u0301",
    "variation selector 16": "\ufe0f",
    "variation selector 17": "\U000e0100",
    "combining grapheme joiner": "\u034f",
    "Khmer inherent vowel": "\u17b4",
    "space": " ",
    "no-break space": "\u00a0",
    "ideographic space": "\u3000",
    "Hangul filler": "\u3164",
    "Hangul choseong and jungseong fillers": "\u115f\u1160",
    "halfwidth Hangul filler": "\uffa0",
    "Braille pattern blank": "\u2800",
    "ZWNJ": "\u200c",
    "ZWJ": "\u200d",
    "LRM": "\u200e",
    "RLM": "\u200f",
    "all of them": " \u0301\ufe0f\u3164\u2800\u200c\u200d\u200e\u200f",
}
ACCEPTED = [
    "Zoë Ångström",
    "e\u0301mile",  # a combining accent
    "\u0301Ann",  # a mark first: odd, harmless
    "❤\ufe0f",  # an emoji with its variation selector
    "👨\u200d👩\u200d👧",  # an emoji ZWJ sequence
    "می\u200cخواهم",  # Persian, ZWNJ inside a word
    "\u200fשלום",  # a right-to-left mark
    SCOTLAND,  # a subdivision flag: U+1F3F4, tag characters, cancel tag
    f"Ann {SCOTLAND}",
    "\U0001f3f4",  # the flag's base alone
    "\u3164Ann",
    "Ann\u2800Lee",
    "\U0001f697" * 40,  # forty emoji fit
    "x" * 40,
    "名前",
    "·",  # punctuation alone is visible
    "1",
]


def in_names(piece: str) -> list[str]:
    return [piece, f"{piece}Ann", f"Ann{piece}Lee", f"Ann{piece}"]


@embedded
async def test_a_name_with_a_character_never_allowed_is_refused_wherever_it_is(api):
    for label, piece in NEVER.items():
        for name in in_names(piece):
            error = assert_error(await api.post("/players", json={"name": name}), 400, "invalid_request")
            assert "$.name" in error["message"] and "visible" in error["message"], label


@embedded
async def test_a_name_of_blank_characters_only_is_refused_but_they_may_sit_inside_one(api):
    for label, piece in BLANK.items():
        assert_error(await api.post("/players", json={"name": piece}), 400, "invalid_request")
        for name in in_names(piece)[1:]:
            r = await api.post("/players", json={"name": name})
            assert r.status_code == 201, (label, r.text)
            assert r.json()["name"] == name


@embedded
async def test_names_are_kept_exactly_as_sent(api):
    for name in ACCEPTED:
        r = await api.post("/players", json={"name": name})
        assert r.status_code == 201, (name, r.text)
        assert r.json()["name"] == name


@embedded
async def test_seats_follow_the_same_rule_and_a_refused_name_seats_no_one(api):
    game_id = await new_game(api, 8)
    before = await log_of(api, game_id)
    refused = [n for piece in NEVER.values() for n in in_names(piece)] + list(BLANK.values())
    for name in refused:
        body = json.dumps({"name": name}).encode()
        r = await api.post(f"/games/{game_id}/seats", content=body, headers={"content-type": "application/json"})
        assert "$.name" in assert_error(r, 400, "invalid_request")["message"], repr(name)
    assert await log_of(api, game_id) == before
    accepted = ACCEPTED + [f"Ann{piece}" for piece in BLANK.values()]
    for i, name in enumerate(accepted):
        if i % 8 == 0:
            game_id = await new_game(api, 8)
        r = await api.post(f"/games/{game_id}/seats", json={"name": name})
        assert r.status_code == 201, (name, r.text)
    last = accepted[len(accepted) // 8 * 8 :]
    assert [p["name"] for p in (await api.get(f"/games/{game_id}")).json()["players"]][: len(last)] == last


async def test_a_tournament_name_follows_the_same_rule(tmp_path):
    app = fresh_app(make_settings("embedded", tmp_path, allow_volatile=True))  # tournaments want a durable store
    async with serving(app) as api:
        body = {"kind": "free-parking", "tables": [{"seats": 2}]}
        for name in ("\u0301\u0301", "\u3164", "Cup\u061c", "Cup\U000e0041"):
            r = await api.post("/tournaments", json={**body, "name": name}, headers=ADMIN_HEADERS)
            assert "$.name" in assert_error(r, 400, "invalid_request")["message"]
        r = await api.post("/tournaments", json={**body, "name": f"Cup {SCOTLAND}"}, headers=ADMIN_HEADERS)
        assert r.status_code == 201 and r.json()["name"] == f"Cup {SCOTLAND}"


@embedded
async def test_the_message_says_the_rule_in_words_never_the_expression(api):
    message = assert_error(await api.post("/players", json={"name": "\u3164"}), 400)["message"]
    assert "$.name" in message and "visible character" in message and "format" in message
    assert "\\u" not in message and "[" not in message and len(message) < 300


@embedded
async def test_openapi_publishes_a_short_pattern_every_accepted_name_matches(api):
    """The exact rule is too large to publish (and needs Unicode categories): the document carries a simpler pattern,
    which must admit every name the service accepts, and a description of the rest."""
    schema = (await api.get("/openapi.json")).json()["components"]["schemas"]["RegisterPlayer"]["properties"]["name"]
    assert schema["pattern"] == PUBLISHED_PATTERN and len(schema["pattern"]) < 300
    assert "Hangul fillers" in schema["description"] and "U+2800" in schema["description"]
    exact, published = re.compile(NAME_PATTERN), re.compile(PUBLISHED_PATTERN)
    for name in ACCEPTED + [f"Ann{piece}" for piece in BLANK.values()]:
        assert exact.search(name) and published.search(name), repr(name)
    # The published pattern refuses, anywhere, a few BMP characters, and needs one that is neither white space nor
    # zero-width: no character beyond the BMP is either. Each of those the service must refuse too: then every name
    # it accepts (its characters allowed, one of them visible) matches the published pattern.
    for cp in range(0x10000):
        c = chr(cp)
        if not published.search(f"a{c}"):
            assert not exact.search(f"a{c}"), f"U+{cp:04X} is refused by the published pattern only"
        if not published.search(c):
            assert not exact.search(c), f"U+{cp:04X} is visible to the service, not to the published pattern"
    assert not any(chr(cp).isspace() for cp in range(0x10000, sys.maxunicode + 1))


def test_the_rule_reads_unicodes_categories():
    """Spot checks of the generated classes against ``unicodedata``, over every code point: whatever is refused alone
    and inside a name is Cc, Cs, Co, Cn, Zl, Zp or Cf; every letter, number, punctuation mark and symbol but the
    fillers (and U+2800) is visible alone."""
    exact = re.compile(NAME_PATTERN)
    for cp in range(0, sys.maxunicode + 1, 7):
        category = unicodedata.category(chr(cp))
        allowed = bool(exact.search(f"a{chr(cp)}"))
        assert allowed == (category not in ("Cc", "Cs", "Co", "Cn", "Zl", "Zp", "Cf") or 0x200C <= cp <= 0x200F), f"U+{cp:04X}"
        if category[0] in "LNPS" and cp != 0x2800 and "FILLER" not in unicodedata.name(chr(cp), ""):
            assert exact.search(chr(cp)), f"U+{cp:04X} ({category}) is not visible"
