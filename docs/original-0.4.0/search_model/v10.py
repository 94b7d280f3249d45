import sys; sys.path.insert(0, "/work/notes/probes3")
from v09 import *
print(runm(c4, 2, 4, 0, policy='sex', gamma=0.95, floors=(3, 40), bp=0.5, interior=True, sx=SX(n_heads=2, expansion_budget=12, top_k=3, max_depth=4)))
print(runm(c4, 2, 4, 0, policy='sex', gamma=0.95, floors=(3, 40), bp=0.5, ow=0.4, interior=True, sx=SX(n_heads=2, epsilon=0.2, expansion_budget=12, top_k=3, max_depth=4)))
gw = rf.games.GridWorld(size=4, max_ticks=6); R = rf.Reward(step=-0.1, goal=1.0)
print(runm(gw, 2, 4, 0, policy='sex', reward=R, gamma=0.95, floors=(3, 40), bp=0.5, ow=0.4, interior=True, sx=SX(n_heads=2, epsilon=0.2, expansion_budget=12, top_k=3, max_depth=4)))
