import sys; sys.path.insert(0, "/work/notes/probes3")
from v04 import *
c4 = rf.games.Connect4()
def SX(**k):
    d = dict(expansion_budget=64, top_k=8, max_depth=12, beta=1.0, n_heads=1, epsilon=0.0, opponent='uniform', opp_t=1.0, opp_f=0.0); d.update(k)
    return d
def conv(d): return dict(budget=d['expansion_budget'], top_k=d['top_k'], max_depth=d['max_depth'], beta=d['beta'], n_heads=d['n_heads'], epsilon=d['epsilon'], opponent=d['opponent'], opp_t=d['opp_t'], opp_f=d['opp_f'])
import v04
orig = v04.SearchEngine
class SE(orig):
    def __init__(s, *a, sx=None, **k): super().__init__(*a, sx=conv(sx) if sx else None, **k)
v04.SearchEngine = SE
print(runm(c4, 1, 0, 0, policy='sex', gamma=0.9, floors=(1,), sx=SX(n_heads=2, expansion_budget=4, top_k=2, max_depth=3)))
print(runm(c4, 1, 0, 0, policy='sex', gamma=0.9, floors=(1,), sx=SX()))
print(runm(c4, 3, 4, 0, policy='sex', gamma=0.95, floors=(3, 40), bp=0.5, sx=SX(n_heads=3, epsilon=0.3, beta=0.6, max_depth=5, expansion_budget=20, top_k=4)))
print(runm(c4, 2, 4, 0, policy='sex', gamma=0.95, floors=(3, 40), bp=0.5, sx=SX(n_heads=2, opponent='distributional', opp_t=0.7, opp_f=0.1, expansion_budget=20, top_k=4)))
