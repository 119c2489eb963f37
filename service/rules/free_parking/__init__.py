"""The Free Parking card game (RULES.md §1) as a decider: parking meters, errands, specials, Second Chance."""

from service.events.codec import Codec
from service.events.free_parking import FreeParkingCommand, FreeParkingConfig, FreeParkingEvent

from .audit import Log, secret_note, secret_seen_by, summary
from .clock import turn_deadline
from .decide import decide, run
from .evolve import evolve
from .legal import legal_commands
from .state import RULES_VERSION, RULES_VERSIONS, State, initial
from .view import FreeParkingView, status_of, view

KIND = "free-parking"
CONFIG = FreeParkingConfig
CODEC = Codec(FreeParkingEvent, FreeParkingCommand)

__all__ = [
    "Log",
    "CODEC",
    "CONFIG",
    "KIND",
    "RULES_VERSION",
    "RULES_VERSIONS",
    "FreeParkingView",
    "State",
    "decide",
    "evolve",
    "initial",
    "legal_commands",
    "run",
    "secret_note",
    "secret_seen_by",
    "summary",
    "turn_deadline",
    "status_of",
    "view",
]
