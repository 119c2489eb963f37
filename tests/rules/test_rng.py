"""Known-answer tests of the RNG ``hmac-sha256-v1`` (DESIGN.md, "Determinism, fairness and the seed").

Each expectation is pinned twice: recomputed here from ``hmac``/``hashlib`` straight from the
specification (so the module cannot drift from the spec), and as literal constants (so a change of
algorithm made in both the module and a re-implementation is still caught).
"""

from __future__ import annotations

import hashlib
import hmac
from itertools import islice

import pytest

from service.rules import rng
from service.rules.free_parking import cards

SEED_COUNT = bytes(range(32))  # 00 01 02 … 1f
SEED_ZERO = bytes(32)
SEED_TEXT = hashlib.sha256(b"free parking").digest()


# --- an independent implementation of the spec, for the tests only -------------------------------


def spec_block(seed: bytes, stream: str, n: int) -> bytes:
    """Block n of stream s: HMAC-SHA256(key=seed, msg=utf8(f"{s}:{n}"))."""
    return hmac.new(seed, f"{stream}:{n}".encode("utf-8"), hashlib.sha256).digest()


def spec_words(seed: bytes, stream: str):
    """Four 64-bit big-endian words per block, used in order, blocks n = 0, 1, 2, …"""
    n = 0
    while True:
        block = spec_block(seed, stream, n)
        for i in range(4):
            yield int.from_bytes(block[8 * i : 8 * i + 8], "big")
        n += 1


def spec_below(words, k: int) -> int:
    limit = (2**64 // k) * k
    while True:
        w = next(words)
        if w < limit:
            return w % k


def spec_shuffle(seed: bytes, stream: str, items: list) -> list:
    out, words = list(items), spec_words(seed, stream)
    for i in range(len(out) - 1, 0, -1):
        j = spec_below(words, i + 1)
        out[i], out[j] = out[j], out[i]
    return out


def module_words(seed: bytes, stream: str, count: int) -> list[int]:
    s = rng.Stream(seed, stream)
    return [s.word() for _ in range(count)]


# --- the RNG id ------------------------------------------------------------------------------------


def test_rng_id():
    assert rng.RNG_ID == "hmac-sha256-v1"


# --- words -----------------------------------------------------------------------------------------

# Literal first six words (block 0 and the first two words of block 1) of three (seed, stream) pairs.
KNOWN_WORDS = [
    (
        SEED_COUNT,
        "deal:1:playing",
        [
            0x6D9F614110581603,
            0xC5F702C6F7FBA779,
            0xB13B0F1991793A12,
            0xEFFEDAD9B474A589,
            0xD7777658B633C828,
            0x74E1FCA27F83230C,
        ],
    ),
    (
        SEED_ZERO,
        "dice",
        [
            0x2B8AD10A0C5D278C,
            0x009122F807DD6175,  # a word with a leading zero byte: still 64 bits, big-endian
            0x11613A2E1AA0EA7B,
            0x1F1FA87E3DDC6ABE,
            0x9239C0C00DA9B67C,
            0xD0AA2864D637A99A,
        ],
    ),
    (
        SEED_TEXT,
        "tëst",  # a stream name outside ASCII is encoded as UTF-8
        [
            0xC9E52354437C5D9E,
            0xED3D9B92017EA107,
            0x210D4FDD3206711E,
            0x312C4C92DA6A99A4,
            0x3A0DD8DCA154EEB5,
            0x38A2B2BBD0FA43DB,
        ],
    ),
]


@pytest.mark.parametrize(("seed", "stream", "expected"), KNOWN_WORDS, ids=["count-deal", "zero-dice", "text-utf8"])
def test_words_match_spec_and_literals(seed, stream, expected):
    independent = list(islice(spec_words(seed, stream), 6))
    assert independent == expected  # the literals are what the spec says
    assert module_words(seed, stream, 6) == expected  # and what the module draws


def test_block_bytes_literal():
    """The raw HMAC blocks themselves, as hex, for a re-implementer to check against."""
    assert (
        spec_block(SEED_COUNT, "deal:1:playing", 0).hex()
        == "6d9f614110581603c5f702c6f7fba779b13b0f1991793a12effedad9b474a589"
    )
    assert (
        spec_block(SEED_COUNT, "deal:1:playing", 1).hex()
        == "d7777658b633c82874e1fca27f83230c270d2f9836098a71ce651feab764c2ab"
    )


def test_blocks_continue_past_the_first_four_words():
    """Word 4 is the first word of block 1, word 8 the first of block 2, … for many blocks."""
    seed, stream = SEED_COUNT, "deal:1:playing"
    got = module_words(seed, stream, 40)
    for n in range(10):
        block = spec_block(seed, stream, n)
        assert got[4 * n : 4 * n + 4] == [int.from_bytes(block[i : i + 8], "big") for i in range(0, 32, 8)]
    assert got[4] == 0xD7777658B633C828
    assert got[5] == 0x74E1FCA27F83230C
    assert got[6] == 0x270D2F9836098A71
    assert got[7] == 0xCE651FEAB764C2AB


def test_the_message_is_stream_colon_block_number():
    """A stream name that itself contains colons is used verbatim: ``deal:1:playing`` block 10 is ``deal:1:playing:10``."""
    stream = rng.Stream(SEED_COUNT, "deal:1:playing")
    words = [stream.word() for _ in range(44)]
    block10 = hmac.new(SEED_COUNT, b"deal:1:playing:10", hashlib.sha256).digest()
    assert words[40] == int.from_bytes(block10[:8], "big")


def test_words_are_64_bit():
    for w in module_words(SEED_TEXT, "width", 400):
        assert 0 <= w < 2**64


# --- independence ---------------------------------------------------------------------------------


def test_streams_are_independent():
    """Drawing from one stream never shifts another: interleaved draws equal separate ones."""
    a_alone = module_words(SEED_COUNT, "a", 12)
    b_alone = module_words(SEED_COUNT, "b", 12)
    a, b = rng.Stream(SEED_COUNT, "a"), rng.Stream(SEED_COUNT, "b")
    a_mixed, b_mixed = [], []
    for i in range(12):
        a_mixed.append(a.word())
        if i % 3 == 0:
            b_mixed.append(b.word())
    while len(b_mixed) < 12:
        b_mixed.append(b.word())
    assert a_mixed == a_alone
    assert b_mixed == b_alone
    assert a_alone != b_alone
    assert a_alone == list(islice(spec_words(SEED_COUNT, "a"), 12))
    assert b_alone == list(islice(spec_words(SEED_COUNT, "b"), 12))


def test_a_fresh_stream_starts_again():
    """Two Stream objects of the same (seed, name) give the same words: streams are pure functions."""
    assert module_words(SEED_ZERO, "dice", 9) == module_words(SEED_ZERO, "dice", 9)


def test_seeds_and_names_matter():
    base = module_words(SEED_COUNT, "deal:1:playing", 4)
    assert module_words(SEED_ZERO, "deal:1:playing", 4) != base
    assert module_words(SEED_COUNT, "deal:2:playing", 4) != base
    assert module_words(SEED_COUNT, "deal:1:playing:", 4) != base
    # a seed one bit away changes everything
    flipped = bytes([SEED_COUNT[0] ^ 1]) + SEED_COUNT[1:]
    assert module_words(flipped, "deal:1:playing", 4) != base


# --- below(k) -------------------------------------------------------------------------------------

# below(k) for these k in this order, all drawn from ONE stream (SEED_TEXT, "below") — each call takes
# the next word(s), so the sequence pins both the arithmetic and the word consumption.
BELOW_SEQUENCE = [
    (1, 0),
    (2, 1),
    (3, 1),
    (6, 0),
    (10, 8),
    (52, 6),
    (64, 25),
    (128, 126),
    (1000, 324),
    (2**32, 551793852),
    (2**63 + 1, 7083265699948493226),
    (7, 0),
]


def test_below_sequence_pinned():
    s = rng.Stream(SEED_TEXT, "below")
    got = [(k, s.below(k)) for k, _ in BELOW_SEQUENCE]
    words = spec_words(SEED_TEXT, "below")
    independent = [(k, spec_below(words, k)) for k, _ in BELOW_SEQUENCE]
    assert got == independent
    assert got == BELOW_SEQUENCE


# Fresh streams (SEED_TEXT, "below"): the first call's answer for each k.
BELOW_FIRST = {1: 0, 2: 1, 3: 1, 6: 1, 10: 1, 52: 41, 64: 57, 128: 121, 1000: 321, 2**32: 2104889209}


@pytest.mark.parametrize("k", sorted(BELOW_FIRST))
def test_below_first_word(k):
    first = next(spec_words(SEED_TEXT, "below"))
    assert first == 0xC6078A957D760F79
    # with these k the first word is accepted (it is far below ⌊2⁶⁴/k⌋·k), so the answer is word mod k
    assert first < (2**64 // k) * k
    assert rng.Stream(SEED_TEXT, "below").below(k) == first % k == BELOW_FIRST[k]


def test_below_one_takes_a_word():
    """below(1) is always 0 but still consumes a word (every word is accepted)."""
    s = rng.Stream(SEED_ZERO, "dice")
    assert s.below(1) == 0
    assert s.word() == 0x009122F807DD6175


@pytest.mark.parametrize("k", [0, -1])
def test_below_needs_a_positive_bound(k):
    with pytest.raises(ValueError):
        rng.Stream(SEED_ZERO, "dice").below(k)


BIG = 2**63 + 1  # ⌊2⁶⁴/k⌋·k = k: every word ≥ 2⁶³+1 is rejected (about half of them)


def test_below_rejects_a_word_at_or_over_the_limit():
    """(SEED_COUNT, "reject:0"): the first word is over the limit for k = 2⁶³+1, the second is used."""
    words = list(islice(spec_words(SEED_COUNT, "reject:0"), 2))
    assert words == [0xE517893F4B030C27, 0x48FB28755D7907A8]
    assert words[0] >= (2**64 // BIG) * BIG  # rejected
    assert words[1] < BIG
    s = rng.Stream(SEED_COUNT, "reject:0")
    assert s.below(BIG) == 0x48FB28755D7907A8 == 5258841474429683624
    # …and the stream has moved past both words
    assert s.word() == 0x647D8AF59BC9D404
    # without rejection the answer would have been the first word mod k: it is not
    assert 0xE517893F4B030C27 % BIG != 0x48FB28755D7907A8


def test_below_rejects_twice():
    """(SEED_COUNT, "reject:3"): two words rejected, the third used."""
    words = list(islice(spec_words(SEED_COUNT, "reject:3"), 3))
    assert words == [0x952422865842F57D, 0xB3E927D987985030, 0x08E950A3865BC879]
    assert words[0] >= BIG and words[1] >= BIG and words[2] < BIG
    assert rng.Stream(SEED_COUNT, "reject:3").below(BIG) == 0x08E950A3865BC879
    assert spec_below(spec_words(SEED_COUNT, "reject:3"), BIG) == 0x08E950A3865BC879


def test_below_limit_is_exclusive():
    """A word exactly equal to ⌊2⁶⁴/k⌋·k is rejected; one below it is accepted (checked via a stub stream)."""

    class Stub(rng.Stream):
        __slots__ = ()

        def __init__(self, words):  # noqa: D107 - replaces the word source only
            self._words = iter(words)

    k = 3 * 2**62  # ⌊2⁶⁴/k⌋ = 1, so the limit is k itself
    limit = (2**64 // k) * k
    assert Stub([limit, 5]).below(k) == 5
    assert Stub([limit - 1]).below(k) == limit - 1
    assert Stub([2**64 - 1, 2**64 - 2, 7]).below(k) == 7
    k = 10  # ⌊2⁶⁴/10⌋·10 = 18446744073709551610: only the last six words are rejected
    limit = (2**64 // k) * k
    assert limit == 18446744073709551610
    assert Stub([limit, limit + 5, 2**64 - 1, limit - 1]).below(k) == (limit - 1) % 10 == 9


# --- shuffles --------------------------------------------------------------------------------------


def test_shuffle_of_ten_pinned():
    items = list(range(10))
    expected = [4, 9, 6, 0, 8, 7, 1, 5, 3, 2]
    assert spec_shuffle(SEED_COUNT, "shuffle:test", items) == expected
    assert rng.shuffle(SEED_COUNT, "shuffle:test", items) == expected
    assert rng.Stream(SEED_COUNT, "shuffle:test").shuffled(items) == expected
    assert items == list(range(10))  # the input is not touched


def test_shuffle_is_fisher_yates_from_the_last_index_down():
    """Spelled out step by step: for i = 9 … 1, j = below(i+1), swap — the j's are pinned too."""
    s = rng.Stream(SEED_COUNT, "shuffle:test")
    js = [s.below(i + 1) for i in range(9, 0, -1)]
    assert js == [2, 3, 5, 1, 5, 3, 0, 1, 1]
    out = list(range(10))
    for i, j in zip(range(9, 0, -1), js):
        out[i], out[j] = out[j], out[i]
    assert out == [4, 9, 6, 0, 8, 7, 1, 5, 3, 2]


def test_shuffle_playing_deck_pinned():
    """The first ten cards of the one-set playing deck shuffled on stream ``deal:1:playing`` of the zero seed."""
    deck = [c.id for c in cards.playing_deck(1)]
    expected_top = ["P40-5", "P50-4", "P10-3", "P60-1", "M40-1", "P30-2", "M30-2", "P20-2", "P50-2", "M30-7"]
    assert rng.shuffle(SEED_ZERO, "deal:1:playing", deck)[:10] == expected_top
    assert spec_shuffle(SEED_ZERO, "deal:1:playing", deck)[:10] == expected_top
    assert sorted(rng.shuffle(SEED_ZERO, "deal:1:playing", deck)) == sorted(deck)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 17, 52, 64, 128])
@pytest.mark.parametrize("seed", [SEED_COUNT, SEED_ZERO, SEED_TEXT], ids=["count", "zero", "text"])
def test_shuffle_matches_spec(seed, n):
    items = [f"c{i}" for i in range(n)]
    got = rng.shuffle(seed, f"deck:{n}", items)
    assert got == spec_shuffle(seed, f"deck:{n}", items)
    assert sorted(got) == sorted(items)


def test_shuffle_of_zero_or_one_item_draws_nothing():
    s = rng.Stream(SEED_ZERO, "dice")
    assert s.shuffled([]) == []
    assert s.shuffled(["x"]) == ["x"]
    assert s.word() == 0x2B8AD10A0C5D278C  # still the first word


def test_shuffle_of_two_uses_one_word():
    s = rng.Stream(SEED_ZERO, "dice")
    # i = 1: j = below(2) = first word mod 2 = 0 (0x…8c is even) → swap items 1 and 0
    assert s.shuffled(["a", "b"]) == ["b", "a"]
    assert s.word() == 0x009122F807DD6175


# --- the game's seed from the server's and the seats' (docs/rng.md, "The game's seed") --------------------------

SERVER_SEED = SEED_COUNT  # 00 01 … 1f, the worked example of docs/rng.md
PLAYER_SEED_0 = bytes([0xAA]) * 32  # seat 0 brought aa aa … aa
PLAYER_SEED_2 = bytes(range(32, 64))  # seat 2 brought 20 21 … 3f; seat 1 (a bot) brought none


def spec_client_seed(server_seed: bytes, seat: int) -> bytes:
    return hmac.new(server_seed, f"free-parking/client-seed/v1:{seat}".encode("utf-8"), hashlib.sha256).digest()


def spec_game_seed(server_seed: bytes, client_seeds: list[bytes]) -> bytes:
    return hmac.new(server_seed, "free-parking/game-seed/v1".encode("utf-8") + b"".join(client_seeds), hashlib.sha256).digest()


def test_client_seed_for_matches_spec_and_literals():
    assert rng.client_seed_for(SERVER_SEED, 0) == spec_client_seed(SERVER_SEED, 0)
    assert rng.client_seed_for(SERVER_SEED, 0).hex() == "7696b9703c544c6b1ba2f00e2b914a9ecb69e814365fd36452e60ac339d2018d"
    assert rng.client_seed_for(SERVER_SEED, 1).hex() == "d87a2e48455a62c0de4acfdf8129b866c118a2a38d492cd68f623ee9fc870597"
    assert rng.client_seed_for(SERVER_SEED, 7) == spec_client_seed(SERVER_SEED, 7)
    assert rng.client_seed_for(SEED_ZERO, 1) != rng.client_seed_for(SERVER_SEED, 1)  # keyed by the server seed


def test_game_seed_matches_spec_and_the_worked_example_of_the_docs():
    seeds = [PLAYER_SEED_0, rng.client_seed_for(SERVER_SEED, 1), PLAYER_SEED_2]
    assert rng.game_seed(SERVER_SEED, seeds) == spec_game_seed(SERVER_SEED, seeds)
    assert rng.game_seed(SERVER_SEED, seeds).hex() == "0dd19dfdb6ca3ae9ca0b451975c7ada352425d05d15d7d9ef2dc28922b070920"
    # and the streams are keyed by it: the docs' example shuffle of 0…9 on stream deal:1:playing
    assert rng.shuffle(rng.game_seed(SERVER_SEED, seeds), "deal:1:playing", list(range(10))) == [7, 3, 9, 1, 8, 4, 0, 5, 6, 2]


def test_game_seed_depends_on_every_client_seed_and_on_their_order():
    seeds = [PLAYER_SEED_0, rng.client_seed_for(SERVER_SEED, 1), PLAYER_SEED_2]
    base = rng.game_seed(SERVER_SEED, seeds)
    for seat in range(3):
        changed = list(seeds)
        changed[seat] = bytes([changed[seat][0] ^ 1]) + changed[seat][1:]
        assert rng.game_seed(SERVER_SEED, changed) != base, seat
    assert rng.game_seed(SERVER_SEED, [seeds[2], seeds[1], seeds[0]]) != base
    assert rng.game_seed(SEED_ZERO, seeds) != base


def test_game_seed_refuses_a_client_seed_that_is_not_32_bytes():
    with pytest.raises(ValueError, match="seat 1 has 31 bytes"):
        rng.game_seed(SERVER_SEED, [PLAYER_SEED_0, bytes(31)])
    with pytest.raises(ValueError):
        rng.game_seed(SERVER_SEED, [])
