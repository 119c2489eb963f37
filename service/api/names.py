"""What a name may hold (docs/limits.md), from Unicode's own categories as this Python's ``unicodedata`` has them,
read once at import over every code point: not a hand-kept list of characters, so a new Unicode version needs no edit.

A name is shown inside one line of the audit log and of every screen, so that everyone can see who it is:

- never anywhere: a control (Cc), surrogate (Cs), private-use (Co) or unassigned code point (Cn, noncharacters
  included), a line or paragraph separator (Zl, Zp), or a format character (Cf: bidirectional embeddings, overrides
  and isolates, the Arabic letter mark, interlinear annotations, soft hyphen, zero-width space, ...), except the four a
  real name needs inside it: ZWNJ and ZWJ (Persian, emoji sequences) and LRM and RLM (right-to-left names), and the tag
  characters of an emoji tag sequence (a subdivision flag: U+1F3F4, tags U+E0020–E007E, the cancel tag U+E007F);
- at least one visible character: a letter, number, punctuation mark or symbol (L*, N*, P*, S*) that is neither a
  Default_Ignorable_Code_Point nor rendered blank. Marks (variation selectors, combining accents), spaces and the
  characters above that are allowed may sit around it, not make up a name alone.
"""

from __future__ import annotations

import sys
import unicodedata
from itertools import groupby

from .errors import describe_pattern
from .openapi import published_as

_NEVER = {"Cc", "Cs", "Co", "Cn", "Zl", "Zp"}
_FORMAT_ALLOWED = {0x200C, 0x200D, 0x200E, 0x200F}  # ZWNJ, ZWJ, LRM, RLM
_INKLESS = (0x2800, 0x1D159)
"""Symbols (So) drawn with no ink, though Unicode neither calls them default-ignorable nor spaces: the Braille pattern
with no dots (the block encodes dots as bits of the offset from U+2800) and the musical null notehead (a notehead
placeholder). Both are well-known ways to make an empty-looking name; the only graphic characters Unicode defines
as drawing nothing by design."""
FLAG = r"\U0001F3F4[\U000E0030-\U000E0039\U000E0061-\U000E007A]{2,6}\U000E007F"
"""An emoji tag sequence of a subdivision flag (UTS #51, ED-14a and CLDR's subdivision ids): its base, a region code of
two to six tag letters and digits, and the cancel tag; the only place a tag is allowed. Tags are invisible copies of
ASCII: a longer run, or tag spaces and punctuation, would carry text that no screen shows."""


def _runs() -> list[tuple[str, int, int]]:
    """Every code point, as runs of one general category ``(category, first, last)``: a few thousand of them."""
    out = []
    first = 0
    for category, run in groupby(map(unicodedata.category, map(chr, range(sys.maxunicode + 1)))):
        last = first + len(list(run)) - 1
        out.append((category, first, last))
        first = last + 1
    return out


def _fillers(runs: list[tuple[str, int, int]]) -> set[int]:
    """The Default_Ignorable_Code_Points among letters, numbers, punctuation and symbols. That property (UAX #44) is
    Other_Default_Ignorable_Code_Point + Cf + Variation_Selector, less white space and a few format characters meant
    to be seen; Cf and Variation_Selector (Mn) characters are never visible here anyway, and of
    Other_Default_Ignorable_Code_Point only the Hangul fillers are letters (the rest are marks or unassigned), each
    named a FILLER (U+115F, U+1160, U+3164, U+FFA0)."""
    letters = (cp for category, first, last in runs if category[0] == "L" for cp in range(first, last + 1))
    return {cp for cp in letters if "FILLER" in unicodedata.name(chr(cp), "")}


def _kind(category: str) -> str:
    """``never``, ``visible`` or ``blank`` (allowed, but not enough alone), by general category."""
    if category in _NEVER or category == "Cf":
        return "never"
    return "visible" if category[0] in "LNPS" else "blank"


def _classes() -> dict[str, str]:
    """Each kind's code points as the inside of a regular-expression character class (``\\u0041-\\u005a...``)."""
    runs = _runs()
    exceptions = dict.fromkeys([*_FORMAT_ALLOWED, *_INKLESS, *_fillers(runs)], "blank")
    points: list[tuple[str, int, int]] = []  # (kind, first, last), each exception a run of its own
    for category, first, last in runs:
        for cp in sorted(cp for cp in exceptions if first <= cp <= last):
            points += [(_kind(category), first, cp - 1), (exceptions[cp], cp, cp)]
            first = cp + 1
        points.append((_kind(category), first, last))
    ranges: dict[str, list[str]] = {"never": [], "visible": [], "blank": []}
    for kind, run in groupby((p for p in points if p[1] <= p[2]), key=lambda p: p[0]):
        spans = list(run)
        first, last = spans[0][1], spans[-1][2]
        ranges[kind].append(_escape(first) if first == last else f"{_escape(first)}-{_escape(last)}")
    return {kind: "".join(parts) for kind, parts in ranges.items()}


def _escape(cp: int) -> str:
    return f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}"


_CLASS = _classes()
_ALLOWED = _CLASS["visible"] + _CLASS["blank"]

PUBLISHED_PATTERN = (
    r"^[^\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]*[^\s\u200b-\u200d\u2060\ufeff\x00-\x1f\x7f-\x9f"
    r"\u2028\u2029\u202a-\u202e\u2066-\u2069][^\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]*$"
)
"""What OpenAPI publishes in the rule's place: the rule needs Unicode's categories, which a JSON Schema pattern
(ECMA-262, where ``\\p{...}`` needs the ``u`` flag that JSON Schema does not promise) cannot be relied on to have,
and its generated classes are 30 KB. This is a condition every accepted name meets (no control, line-break or
text-direction character, and one that is neither white space nor zero-width); ``DESCRIPTION`` states the rest."""
DESCRIPTION = (
    "1–40 code points, kept exactly as sent. At least one visible character: a letter, number, punctuation mark or "
    "symbol (Unicode L*, N*, P*, S*) other than the default-ignorable Hangul fillers and the inkless U+2800 (the "
    "blank Braille pattern) and U+1D159 (the musical null notehead). Never: control, surrogate, private-use or "
    "unassigned code points (Cc, Cs, Co, Cn; noncharacters included), line or paragraph separators (Zl, Zp), or "
    "format characters (Cf) other than ZWNJ, ZWJ, LRM and RLM (U+200C–U+200F) and the tags of a subdivision flag "
    "(U+1F3F4, two to six tag letters or digits, then U+E007F). The "
    "pattern is a necessary condition only: the service applies the whole rule (docs/limits.md)."
)
IN_WORDS = (
    "a name with at least one visible character (a letter, digit, punctuation mark or symbol), and no control, "
    "line-break, text-direction, format, private-use or unassigned character"
)
"""The rule as a refusal's message says it (never the regular expression: ``describe_pattern``)."""
# Blank characters, then the first visible one (or a flag), then anything allowed: the classes do not overlap, so
# the match never backtracks far, whatever is sent (msgspec checks the length limit first anyway).
NAME_PATTERN = describe_pattern(
    published_as(
        rf"^[{_CLASS['blank']}]*(?:{FLAG}|[{_CLASS['visible']}])(?:{FLAG}|[{_ALLOWED}])*$",
        pattern=PUBLISHED_PATTERN,
        description=DESCRIPTION,
    ),
    IN_WORDS,
)
