"""The bot league: seeded games between bots in every seating, their win rates and an Elo-style rating each.

``tables`` says who sits where, ``games`` plays one game of a table, ``ratings`` turns results into win rates
with 95% intervals and ratings, ``report`` prints them (``python -m service bot-league``).
"""
