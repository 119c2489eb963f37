"""Pure games: ``initial``, ``decide``, ``evolve``, ``legal_commands``, ``view``, and the seeded RNG.

Nothing here does I/O, reads a clock or touches a global random source: time and identity come in
with the command, chance comes from the seed. That is what makes every game replay exactly.
"""
