"""Monopoly (RULES.md §3) as a decider: the classic US board, its cards, jail, building and shortages, auctions,
mortgages, trades and bankruptcy, with every wait on a player bounded by a deadline."""

from service.events.codec import Codec
from service.events.monopoly import MonopolyCommand, MonopolyConfig, MonopolyEvent

from .audit import Log, secret_note, secret_seen_by, summary
from .clock import turn_deadline
from .decide import KIND, decide, run
from .evolve import evolve
from .legal import legal_commands
from .state import RULES_VERSION, RULES_VERSIONS, State, initial
from .view import MonopolyView, status_of, view

CONFIG = MonopolyConfig
CODEC = Codec(MonopolyEvent, MonopolyCommand)

__all__ = [
    "Log",
    "CODEC",
    "CONFIG",
    "KIND",
    "RULES_VERSION",
    "RULES_VERSIONS",
    "MonopolyView",
    "State",
    "decide",
    "evolve",
    "initial",
    "legal_commands",
    "run",
    "secret_note",
    "secret_seen_by",
    "status_of",
    "summary",
    "turn_deadline",
    "view",
]
