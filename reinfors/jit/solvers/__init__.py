"""Solver kernels (tabular CFR family) over flat game-tree arrays.

* :mod:`.gametree`      — the game tree enumerated once into flat NumPy arrays (a kernel
  *template*: its enumeration kernel calls the game's rules through ``G_*`` names that the
  Python side binds per game, like ``reinfors/jit/kernels/game_kernels.py``); also the array-backed
  info-state key table.
* :mod:`.cfr`           — one vanilla-CFR / CFR+ iteration with alternating updates.
* :mod:`.best_response` — on-policy values, best-response values and NashConv of a strategy
  table over the flat tree.
* :mod:`.mccfr`         — external-sampling Monte-Carlo CFR over the flat tree (SplitMix64).
"""
