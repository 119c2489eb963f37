"""RULES.md §2 — the ``solitaire`` kind, ruling by ruling, on layouts written out by hand.

Each layout is four lines of thirteen slots (rows 0..3, slots 1..13; ``..`` is a gap) holding the 48
cards once each. Most start from ``STUCK``, where every row ends in a king and a gap in slot 13 (a dead
gap), and change one or two rows so that the ruling under test is the only thing alive on the board:
the full set of legal moves is then compared with the set the ruling predicts.
"""

from __future__ import annotations

import hashlib
from functools import cache

import msgspec
import pytest

from service.events import solitaire as ev
from service.events.base import Player
from service.events.common import Close, Create, GameClosed, SeedRevealed, TakeSeat
from service.rules.errors import RuleViolation
from service.rules.rng import shuffle
from service.rules.solitaire import CODEC, hint, legal_commands, run, view
from service.rules.solitaire import layout as grid
from service.rules.solitaire.hint import BUDGET
from service.rules.solitaire.solver import best_line
from service.rules.solitaire.state import RULES_VERSION, State, initial

SEED = bytes(range(32))
AT = 1_800_000_000_000
replace = msgspec.structs.replace

STUCK = """
2C 4D 6H 8S TC QD 3H 5S 7C 9D JH KS ..
2D 4H 6S 8C TD QH 3S 5C 7D 9H JS KC ..
2H 4S 6C 8D TH QS 3C 5D 7H 9S JC KD ..
2S 4C 6D 8H TS QC 3D 5H 7S 9C JD KH ..
"""


@cache
def dealt(seed: bytes = SEED, rules_version: int = RULES_VERSION) -> State:
    """A real game just dealt under ``rules_version``: Create, then TakeSeat (which deals)."""
    s = initial(ev.SolitaireConfig(seats=1), seed, rules_version)
    for command in (Create(), TakeSeat(player=Player(name="ann", player_id="p_ann"))):
        s = run(s, command, None, AT)[1]
    return s


def board(text: str, redeals_used: int = 0, rules_version: int = RULES_VERSION) -> State:
    """A dealt game with ``text`` laid out instead of its deal, and ``redeals_used`` redeals spent."""
    layout = grid.parse(text)
    assert grid.well_formed(layout), "a test layout must hold the 48 cards once each"
    return replace(dealt(rules_version=rules_version), layout=layout, redeals_used=redeals_used)


def moves(text: str) -> set[grid.Move]:
    layout = grid.parse(text)
    assert grid.well_formed(layout)
    found = grid.legal_moves(layout)
    assert len(found) == len(set(found)), "no move is listed twice"
    return set(found)


def play(s: State, command: msgspec.Struct) -> tuple[list[msgspec.Struct], State]:
    return run(s, command, 0, AT)


def refused(s: State, command: msgspec.Struct, code: str) -> RuleViolation:
    """``command`` is refused with ``code``; the state (immutable) is the same value before and after."""
    before = msgspec.json.encode(s)
    with pytest.raises(RuleViolation) as e:
        play(s, command)
    assert e.value.code == code
    assert msgspec.json.encode(s) == before
    return e.value


def move(card: str, row: int, slot: int) -> ev.Move:
    return ev.Move(card=card, to=ev.Place(row=row, slot=slot))


# --- the deal ------------------------------------------------------------------------------------


def test_a_pinned_seed_deals_this_layout_forever():
    """Stream ``deal`` of this seed, dealt row by row, aces out: written out so the shuffle can never drift."""
    assert grid.deal(SEED) == grid.parse(
        """
        8H 6H TD KD .. JD TC 9S .. QS 2S JS 2C
        JH 4D 5S QC 9C 5D 8C KH 4C 7D 3S 7S TS
        .. 7H 3H 9H QH 6S 5H TH KC 8D 6D 4S 6C
        .. 7C KS 2D 3C 3D 4H 2H 8S 9D JC 5C QD
        """
    )


def test_the_deal_is_public_and_starts_play():
    s = dealt()
    assert s.phase == "playing" and s.layout == grid.deal(SEED)
    assert grid.well_formed(s.layout) and len(grid.gaps(s.layout)) == 4
    v = view(s, 0)
    assert v.status == "playing" and v.redeals_left == 2 and not v.can_undo
    assert view(s, None).layout == v.layout  # face up: a spectator sees the same board


def test_the_stuck_layout_has_no_move():
    assert moves(STUCK) == set()


# --- which card fits which gap ---------------------------------------------------------------------


def test_a_gap_takes_the_next_card_up_from_its_left_and_a_two_on_its_right_offers_nothing():
    assert moves(
        """
        4D 6H 8S TC .. 2C 3H 5S 7C 9D JH KS QD
        2D 4H 6S 8C TD QH 3S 5C 7D 9H JS KC ..
        2H 4S 6C 8D TH QS 3C 5D 7H 9S JC KD ..
        2S 4C 6D 8H TS QC 3D 5H 7S 9C JD KH ..
        """
    ) == {("JC", 0, 5)}  # never the ace of clubs below the 2C


def test_a_gap_takes_the_next_card_down_from_its_right_and_a_king_on_its_left_offers_nothing():
    assert moves(
        """
        2C 4D 6H 8S TC QD 3H KS .. 5S 7C 9D JH
        2D 4H 6S 8C TD QH 3S 5C 7D 9H JS KC ..
        2H 4S 6C 8D TH QS 3C 5D 7H 9S JC KD ..
        2S 4C 6D 8H TS QC 3D 5H 7S 9C JD KH ..
        """
    ) == {("4S", 0, 9)}


def test_a_gap_between_two_cards_takes_from_either_side():
    assert moves(
        """
        2C 4D 6H 8S TC QD 3H 5S .. 7C 9D JH KS
        2D 4H 6S 8C TD QH 3S 5C 7D 9H JS KC ..
        2H 4S 6C 8D TH QS 3C 5D 7H 9S JC KD ..
        2S 4C 6D 8H TS QC 3D 5H 7S 9C JD KH ..
        """
    ) == {("6S", 0, 9), ("6C", 0, 9)}


def test_a_card_that_fits_from_both_sides_is_one_move():
    assert moves(
        """
        2C 4D 6H 8S TC QD 3H 5S .. 7S 9D JH KS
        2D 4H 6S 8C TD QH 3S 5C 7D 9H JS KC ..
        2H 4S 6C 8D TH QS 3C 5D 7H 9S JC KD ..
        2S 4C 6D 8H TS QC 3D 5H 7C 9C JD KH ..
        """
    ) == {("6S", 0, 9)}


def test_a_gap_beside_a_gap_reads_only_its_card_side():
    assert moves(
        """
        2C 4D 6H 8S TC .. .. 3H 5S 7C 9D JH KS
        2D 4H 6S 8C TD QH 3S 5C 7D 9H JS KC QD
        2H 4S 6C 8D TH QS 3C 5D 7H 9S JC KD ..
        2S 4C 6D 8H TS QC 3D 5H 7S 9C JD KH ..
        """
    ) == {("JC", 0, 6), ("2H", 0, 7)}


def test_a_gap_between_gaps_is_dead_and_so_is_a_last_slot_after_a_gap():
    assert moves(
        """
        2C 4D 6H 8S TC .. .. .. 5S 7C 9D JH KS
        2D 4H 6S 8C TD QH 3S 5C 7D 9H JS KC QD
        2H 4S 6C 8D TH QS 3C 5D 7H 9S JC KD 3H
        2S 4C 6D 8H TS QC 3D 5H 7S 9C JD KH ..
        """
    ) == {("JC", 0, 6), ("4S", 0, 8)}
    assert moves(
        """
        2C 4D 6H 8S TC QD 3H 5S 7C 9D JH KS JD
        2D 4H 6S 8C TD QH 3S 5C 7D 9H JS KC ..
        2H 4S 6C 8D TH QS 3C 5D 7H 9S JC KD ..
        2S 4C 6D 8H TS QC 3D 5H 7S 9C KH .. ..
        """
    ) == set()


def test_a_gap_at_the_end_of_a_row_reads_its_left_only_and_rows_do_not_wrap():
    """Row 0's slot 13 would take the 3H from row 1's first card if rows wrapped; it takes only the QH."""
    assert moves(
        """
        2C 4D 6H 8S TC QD 3H 5S 7C 9D KS JH ..
        4H 2D 6S 8C TD QH 3S 5C 7D 9H JS KC ..
        2H 4S 6C 8D TH QS 3C 5D 7H 9S JC KD ..
        2S 4C 6D 8H TS QC 3D 5H 7S 9C JD KH ..
        """
    ) == {("QH", 0, 13)}


def test_a_gap_in_slot_1_takes_any_two_from_anywhere_and_nothing_else():
    """Its right neighbour, the 4S, would offer the 3S to any other gap; slot 1 takes only the twos."""
    assert moves(
        """
        2C 4D 6H 8S TC QD 3H 5S 7C 9D JH KS ..
        2D 4H 6S 8C TD QH 3S 5C 7D 9H JS KC ..
        .. 4S 6C 8D TH QS 3C 5D 7H 9S JC KD 2H
        2S 4C 6D 8H TS QC 3D 5H 7S 9C JD KH ..
        """
    ) == {("2C", 2, 1), ("2D", 2, 1), ("2H", 2, 1), ("2S", 2, 1)}


def test_a_card_fits_every_gap_that_takes_it():
    """A two fits every slot-1 gap: the move names the gap."""
    assert moves(
        """
        .. 4D 6H 8S TC QD 3H 5S 7C 9D JH KS 2C
        2D 4H 6S 8C TD QH 3S 5C 7D 9H JS KC ..
        .. 4S 6C 8D TH QS 3C 5D 7H 9S JC KD 2H
        2S 4C 6D 8H TS QC 3D 5H 7S 9C JD KH ..
        """
    ) == {(two, row, 1) for two in ("2C", "2D", "2H", "2S") for row in (0, 2)}


# --- moves through the decider ---------------------------------------------------------------------

SHUTTLE = """
2C 4D 6H 8S TC QD 3H 7C 9D JH KS 5S ..
2D 4H 6S 7S TD QH 3S 5C 7D 9H JS KC ..
2H 4S 6C 8D TH QS 3C 5D 7H 9S JC KD ..
2S 4C 6D 8H TS QC 3D 5H 8C 9C JD KH ..
"""


def test_a_move_takes_the_card_from_its_slot_and_leaves_a_gap_there():
    s = board(SHUTTLE)
    events, after = play(s, move("6S", 0, 13))
    assert events == [ev.CardMoved(card="6S", from_=ev.Place(row=1, slot=3), to=ev.Place(row=0, slot=13))]
    assert grid.cell(after.layout, 0, 13) == "6S" and grid.cell(after.layout, 1, 3) is None
    assert grid.well_formed(after.layout)
    assert set(grid.legal_moves(after.layout)) == {("5H", 1, 3), ("6S", 1, 3)}


def test_legal_commands_are_the_moves_then_redeal_undo_and_resign():
    s = board(SHUTTLE)
    assert legal_commands(s, 0) == [move("6S", 0, 13), ev.Redeal(), ev.Resign()]
    after = play(s, move("6S", 0, 13))[1]
    assert legal_commands(after, 0) == [move("5H", 1, 3), move("6S", 1, 3), ev.Redeal(), ev.Undo(), ev.Resign()]
    assert legal_commands(after, 1) == [] and legal_commands(replace(after, redeals_used=2), 0)[-2:] == [ev.Undo(), ev.Resign()]


def test_a_card_that_does_not_fit_is_refused():
    e = refused(board(SHUTTLE), move("7S", 0, 13), "card_does_not_fit")
    assert e.detail["fits"] == ["6S"]


def test_a_slot_that_is_not_a_gap_is_refused():
    refused(board(SHUTTLE), move("6S", 0, 12), "not_a_gap")


def test_aces_are_out_of_play_and_never_move():
    s = board(SHUTTLE)
    assert not any(card[0] == "A" for card, _, _ in grid.legal_moves(s.layout))
    refused(s, move("AS", 0, 13), "card_does_not_fit")


def test_only_the_player_plays():
    s = board(SHUTTLE)
    for seat in (None, 1):
        with pytest.raises(RuleViolation) as e:
            run(s, move("6S", 0, 13), seat, AT)
        assert e.value.code == "not_your_game"


def test_the_server_commands_come_from_the_server_only():
    with pytest.raises(RuleViolation) as e:
        run(initial(ev.SolitaireConfig(seats=1), SEED), Create(), 0, AT)
    assert e.value.code == "server_only"
    with pytest.raises(RuleViolation) as e:
        run(dealt(), TakeSeat(player=Player(name="bob")), None, AT)
    assert e.value.code == "game_full"


# --- runs ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("row", "length"),
    [
        ("2H 3H 4H 5H 9C 7D 6S 8S TD JD QD KD ..", 4),
        ("3H 4H 5H 6H 7H 8H 9H TH JH QH KH .. 2H", 0),
        (".. 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH", 0),
        ("2H 3H 4D 5H 6H 7H 8H 9H TH JH QH KH ..", 2),
        ("2H 3H .. 4H 5H 6H 7H 8H 9H TH JH QH KH", 2),
        ("2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS ..", 12),
        ("2S 3S 4S 5S 6S 7S 8S 9S TS JS QS .. KS", 11),
    ],
)
def test_a_run_is_a_two_in_slot_1_then_its_suit_one_rank_up_slot_by_slot(row, length):
    assert grid.run_length(tuple(None if t == ".." else t for t in row.split())) == length


# --- redeals ---------------------------------------------------------------------------------------

RUNNING = """
2H 3H 4H 9C .. 7D 6C 8C TD JD QD KD 5H
2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS ..
4D .. 5C 2D 3C 4C 9D TC JC QC KC 3D 2C
6H 7H 8H 9H TH JH QH KH 5D 6D 7C 8D ..
"""


def test_a_redeal_keeps_the_runs_and_leaves_one_gap_right_after_each():
    s = board(RUNNING)
    assert grid.runs(s.layout) == (3, 12, 0, 0)
    events, after = play(s, ev.Redeal())
    assert events == [ev.Redealt(k=1, layout=grid.redeal(s.layout, SEED, 1))]
    new = after.layout
    assert grid.well_formed(new)
    assert new[0][:3] == ("2H", "3H", "4H") and new[1][:12] == s.layout[1][:12]
    assert grid.gaps(new) == [(0, 4), (1, 13), (2, 1), (3, 1)]  # the complete row keeps its gap in slot 13
    assert grid.runs(new) == (3, 12, 0, 0)
    assert after.redeals_used == 1 and view(after, 0).redeals_left == 1


def test_a_redeal_gathers_the_cards_outside_the_runs_and_shuffles_them_on_its_own_stream():
    s = board(RUNNING)
    seated = {"2H", "3H", "4H", *s.layout[1][:12]}
    gathered = grid.deck_order([c for row in s.layout for c in row if c and c not in seated])
    for k in (1, 2):
        dealt_back = [c for row in grid.redeal(s.layout, SEED, k) for c in row if c and c not in seated]
        assert dealt_back == shuffle(SEED, f"redeal:{k}", gathered)
    assert grid.redeal(s.layout, SEED, 1) != grid.redeal(s.layout, SEED, 2)


def test_two_redeals_a_game_and_a_third_is_refused():
    s = play(play(board(RUNNING), ev.Redeal())[1], ev.Redeal())[1]
    assert s.redeals_used == 2 and ev.Redeal() not in legal_commands(s, 0)
    refused(s, ev.Redeal(), "no_redeal_left")


def test_a_redeal_is_allowed_while_moves_remain():
    """RULES.md §2: the text's "when no move remains" is not enforced."""
    s = board(SHUTTLE)
    assert grid.legal_moves(s.layout)
    assert play(s, ev.Redeal())[0][0].k == 1


def test_undoing_and_redoing_a_redeal_deals_the_same_cards():
    s = board(RUNNING)
    first, once = play(s, ev.Redeal())
    undone, back = play(once, ev.Undo())
    assert undone == [ev.Undone(undoes=once.version, step="redealt", layout=s.layout)]
    assert back.layout == s.layout and back.redeals_used == 0
    again, twice = play(back, ev.Redeal())
    assert again == first and twice.layout == once.layout


# --- undo ------------------------------------------------------------------------------------------


def test_undo_steps_back_through_moves_and_redeals_one_at_a_time():
    s0 = board(SHUTTLE)
    s1 = play(s0, move("6S", 0, 13))[1]
    s2 = play(s1, move("5H", 1, 3))[1]
    s3 = play(s2, ev.Redeal())[1]
    events, b2 = play(s3, ev.Undo())
    assert events == [ev.Undone(undoes=s3.version, step="redealt", layout=s2.layout)]
    assert (b2.layout, b2.redeals_used, b2.last) == (s2.layout, 0, s2.last)
    events, b1 = play(b2, ev.Undo())
    assert events == [ev.Undone(undoes=s2.version, step="card_moved", layout=s1.layout)]
    b0 = play(b1, ev.Undo())[1]
    assert b0.layout == s0.layout and b0.history == () and b0.last is None
    refused(b0, ev.Undo(), "nothing_to_undo")


def test_nothing_to_undo_at_the_deal():
    refused(dealt(), ev.Undo(), "nothing_to_undo")


# --- hint ------------------------------------------------------------------------------------------


def test_the_hint_never_sends_the_card_just_moved_straight_back():
    after = play(board(SHUTTLE), move("6S", 0, 13))[1]
    assert grid.is_shuttle(after.layout, ("6S", 1, 3), after.last)
    assert hint(after) == move("5H", 1, 3)
    assert view(after, 0).hint == move("5H", 1, 3)


def test_the_hint_prefers_a_move_that_grows_a_run():
    s = board(
        """
        2C 4D 6H 8S TC QD 3H 5S 7C 9D JH KS ..
        2D 4H 6S 8C TD QH 3S 5C 7D 9H JS KC ..
        .. 4S 6C 8D TH QS 3C 5D 7H 9S JC KD 2H
        2S 4C 6D 8H TS QC 3D 5H 7S 9C JD KH ..
        """
    )
    assert hint(s) == move("2H", 2, 1)  # the other twos would only leave a run of one behind


def test_with_only_a_shuttle_left_the_hint_is_the_redeal_then_nothing():
    s = board(
        """
        2C 4D 6H 8S TC QD 3H 7C 9D JH 7D 5S ..
        2D 4H KS 6S 7S TD QH 3S 5C 9H JS KC ..
        2H 4S 6C 8D TH QS 3C 5D 7H 9S JC KD ..
        2S 4C 6D 8H TS QC 3D 5H 8C 9C JD KH ..
        """
    )
    after = play(s, move("6S", 0, 13))[1]
    assert set(grid.legal_moves(after.layout)) == {("6S", 1, 4)}
    assert hint(after) == ev.Redeal()
    assert hint(replace(after, redeals_used=2)) is None


DEAD_OR_LIVE = """
2C 4D 6H 8S TC QD 3H 5S 7C 9D JH KS 7H
2D 4H 6S 8C TD QH 3S 5C 7D 9H JS KC ..
2H 4S 6C 8D TH QS 3C 5D .. 9S JC KD ..
2S 4C .. 8H TS QC 3D 5H 7S 9C JD KH 6D
"""
"""Four moves, none growing a run: the 6D and the 7H would leave a slot right of a king with nothing to take it
(dead), the 8S and the 5C live gaps. The best line of the search starts with the 6D."""


def test_the_hint_never_opens_a_dead_gap_where_a_live_alternative_exists():
    s = board(DEAD_OR_LIVE)
    assert moves(DEAD_OR_LIVE) == {("6D", 2, 9), ("8S", 2, 9), ("5C", 3, 3), ("7H", 3, 3)}
    dead = {m for m in moves(DEAD_OR_LIVE) if not grid.fillers(grid.apply_move(s.layout, m), *grid.find(s.layout, m[0]))}
    assert dead == {("6D", 2, 9), ("7H", 3, 3)}
    assert best_line(s.layout, budget=BUDGET).moves[0] == ("6D", 2, 9)  # what the hint named before this ruling
    assert hint(s) == move("8S", 2, 9)  # the first live one in search order


def test_a_move_that_grows_a_run_is_hinted_even_where_it_leaves_a_dead_gap():
    """Growing a run comes first (RULES.md §2): the dead-gap ruling chooses among moves that grow a run alike."""
    s = board(
        """
        2C 4D 6H 8S TC QD 3H 5S 7C 9D JH KS ..
        2D 4H 6S 8C TD QH 3S 5C 7D 9H JS KC ..
        .. 4S 6C 8D TH QS 3C 5D 7H 9S JC KD 2H
        2S 4C 6D 8H TS QC 3D 5H 7S 9C JD KH ..
        """
    )
    after = grid.apply_move(s.layout, ("2H", 2, 1))
    assert grid.fillers(after, 2, 13) == []  # the 2H leaves a slot right of a king
    assert hint(s) == move("2H", 2, 1)


RUN_OF_FOUR = """
2C 3C 4C 5C .. 6C 7C 8C 9C TC JC QC KC
2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD ..
2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH ..
2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS ..
"""
"""The gap after the 5C takes the 6C (seated at once, and the rest of the row after it) or the 5C itself."""


@pytest.mark.parametrize("redeals_used", [0, 2])
def test_after_a_move_that_took_a_card_out_of_a_run_the_hint_puts_it_back_not_a_redeal(redeals_used):
    s = board(RUN_OF_FOUR, redeals_used=redeals_used)
    assert hint(s) == move("6C", 0, 5)
    misstep = play(s, move("5C", 0, 5))[1]
    assert grid.runs(misstep.layout)[0] == 3
    seen, now = {step.layout for step in misstep.history}, sum(grid.runs(misstep.layout))
    after = {m: grid.apply_move(misstep.layout, m) for m in grid.legal_moves(misstep.layout)}
    forward = [m for m, b in after.items() if b not in seen and sum(grid.runs(b)) >= now]
    assert forward == []  # nothing else goes forward: the hint used to say redeal (or, with none left, nothing)
    assert hint(misstep) == move("5C", 0, 4)
    back = play(misstep, hint(misstep))[1]
    assert back.layout == s.layout and hint(back) == move("6C", 0, 5)


@pytest.mark.parametrize("n", range(12))
def test_following_the_hint_never_goes_back_to_a_layout_nor_unseats_a_card(n):
    """"Never a shuttle", read for a whole game: a player who only ever takes the hint never sees a board twice,
    never loses a seated card, and is told to redeal (or, after the last, nothing) when the board has no more."""
    s = dealt(hashlib.sha256(b"hint %d" % n).digest())
    seen = {s.layout}
    for _ in range(5_000):  # a board has fewer forward moves than this: a hint that cycles fails here
        suggested = hint(s)
        if suggested is None:
            break
        assert suggested in legal_commands(s, 0)
        before = s.layout
        s = play(s, suggested)[1]
        if isinstance(suggested, ev.Move):
            assert s.layout not in seen, "the hint led back to a board already played"
            assert sum(grid.runs(s.layout)) >= sum(grid.runs(before)), "the hint gave back a seated card"
        seen.add(s.layout)
    else:
        pytest.fail("the hint never ran out of suggestions")
    assert s.phase != "playing" or s.redeals_left == 0


# --- the end -------------------------------------------------------------------------------------

ONE_TO_GO = """
2C 3C 4C 5C 6C 7C 8C 9C TC JC QC .. KC
2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD ..
2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH ..
2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS ..
"""

LAST_MOVE = """
2C 4D 6H 8S TC QD 3H 5S 7C 9D KS JH ..
2D 4H 6S 8C TD 3S 5C 7D 9H JS KC .. ..
2H 4S 6C 8D TH QS 3C 5D 7H 9S JC KD ..
2S 4C 6D 8H TS QC 3D 5H 7S 9C JD KH QH
"""


def test_won_when_every_row_reads_two_to_king_with_slot_13_empty():
    s = board(ONE_TO_GO)
    assert moves(ONE_TO_GO) == {("KC", 0, 12), ("QC", 0, 12)}
    assert not grid.won(s.layout)
    events, after = play(s, move("KC", 0, 12))
    assert events[1:] == [ev.GameWon(redeals_used=0), SeedRevealed(seed=SEED.hex())]
    assert grid.won(after.layout) and all(row[12] is None for row in after.layout)
    assert hashlib.sha256(bytes.fromhex(events[-1].seed)).digest() == hashlib.sha256(SEED).digest()
    v = view(after, 0)
    assert (v.status, v.result, v.legal, v.hint, v.can_undo) == ("finished", "won", [], None, False)


def test_a_move_that_leaves_nothing_to_do_makes_the_game_stuck_not_lost():
    """RULES.md §2 (rules version 2): no move and no redeal left is stuck, not over; only undo and resign remain."""
    s = board(LAST_MOVE, redeals_used=2)
    assert moves(LAST_MOVE) == {("QH", 0, 13)}
    events, after = play(s, move("QH", 0, 13))
    assert events == [ev.CardMoved(card="QH", from_=ev.Place(row=3, slot=13), to=ev.Place(row=0, slot=13))]
    assert after.phase == "playing" and after.stuck and not s.stuck
    assert legal_commands(after, 0) == [ev.Undo(), ev.Resign()]
    v = view(after, 0)
    assert (v.status, v.stuck, v.result, v.reason, v.hint, v.can_undo) == ("playing", True, None, None, None, True)
    assert v.legal == [ev.Undo(), ev.Resign()] and view(after, None).stuck and view(after, None).legal == []


def test_a_stuck_game_refuses_every_move_and_redeal():
    stuck = play(board(LAST_MOVE, redeals_used=2), move("QH", 0, 13))[1]
    for row, slot in grid.gaps(stuck.layout):
        assert refused(stuck, move("JD", row, slot), "card_does_not_fit").detail["fits"] == []
    refused(stuck, ev.Redeal(), "no_redeal_left")


def test_undo_gets_a_stuck_game_going_again():
    s = board(LAST_MOVE, redeals_used=2)
    stuck = play(s, move("QH", 0, 13))[1]
    events, back = play(stuck, ev.Undo())
    assert events == [ev.Undone(undoes=stuck.version, step="card_moved", layout=s.layout)]
    assert back.layout == s.layout and not back.stuck and back.phase == "playing"
    assert legal_commands(back, 0) == [move("QH", 0, 13), ev.Resign()]


def test_resigning_a_stuck_game_ends_it_as_lost():
    stuck = play(board(LAST_MOVE, redeals_used=2), move("QH", 0, 13))[1]
    events, after = play(stuck, ev.Resign())
    assert events == [ev.GameLost(reason="resigned", runs=(1, 1, 1, 1)), SeedRevealed(seed=SEED.hex())]
    v = view(after, 0)
    assert (after.phase, after.stuck, v.status, v.result, v.reason, v.legal) == ("lost", False, "finished", "lost", "resigned", [])


def test_a_stuck_game_left_for_the_configured_time_ends_as_lost():
    """The server's close of a game nobody moved in (``idle_close_ms``): a stuck game is still being played, so it is
    closed like any other, lost with reason ``idle``."""
    stuck = play(board(LAST_MOVE, redeals_used=2), move("QH", 0, 13))[1]
    events, after = run(stuck, Close(idle_ms=3_600_000, since=AT), None, AT + 3_600_000)
    assert events == [GameClosed(reason="idle", idle_ms=3_600_000), SeedRevealed(seed=SEED.hex())]
    assert view(after, 0).result == "lost" and view(after, 0).reason == "idle"


def test_under_rules_version_1_a_move_that_leaves_nothing_to_do_still_loses_at_once():
    """A recorded version-1 game replays as it was played: lost in the batch of the move, undo refused after it."""
    s = board(LAST_MOVE, redeals_used=2, rules_version=1)
    events, after = play(s, move("QH", 0, 13))
    assert events[1:] == [ev.GameLost(reason="no_moves", runs=(1, 1, 1, 1)), SeedRevealed(seed=SEED.hex())]
    assert after.phase == "lost" and not after.stuck and view(after, 0).reason == "no_moves"
    refused(after, ev.Undo(), "game_over")


@pytest.mark.parametrize("rules_version", [1, 2])
def test_no_move_left_is_not_lost_while_a_redeal_remains(rules_version):
    s = board(LAST_MOVE, redeals_used=1, rules_version=rules_version)
    events, after = play(s, move("QH", 0, 13))
    assert len(events) == 1 and after.phase == "playing" and not after.stuck
    assert legal_commands(after, 0) == [ev.Redeal(), ev.Undo(), ev.Resign()]


def test_resigning_loses():
    events, after = play(board(RUNNING), ev.Resign())
    assert events == [ev.GameLost(reason="resigned", runs=(3, 12, 0, 0)), SeedRevealed(seed=SEED.hex())]
    assert view(after, 0).result == "lost"


@pytest.mark.parametrize("command", [move("QH", 1, 12), ev.Redeal(), ev.Undo(), ev.Resign()])
@pytest.mark.parametrize("ending", ["won", "resigned", "lost under version 1"])
def test_after_the_end_every_command_is_refused_undo_included(command, ending):
    """The ruling: a won or lost game is over; undo cannot reopen it."""
    if ending == "won":
        over = play(board(ONE_TO_GO), move("KC", 0, 12))[1]
    elif ending == "resigned":
        over = play(play(board(LAST_MOVE, redeals_used=2), move("QH", 0, 13))[1], ev.Resign())[1]
    else:
        over = play(board(LAST_MOVE, redeals_used=2, rules_version=1), move("QH", 0, 13))[1]
    refused(over, command, "game_over")
    assert legal_commands(over, 0) == []


# --- the wire ------------------------------------------------------------------------------------


def test_a_move_is_written_with_from_and_to_and_read_back():
    event = ev.CardMoved(card="6S", from_=ev.Place(row=1, slot=3), to=ev.Place(row=0, slot=13))
    type_, public, secret = CODEC.split(event)
    assert (type_, secret) == ("card_moved", None)
    assert public == b'{"card":"6S","from":{"row":1,"slot":3},"to":{"row":0,"slot":13},"type":"card_moved"}'
    assert CODEC.join(public) == event
    assert CODEC.decode_command(b'{"type":"move","card":"6S","to":{"row":0,"slot":13}}') == move("6S", 0, 13)


@pytest.mark.parametrize(
    "body",
    [
        b'{"type":"move","card":"1S","to":{"row":0,"slot":13}}',
        b'{"type":"move","card":"6S","to":{"row":4,"slot":13}}',
        b'{"type":"move","card":"6S","to":{"row":0,"slot":0}}',
        b'{"type":"move","card":"6S","to":{"row":0,"slot":14}}',
    ],
)
def test_a_move_off_the_board_does_not_decode(body):
    with pytest.raises(msgspec.ValidationError):
        CODEC.decode_command(body)


def test_a_config_is_one_seat():
    assert msgspec.json.encode(ev.SolitaireConfig(seats=1)) == b'{"seats":1}'
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"seats": 2}, ev.SolitaireConfig)
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"seats": 1, "redeals": 3}, ev.SolitaireConfig)
