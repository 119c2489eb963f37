"""Ratings across games (RULES.md §4), pure: which games are rated, each one's order of finish, and the fold.

One module for the service's ratings projection (``service/projections/ratings.py``) and the offline
``python -m replays ratings``: both hand it the same logs, so both publish the same numbers to the last digit.
"""

from .finish import RATED_KINDS, RATED_SEEDING, Place, RatedGame, rated_game, rated_id
from .fold import MODEL, RatingChange, RatingRow, Rating, Ratings, fold, ordered, shown

__all__ = ["MODEL", "RATED_KINDS", "RATED_SEEDING", "Place", "RatedGame", "Rating", "RatingChange", "RatingRow",
           "Ratings", "fold", "ordered", "rated_game", "rated_id", "shown"]
