"""Free Parking solitaire (RULES.md §2) as a decider: Montana filled from either side, two redeals, unlimited undo."""

from service.events.codec import Codec
from service.events.solitaire import SolitaireCommand, SolitaireConfig, SolitaireEvent

from .audit import Log, secret_note, secret_seen_by, summary
from .decide import KIND, decide, run
from .evolve import evolve
from .hint import hint
from .legal import legal_commands, move_command
from .state import RULES_VERSION, RULES_VERSIONS, State, initial
from .view import SolitaireView, status_of, view

CONFIG = SolitaireConfig
CODEC = Codec(SolitaireEvent, SolitaireCommand)

__all__ = [
    "CODEC",
    "CONFIG",
    "KIND",
    "Log",
    "RULES_VERSION",
    "RULES_VERSIONS",
    "SolitaireView",
    "State",
    "decide",
    "evolve",
    "hint",
    "initial",
    "legal_commands",
    "move_command",
    "run",
    "secret_note",
    "secret_seen_by",
    "status_of",
    "summary",
    "view",
]
