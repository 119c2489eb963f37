"""Bot games played in memory, with no store and no HTTP: ``games`` for any kind (``python -m service simulate``,
``play``, the league, ``make run``'s demo), ``monopoly`` for where Monopoly turns end."""
