import sys; sys.path.insert(0, "/work/notes/probes3")
import numpy as np
from tree import SM, Tree, G, M64
from searchmodel import sample_visits
def az_choose(envs, out_fn, seed, plies=None, gamma=1.0, nsims=16, c=1.5, maxd=64, temp=1.0, tdrop=8, noise=(0.25, 0.3), rngf=None, calls=None):
    n = len(envs); A = envs[0].action_count()
    rngs = [SM(rngf(seed, k)) for k in range(n)]
    trees = [Tree(e, 'puct', c, gamma, maxd, noise=(noise[0], noise[1], rngs[k]) if noise else None) for k, e in enumerate(envs)]
    waiting = [None] * n
    done = [False] * n
    def adv(k):
        t = trees[k]
        while t.sims < nsims:
            t.sims += 1
            r = t.select_expand()
            if r == 'T': t.term += 1; t.backprop(0.0)
            elif r == 'D': t.cap += 1; t.backprop(t.arena[t.leaf].value)
            else: return t.arena[t.leaf].obs
        return None
    pend = {k: adv(k) for k in range(n)}
    while any(v is not None for v in pend.values()):
        uniq = []; idx = {}
        for k in range(n):
            o = pend[k]
            if o is None: continue
            key = o.tobytes()
            if key not in idx: idx[key] = len(uniq); uniq.append(o)
        obs = np.stack(uniq).astype(np.float32)
        if calls is not None: calls.append(obs)
        lg, v = out_fn(obs)
        for k in range(n):
            o = pend[k]
            if o is None: continue
            j = idx[o.tobytes()]
            trees[k].consume((lg[j, :A].astype(np.float64), float(v[j])), A)
            pend[k] = adv(k)
    acts = []
    for k in range(n):
        vals, vis, legal = trees[k].evaluation(A)
        ply = envs[k].ticks if plies is None else plies[k]
        if temp > 0 and ply < tdrop: a = sample_visits(vis, temp, rngs[k])
        else: a = int(np.argmax(vis))
        acts.append(a)
    return acts
