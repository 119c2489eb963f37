"""A client of the Free Parking game service, for bot authors and front ends (client/README.md).

It does what a careful client must: waits out 429 and 503 by ``Retry-After`` and resends a command with the same
``command_id``; resumes streams after a drop with ``Last-Event-ID``; keeps every receipt and writes the file
``python -m replays verify --receipts`` reads; makes and keeps the player's own key and signs every command of a
keyed seat; refuses to send a command the view does not admit, unless told to. The bot kit (``kit.py``, and
``python -m free_parking_client play``) plays a ``Bot`` of your own through all of it.
"""

from .client import AsyncClient, Client
from .commands import body as command_body
from .errors import ApiError, NotLegal
from .kit import Bot, BotFailed, Kit, Plan, Played
from .models import (
    Card,
    CommandAnswer,
    FreeParkingView,
    GameCreated,
    GameEvent,
    GameOver,
    GameRatings,
    MonopolyView,
    PlayerCreated,
    PlayerEvent,
    Queued,
    QueueEvent,
    QueueStatus,
    Ratings,
    Receipt,
    Seated,
    SeatTaken,
    SolitaireView,
    Turn,
    View,
)
from .receipts import Evidence, Receipts
from .retry import RetryPolicy
from .signing import PlayerKey, signed_command

__all__ = [
    "ApiError", "AsyncClient", "Bot", "BotFailed", "Card", "Client", "CommandAnswer", "Evidence", "FreeParkingView",
    "GameCreated", "GameEvent", "GameOver", "GameRatings", "Kit", "MonopolyView", "NotLegal", "Plan", "Played",
    "PlayerCreated", "PlayerEvent", "PlayerKey", "QueueEvent", "QueueStatus", "Queued", "Ratings", "Receipt",
    "Receipts", "RetryPolicy", "SeatTaken", "Seated", "SolitaireView", "Turn", "View", "command_body",
    "signed_command",
]
