import sys; sys.path.insert(0, "/work/notes/probes3")
from v04 import *
c4 = rf.games.Connect4()
print(runm(c4, 1, 0, 0, policy='minimax', depth=2, gamma=0.9, floors=(3, 30)))
print(runm(c4, 2, 0, 0, policy='minimax', depth=2, gamma=0.9, floors=(3, 30)))
print(runm(c4, 4, 0, 0, policy='minimax', depth=2, gamma=0.9, floors=(3, 30)))
print(runm(c4, 4, 0, 0, policy='minimax', depth=2, gamma=0.9, floors=(3,), bs=3))
print(runm(c4, 4, 1, 0, policy='minimax', depth=3, gamma=0.9, floors=(3, 50), bs=5, bp=0.6, verbose=False))
print(runm(c4, 3, 1, 0, policy='minimax', depth=1, gamma=1.0, floors=(3, 50), ow=0.5, verbose=False))
