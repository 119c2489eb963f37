"""The expert bot: a search that sees what its seat sees and nothing more, plays every decision the game asks of it,
and plays the same game again from the same seed and budget."""

from __future__ import annotations

import random

import pytest
from msgspec.structs import replace

from service.bots import BOTS, next_move, worlds
from service.bots.expert import ExpertBot, candidates
from service.bots.free_parking import GreedyBot, RandomBot
from service.events import free_parking as ev
from service.rules import free_parking
from service.rules.free_parking.state import State
from service.sim.games import new_game, play

from .conftest import assert_cards_conserved

SMALL = 150  # nodes: enough to search, small enough for a test


def redealt(s: State, seat: int, rnd: random.Random) -> State:
    """Another table ``seat`` cannot tell from ``s``, made without the bot's code: every hidden card elsewhere."""
    others = [i for i in range(s.n) if i != seat]
    hidden = [c for i in others for c in s.seats[i].hand] + list(s.deck)
    rnd.shuffle(hidden)
    seats, at = list(s.seats), 0
    for i in others:
        size = len(seats[i].hand)
        seats[i], at = replace(seats[i], hand=tuple(hidden[at : at + size])), at + size
    second = list(s.second_chance)
    rnd.shuffle(second)
    action = s.action
    if action is not None and action.fan:
        action = replace(action, fan=tuple(rnd.sample(action.fan, len(action.fan))))
    return replace(s, seats=tuple(seats), deck=tuple(hidden[at:]), second_chance=tuple(second), action=action,
                   seed=rnd.randbytes(32), seeding="legacy", game_seed=None)


def positions(games: int, seats: int = 2, **options):
    """Tables met in seeded games of random and greedy bots (in turn around the table), each with the seats that
    have a choice to make there."""
    for g in range(games):
        players = [RandomBot() if i % 2 == 0 else GreedyBot() for i in range(seats)]
        sim = new_game("free-parking", seats, bytes([g + 1]) * 32, f"expert-{g}", [p.name for p in players], options)
        rnd = random.Random(g)
        while sim.game.state.phase != "finished":
            s = sim.game.state
            for seat in range(seats):
                if len(candidates(s, seat, free_parking.legal_commands(s, seat))) > 1:
                    yield s, seat
            seat, command = next_move(free_parking, s, players, rnd)
            sim.send(command, seat)


def test_a_world_is_a_table_the_seat_cannot_tell_apart_with_every_card_in_one_place():
    for s, seat in list(positions(3, seats=3))[::7]:
        world = worlds.sample(s, seat, random.Random(1))
        assert free_parking.view(world, seat) == free_parking.view(s, seat)
        assert_cards_conserved(world)
        assert world.seed != s.seed


def test_the_experts_choices_do_not_depend_on_any_card_its_seat_cannot_see():
    """Every hidden card replaced by another consistent deal (the other hands, both decks, a fan, the seed): the
    seat's view is the same, and so is every choice the expert makes there."""
    checked = changed = 0
    for s, seat in list(positions(4, seats=3))[::5]:
        other = redealt(s, seat, random.Random(checked))
        assert free_parking.view(other, seat) == free_parking.view(s, seat)
        changed += other.deck != s.deck or any(a.hand != b.hand for a, b in zip(other.seats, s.seats, strict=True))
        legal = free_parking.legal_commands(s, seat)
        assert legal == free_parking.legal_commands(other, seat)
        bot = ExpertBot(SMALL)
        assert bot.choose(s, seat, legal, random.Random(7)) == bot.choose(other, seat, legal, random.Random(7))
        checked += 1
    assert checked >= 40 and changed >= checked // 2


def test_the_omniscient_ceiling_reads_the_hidden_cards_so_the_check_above_could_fail():
    """The same check on the search given the true table finds choices that change with the hidden cards."""
    differ = 0
    for s, seat in list(positions(4, seats=3))[::5]:
        other = redealt(s, seat, random.Random(0))
        legal = free_parking.legal_commands(s, seat)
        bot = ExpertBot(SMALL, omniscient=True)
        differ += bot.choose(s, seat, legal, random.Random(7)) != bot.choose(other, seat, legal, random.Random(7))
    assert differ > 0


def test_the_expert_is_seatable_and_the_omniscient_search_is_not():
    assert "expert" in BOTS["free-parking"]
    assert "omniscient" not in BOTS["free-parking"] and "open-hands" not in BOTS["free-parking"]


def test_an_open_hands_world_keeps_every_hand_and_hides_only_the_orders_of_the_decks():
    """``open-hands`` (measurement only) splits the ceiling: it sees the other hands, as the omniscient search does,
    but not which card each draw brings."""
    reordered = 0
    for s, seat in list(positions(3, seats=3))[::9]:
        world = worlds.sample(s, seat, random.Random(3), hands_known=True)
        assert [st.hand for st in world.seats] == [st.hand for st in s.seats]
        assert sorted(world.deck) == sorted(s.deck) and sorted(world.second_chance) == sorted(s.second_chance)
        assert world.seed != s.seed
        reordered += world.deck != s.deck
    assert reordered > 0


def _played(bots: list[str], seed: bytes, nodes: int = SMALL, **options) -> list:
    sim = new_game("free-parking", len(bots), seed, "expert-game", bots, options)
    players = [ExpertBot(nodes) if b == "expert" else BOTS["free-parking"][b]() for b in bots]
    for _ in play(sim, bots, random.Random(3), players=players):
        pass
    return sim.envelopes


def test_the_same_seed_and_budget_play_the_same_game():
    first, again = _played(["expert", "greedy"], b"\x05" * 32), _played(["expert", "greedy"], b"\x05" * 32)
    assert [e.hash for e in first] == [e.hash for e in again]
    assert first[-1].type == "seed_revealed"


@pytest.mark.parametrize("mode", ["standard", "tournament"])
def test_experts_play_whole_games_making_every_kind_of_decision(mode):
    """Four experts to the end: main plays, Second Chance draws and endings of turns, answers and choices."""
    made: set[type] = set()
    for g in range(2):
        sim = new_game("free-parking", 4, bytes([40 + g]) * 32, "experts", ["expert"] * 4, {"mode": mode})
        players = [ExpertBot(25)] * 4
        rnd = random.Random(g)
        while sim.game.state.phase != "finished":
            seat, command = next_move(free_parking, sim.game.state, players, rnd)
            made.add(type(command))
            sim.send(command, seat)
    assert {ev.FeedMeter, ev.RunErrand, ev.DrawSecondChance, ev.EndTurn, ev.Discard} <= made
    assert made & {ev.Accept, ev.TalkOut, ev.Choose}


def test_the_expert_strikes_out_of_turn_at_a_leader_in_violation(table):
    """Seat 1, about to play, has 150 points down and an empty meter: the expert at seat 2 holds Officer Jones."""
    t = table(hands={1: ["M20-1"], 2: ["OJ-1", "M30-1"]}, points={1: ["P60-1", "P50-1", "P40-1"]}, meters={1: 0})
    assert ExpertBot(SMALL).choose(t.state, 2, t.legal(2), random.Random(0)) == ev.OfficerJones(card="OJ-1", target=1)


def test_the_expert_talks_its_way_out_of_losing_a_full_meter(table):
    t = table(hands={1: ["TE-1"], 2: ["TW-1", "P60-1"]}, meters={2: 60})
    t.play(ev.TimeExpires(card="TE-1", target=2), 1)
    assert ExpertBot(SMALL).choose(t.state, 2, t.legal(2), random.Random(0)) == ev.TalkOut(card="TW-1")


def test_a_choice_the_seat_cannot_see_into_is_searched_once(table):
    """Positions in a fan of face-down Point cards are the same to the drawer: one candidate."""
    t = table(phase="after_main", second_chance=["SC-take_point-1"], points={2: ["P10-1", "P20-1", "P30-1"]})
    t.play(ev.DrawSecondChance(), 1)
    if t.pending.kind == "target":
        t.play(ev.Choose(target=2), 1)
    if t.pending.kind == "respond":
        t.play(ev.Accept(), 2)
    assert t.pending.kind == "position"
    assert len(candidates(t.state, 1, t.legal(1))) == 1


@pytest.mark.parametrize(("mine", "theirs", "wanted"), [
    (["P20-1"], ["P60-1"], ev.DrawSecondChance()),  # behind: the catch-up cards are for it
    (["P20-1"], ["P20-2"], ev.DrawSecondChance()),  # level
    (["P60-1"], ["P20-1"], ev.EndTurn()),  # ahead: a Trade Places would give its lead away
])
def test_the_rule_of_thumb_draws_a_second_chance_exactly_when_not_ahead(table, mine, theirs, wanted):
    from service.bots.expert import RuleOfThumb

    t = table(2, phase="after_main", points={1: mine, 0: theirs})
    assert RuleOfThumb().choose(t.state, 1, t.legal(1), random.Random(0)) == wanted
