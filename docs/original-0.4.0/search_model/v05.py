import sys; sys.path.insert(0, "/work/notes/probes3")
from v04 import *
gw = rf.games.GridWorld(size=4, max_ticks=5); R = rf.Reward(step=-0.1, goal=1.0)
print(runm(gw, 1, 0, 8, reward=R, gamma=0.9, floors=(1, 3, 7)))
print(runm(gw, 3, 2, 8, reward=R, gamma=0.9, floors=(1, 3, 7), ow=0.5, bp=0.7))
c4 = rf.games.Connect4()
print(runm(c4, 3, 2, 12, gamma=0.9, floors=(3, 7), ow=0.3, bp=0.7))
