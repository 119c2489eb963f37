"""The bot league: seeded games between bots in every seating, their win rates and a rating each (the service's
model: OpenSkill Plackett–Luce, RULES.md §4).

``tables`` says who sits where, ``games`` plays one game of a table, ``ratings`` turns results into win rates
with 95% intervals and ratings, ``report`` prints them (``python -m service bot-league``).
"""
