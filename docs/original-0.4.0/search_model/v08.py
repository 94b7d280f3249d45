import sys; sys.path.insert(0, "/work/notes/probes3")
from v04 import *
c4 = rf.games.Connect4()
print(runm(c4, 1, 0, 0, policy='minimax', depth=3, gamma=0.9, floors=(3,), top_k=2))
print(runm(c4, 2, 0, 0, policy='minimax', depth=4, gamma=0.95, floors=(3,), top_k=3, interior=True, verbose=False))
print(runm(c4, 1, 0, 0, policy='minimax', depth=2, gamma=0.95, floors=(3,), top_k=1, interior=True, verbose=False))
