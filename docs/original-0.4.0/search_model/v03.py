import sys; sys.path.insert(0, "/work/notes/probes3")
from v01 import *
c4 = rf.games.Connect4()
print(run(c4, 2, 0, 8, bs=4, temp=0.0, noise=None, gamma=0.9, maxn=True))
print(run(c4, 3, 5, 12, maxn=True, gamma=0.95, floors=(5, 30)))
print(run(c4, 3, 5, 12, maxn=True, gamma=0.95, maxd=2, c=3.0, floors=(5, 30)))
gw = rf.games.GridWorld(size=4, max_ticks=5)
print(run(gw, 3, 5, 8, reward=rf.Reward(step=-0.1, goal=1.0), gamma=0.9, floors=(1, 3, 7), maxn=True))
