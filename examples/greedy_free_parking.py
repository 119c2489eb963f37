"""The card game's greedy bot, written against the view: it scores as fast as it can, protects its points and
strikes at the leader.

It is the server's own ``greedy`` (service/bots/free_parking.py) rewritten for the bot kit: on every view it
chooses exactly what the server's greedy chooses at that moment (tests/client/test_examples.py checks it on seeded
games). Run it against a local service:

    python -m free_parking_client play examples/greedy_free_parking.py:GreedyFreeParking \\
        --url http://127.0.0.1:8000 --kind free-parking --games 20

The view is the JSON of ``GET /games/{id}`` (docs/api.md, "The view"): ``players`` (each seat's ``meter``,
``points``, ``forfeited``), ``you.hand`` (your cards, each ``{"id", "kind", "value"}``), ``turn`` (whose turn),
``phase``, ``pending`` (an answer awaited, with the ``action`` it answers) and ``legal``: every command you may send
now, exactly as to send it. A bot only ever picks one of ``legal``.
"""

from __future__ import annotations

from free_parking_client import Bot

METER_MAX = 60
"""A meter holds at most 60 minutes (docs/rules-free-parking.md)."""
KEEP = ("point", "officer_jones", "talk_your_way_out", "free_parking")
"""Cards too good to throw away while anything else can go."""


def by_type(legal: list[dict]) -> dict[str, list[dict]]:
    """The commands grouped by their ``type``, each group in ``legal``'s order."""
    out: dict[str, list[dict]] = {}
    for command in legal:
        out.setdefault(command["type"], []).append(command)
    return out


class GreedyFreeParking(Bot):
    def act(self, view):
        legal = view.playable  # ``legal`` less resign: this bot never resigns
        if not legal:
            return None
        v = view.raw
        self.seat, self.players = v["seat"], v["players"]
        self.hand = {card["id"]: card for card in v["you"]["hand"]}
        options = by_type(legal)
        leader = self.leader()
        if v["pending"] is not None:  # an answer is awaited
            return self.answer(v["pending"], options, leader)
        jones = [c for c in options.get("officer_jones", []) if c["target"] == leader]
        if jones:  # Officer Jones is played on the leader whenever it can be
            return jones[0]
        if v["turn"] != self.seat:  # nothing else is worth doing out of turn
            return None
        if v["phase"] == "main" and self.hand:
            return self.main_play(options)
        if "draw_second_chance" in options and self.me["points"] < 100:
            return options["draw_second_chance"][0]
        return options["end_turn"][0]

    @property
    def me(self) -> dict:
        return self.players[self.seat]

    def leader(self) -> int:
        """The opponent still in with the most points (the first clockwise from this seat's left on a tie)."""
        n = len(self.players)
        opponents = [(self.seat + k) % n for k in range(1, n)]
        still_in = [o for o in opponents if not self.players[o]["forfeited"]]
        return max(still_in, key=lambda o: self.players[o]["points"])

    def value(self, card_id: str) -> int:
        return self.hand[card_id]["value"] or 0

    def kind(self, card_id: str) -> str:
        return self.hand[card_id]["kind"]

    def answer(self, pending: dict, options: dict, leader: int) -> dict:
        """Talk out of an action when it is worth a Talk card; name the leader when a target is asked; else the
        first choice (the lowest card, or the first position)."""
        if "accept" in options:
            talk = options.get("talk_out")
            return talk[0] if talk and self.worth_talking_out(pending["action"]) else options["accept"][0]
        choices = options["choose"]
        targets = [c for c in choices if c.get("target") is not None]
        if targets:
            return next((c for c in targets if c["target"] == leader), targets[0])
        return choices[0]

    def worth_talking_out(self, action: dict | None) -> bool:
        """Any action against it, but a trade of places only when it would give away the better seat."""
        if action is None or action["kind"] != "trade_places" or action["target"] is None:
            return True
        other = action["target"] if self.seat == action["by"] else action["by"]
        return self.me["points"] > self.players[other]["points"]

    def main_play(self, options: dict) -> dict:
        """Score first (Free Parking, then errands, the biggest), then Time Expires on the fullest meter, then feed
        the meter, and last discard what is least use."""
        if "free_parking" in options:
            return max(options["free_parking"], key=lambda c: self.value(c["errand"]))
        if "run_errand" in options:
            return max(options["run_errand"], key=lambda c: self.value(c["card"]))
        expires = [c for c in options.get("time_expires", []) if self.players[c["target"]]["meter"] >= 30]
        if expires:
            return max(expires, key=lambda c: self.players[c["target"]]["meter"])
        feeds = options.get("feed_meter", [])
        wanted = max((self.value(c) for c in self.hand if self.kind(c) == "point"), default=0)
        if feeds and self.me["meter"] < max(wanted, 20):  # not enough minutes for the best errand in hand
            return max(feeds, key=lambda c: self.value(c["card"]))
        if feeds and self.me["meter"] < METER_MAX:
            return min(feeds, key=lambda c: self.value(c["card"]))
        discards = [c for c in options.get("discard", []) if self.kind(c["card"]) not in KEEP]
        if discards:
            return discards[0]
        return min(options["discard"], key=lambda c: (self.kind(c["card"]) == "point", self.value(c["card"])))
