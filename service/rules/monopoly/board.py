"""The classic US board (pre-2008 values, ``data/monopoly/board.json`` of the shared spec) as immutable facts.

Squares are numbered 0..39 from GO. ``rent`` of a street is by buildings: bare, 1–4 houses, hotel; a bare site of
a complete group pays double the bare rent. A hotel costs what a house costs on its group.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

SquareType = Literal[
    "go", "street", "railroad", "utility", "chance", "community_chest", "income_tax", "luxury_tax", "jail",
    "free_parking", "go_to_jail",
]  # fmt: skip


class Square(NamedTuple):
    index: int
    name: str
    type: SquareType
    group: str | None = None
    price: int = 0
    house_cost: int = 0
    rent: tuple[int, ...] = ()
    tax: int = 0

    @property
    def mortgage_value(self) -> int:
        return self.price // 2

    @property
    def is_property(self) -> bool:
        return self.price > 0


SQUARES: tuple[Square, ...] = (
    Square(0, "GO", "go"),
    Square(
        1,
        "Mediterranean Avenue",
        "street",
        group="brown",
        price=60,
        house_cost=50,
        rent=(2, 10, 30, 90, 160, 250),
    ),
    Square(2, "Community Chest", "community_chest"),
    Square(
        3,
        "Baltic Avenue",
        "street",
        group="brown",
        price=60,
        house_cost=50,
        rent=(4, 20, 60, 180, 320, 450),
    ),
    Square(4, "Income Tax", "income_tax", tax=200),
    Square(5, "Reading Railroad", "railroad", group="railroad", price=200),
    Square(
        6,
        "Oriental Avenue",
        "street",
        group="light_blue",
        price=100,
        house_cost=50,
        rent=(6, 30, 90, 270, 400, 550),
    ),
    Square(7, "Chance", "chance"),
    Square(
        8,
        "Vermont Avenue",
        "street",
        group="light_blue",
        price=100,
        house_cost=50,
        rent=(6, 30, 90, 270, 400, 550),
    ),
    Square(
        9,
        "Connecticut Avenue",
        "street",
        group="light_blue",
        price=120,
        house_cost=50,
        rent=(8, 40, 100, 300, 450, 600),
    ),
    Square(10, "Jail / Just Visiting", "jail"),
    Square(
        11,
        "St. Charles Place",
        "street",
        group="pink",
        price=140,
        house_cost=100,
        rent=(10, 50, 150, 450, 625, 750),
    ),
    Square(12, "Electric Company", "utility", group="utility", price=150),
    Square(
        13,
        "States Avenue",
        "street",
        group="pink",
        price=140,
        house_cost=100,
        rent=(10, 50, 150, 450, 625, 750),
    ),
    Square(
        14,
        "Virginia Avenue",
        "street",
        group="pink",
        price=160,
        house_cost=100,
        rent=(12, 60, 180, 500, 700, 900),
    ),
    Square(15, "Pennsylvania Railroad", "railroad", group="railroad", price=200),
    Square(
        16,
        "St. James Place",
        "street",
        group="orange",
        price=180,
        house_cost=100,
        rent=(14, 70, 200, 550, 750, 950),
    ),
    Square(17, "Community Chest", "community_chest"),
    Square(
        18,
        "Tennessee Avenue",
        "street",
        group="orange",
        price=180,
        house_cost=100,
        rent=(14, 70, 200, 550, 750, 950),
    ),
    Square(
        19,
        "New York Avenue",
        "street",
        group="orange",
        price=200,
        house_cost=100,
        rent=(16, 80, 220, 600, 800, 1000),
    ),
    Square(20, "Free Parking", "free_parking"),
    Square(
        21,
        "Kentucky Avenue",
        "street",
        group="red",
        price=220,
        house_cost=150,
        rent=(18, 90, 250, 700, 875, 1050),
    ),
    Square(22, "Chance", "chance"),
    Square(
        23,
        "Indiana Avenue",
        "street",
        group="red",
        price=220,
        house_cost=150,
        rent=(18, 90, 250, 700, 875, 1050),
    ),
    Square(
        24,
        "Illinois Avenue",
        "street",
        group="red",
        price=240,
        house_cost=150,
        rent=(20, 100, 300, 750, 925, 1100),
    ),
    Square(25, "B. & O. Railroad", "railroad", group="railroad", price=200),
    Square(
        26,
        "Atlantic Avenue",
        "street",
        group="yellow",
        price=260,
        house_cost=150,
        rent=(22, 110, 330, 800, 975, 1150),
    ),
    Square(
        27,
        "Ventnor Avenue",
        "street",
        group="yellow",
        price=260,
        house_cost=150,
        rent=(22, 110, 330, 800, 975, 1150),
    ),
    Square(28, "Water Works", "utility", group="utility", price=150),
    Square(
        29,
        "Marvin Gardens",
        "street",
        group="yellow",
        price=280,
        house_cost=150,
        rent=(24, 120, 360, 850, 1025, 1200),
    ),
    Square(30, "Go To Jail", "go_to_jail"),
    Square(
        31,
        "Pacific Avenue",
        "street",
        group="green",
        price=300,
        house_cost=200,
        rent=(26, 130, 390, 900, 1100, 1275),
    ),
    Square(
        32,
        "North Carolina Avenue",
        "street",
        group="green",
        price=300,
        house_cost=200,
        rent=(26, 130, 390, 900, 1100, 1275),
    ),
    Square(33, "Community Chest", "community_chest"),
    Square(
        34,
        "Pennsylvania Avenue",
        "street",
        group="green",
        price=320,
        house_cost=200,
        rent=(28, 150, 450, 1000, 1200, 1400),
    ),
    Square(35, "Short Line", "railroad", group="railroad", price=200),
    Square(36, "Chance", "chance"),
    Square(
        37,
        "Park Place",
        "street",
        group="dark_blue",
        price=350,
        house_cost=200,
        rent=(35, 175, 500, 1100, 1300, 1500),
    ),
    Square(38, "Luxury Tax", "luxury_tax", tax=75),
    Square(
        39,
        "Boardwalk",
        "street",
        group="dark_blue",
        price=400,
        house_cost=200,
        rent=(50, 200, 600, 1400, 1700, 2000),
    ),
)

STARTING_CASH = 1500
GO_SALARY = 200
JAIL = 10
GO_TO_JAIL = 30
JAIL_FINE = 50
JAIL_TRIES = 3
HOUSES = 32
HOTELS = 12
HOTEL = 5
"""The level of a site with a hotel: one past four houses."""
INCOME_TAX_PERCENT = 10
RAILROAD_RENT = (0, 25, 50, 100, 200)
UTILITY_TIMES = (0, 4, 10)

PROPERTIES: tuple[int, ...] = tuple(s.index for s in SQUARES if s.is_property)
GROUPS: dict[str, tuple[int, ...]] = {}
for _s in SQUARES:
    if _s.group is not None:
        GROUPS.setdefault(_s.group, ())
        GROUPS[_s.group] += (_s.index,)
STREET_GROUPS = tuple(g for g in GROUPS if g not in ("railroad", "utility"))
RAILROADS = GROUPS["railroad"]
UTILITIES = GROUPS["utility"]


def group_of(square: int) -> tuple[int, ...]:
    """Every square of ``square``'s group (itself included)."""
    return GROUPS[SQUARES[square].group]  # type: ignore[index]


def nearest(square: int, kind: Literal["railroad", "utility"]) -> int:
    """The first ``kind`` square ahead of ``square``, going round the board."""
    targets = RAILROADS if kind == "railroad" else UTILITIES
    return min(targets, key=lambda t: (t - square) % 40 or 40)


def name(square: int) -> str:
    return SQUARES[square].name
