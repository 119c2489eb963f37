"""How sure a rate measured over bot games is: the solitaire odds (``service/cli/solitaire_rates.py``) and the
league's win shares (``service/league/ratings.py``) both report one."""

from __future__ import annotations

import math

Z95 = 1.959964


def wilson(won: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion: unlike share ± z·se it stays inside [0, 1] and is sound near
    0% and 100%, where these rates live."""
    p = won / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)
