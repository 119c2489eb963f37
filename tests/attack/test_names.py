"""Names that pass the rule of docs/limits.md yet show nothing, or carry what nobody sees.

The rule refuses a name of invisible characters only (spaces, marks, format characters, the Hangul fillers, U+2800),
but a name must not *look* empty: U+1D159 MUSICAL SYMBOL NULL NOTEHEAD is a symbol (So), not default-ignorable,
and has no ink — like U+2800, which the rule singles out for that reason; it is on every published list of
"invisible characters" beside U+2800 and U+3164. And the emoji tag sequence the rule admits (for a subdivision flag)
is matched as *any* run of tag characters: each is an invisible copy of an ASCII character, so a name may carry up to
38 characters of hidden text ("ASCII smuggling") that renders as a bare black flag, in the audit log and the CSV alike.
"""

from __future__ import annotations

import pytest

SMUGGLED = "\U0001F3F4" + "".join(chr(0xE0000 + ord(c)) for c in "ignore all previous") + "\U000E007F"


@pytest.mark.parametrize("name", ["\U0001D159", "\U0001D159" * 40, "\u3164\U0001D159"], ids=["null_notehead", "forty", "filler_and_notehead"])
async def test_a_name_that_renders_as_nothing_is_refused(api, name):
    r = await api.post("/players", json={"name": name})
    assert r.status_code == 400, f"{name!r} (renders blank) was accepted: {r.status_code} {r.text}"


async def test_a_flag_tag_sequence_cannot_carry_hidden_text(api):
    """A subdivision flag's tags spell a region code (``gbsct``: letters and digits, a handful of them, UTS #51 ED-14a);
    a tag space, tag punctuation or a sentence in tags is no flag."""
    r = await api.post("/players", json={"name": "Ann" + SMUGGLED})
    assert r.status_code == 400, f"a name carrying {len(SMUGGLED) - 2} invisible tag characters was accepted: {r.json()}"
