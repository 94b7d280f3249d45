import sys; sys.path.insert(0, "/work/notes/probes3")
from v04 import *
c4 = rf.games.Connect4()
print(runm(c4, 1, 0, 0, policy='minimax', depth=3, gamma=0.9, floors=(1, 30, 200), interior=True, bp=0.5))
print(runm(c4, 3, 0, 0, policy='minimax', depth=2, gamma=0.9, floors=(5, 300), interior=True, bp=0.5, verbose=False))
print(runm(c4, 3, 0, 8, policy='mcts', gamma=0.9, floors=(5, 30), interior=True, bp=0.5, verbose=False))
