"""MCTS/PUCT tree (hypothesis from the repo source), game dynamics via rf.Env forks."""
import math, numpy as np
M64 = (1 << 64) - 1
G = 0x9E3779B97F4A7C15
class SM:
    def __init__(s, x): s.s = x & M64
    def next(s):
        s.s = (s.s + G) & M64; z = s.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)
    def unit(s): return (s.next() >> 11) / float(1 << 53)

def normal(r):
    u1 = max(r.unit(), 2.2250738585072014e-308); u2 = r.unit()
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2 * math.pi * u2)
def gamma_sample(r, a):
    if a < 1.0:
        u = max(r.unit(), 2.2250738585072014e-308)
        return gamma_sample(r, a + 1.0) * u ** (1.0 / a)
    d = a - 1.0 / 3.0; c = 1.0 / math.sqrt(9.0 * d)
    while True:
        x = normal(r); v = (1.0 + c * x) ** 3
        if v <= 0.0: continue
        u = max(r.unit(), 2.2250738585072014e-308)
        if u < 1.0 - 0.0331 * x ** 4 or math.log(u) < 0.5 * x * x + d * (1.0 - v + math.log(v)):
            return d * v
def dirichlet(r, a, k):
    d = [gamma_sample(r, a) for _ in range(k)]
    t = 0.0
    for x in d: t += x
    if t <= 0: return [1.0 / k] * k
    return [x / t for x in d]
def softmax(l):
    m = max(l); e = [math.exp(x - m) for x in l]; t = 0.0
    for x in e: t += x
    return [x / t for x in e]

class Node:
    __slots__ = ('env', 'actor', 'depth', 'terminal', 'actions', 'child', 'reward', 'visits', 'vsum', 'tv', 'value', 'prior', 'obs',
                 'obs_all', 'values_all', 'rewards_all')
    def __init__(s, env, depth, terminal, maxn=False):
        s.env, s.depth, s.terminal = env, depth, terminal
        if terminal:
            s.actor = None; s.actions = []
        else:
            s.actor = env.active_agents()[0]; s.actions = env.legal_actions(s.actor)
        L = len(s.actions)
        s.child = [-1] * L; s.reward = [0.0] * L; s.visits = [0] * L; s.vsum = [0.0] * L
        s.tv = 0; s.value = 0.0; s.prior = None
        s.obs = None if terminal else env.observe(s.actor).reshape(-1)
        if maxn and not terminal:
            N = env.num_agents()
            s.obs_all = [env.observe(q).reshape(-1) for q in range(N)]
            s.values_all = [0.0] * N; s.rewards_all = [[0.0] * N for _ in range(L)]

class Tree:
    def __init__(s, env, kind, c, gamma, max_depth, noise=None, maxn=False):
        s.kind, s.c, s.gamma, s.maxd, s.noise = kind, c, gamma, max_depth, noise  # noise: (eps, alpha, rng)
        s.maxn = maxn; s.N = env.num_agents()
        s.arena = [Node(env.fork(), 0, False, maxn)]
        s.sims = 0; s.maxseen = 0; s.term = 0; s.cap = 0
    def select(s, nd):
        best, bs = 0, -math.inf
        for a in range(len(nd.actions)):
            n = nd.visits[a]
            if s.kind == 'uct':
                if n == 0: sc = math.inf
                else: sc = nd.vsum[a] / n + s.c * math.sqrt(math.log(max(nd.tv, 1)) / n)
            else:
                q = nd.vsum[a] / n if n > 0 else 0.0
                sc = q + s.c * nd.prior[a] * math.sqrt(max(nd.tv, 1)) / (1.0 + n)
            if sc > bs: bs, best = sc, a
        return best
    def select_expand(s):
        s.path = []; ni = 0
        while True:
            nd = s.arena[ni]
            s.maxseen = max(s.maxseen, nd.depth)
            if nd.terminal: s.leaf = ni; return 'T'
            if s.kind == 'puct' and nd.prior is None: s.leaf = ni; return 'E'
            if nd.depth >= s.maxd: s.leaf = ni; return 'D'
            a = s.select(nd); s.path.append((ni, a))
            if nd.child[a] < 0:
                e = nd.env.fork(); e.step({nd.actor: nd.actions[a]})
                nd.reward[a] = e.rewards[nd.actor]
                if s.maxn: nd.rewards_all[a] = list(e.rewards)
                ch = Node(e, nd.depth + 1, e.done(), s.maxn); ch.actor = nd.actor if ch.terminal else ch.actor
                s.arena.append(ch); nd.child[a] = len(s.arena) - 1
                s.leaf = len(s.arena) - 1
                return 'T' if ch.terminal else 'E'
            ni = nd.child[a]
    def backprop_maxn(s, vals):
        g = list(vals)
        for ni, a in reversed(s.path):
            nd = s.arena[ni]
            g = [nd.rewards_all[a][i] + s.gamma * g[i] for i in range(s.N)]
            nd.vsum[a] += g[nd.actor]; nd.visits[a] += 1; nd.tv += 1
    def backprop(s, v):
        if s.maxn:
            if isinstance(v, list): return s.backprop_maxn(v)
            return s.backprop_maxn([0.0] * s.N if s.arena[s.leaf].terminal else s.arena[s.leaf].values_all)
        lf = s.arena[s.leaf]; lf.value = v
        g, ga = v, lf.actor
        for ni, a in reversed(s.path):
            nd = s.arena[ni]
            cv = g if ga == nd.actor else -g
            q = nd.reward[a] + s.gamma * cv
            nd.vsum[a] += q; nd.visits[a] += 1; nd.tv += 1
            g, ga = q, nd.actor
    def consume_maxn(s, outs):
        nd = s.arena[s.leaf]
        for q, (lg, v) in enumerate(outs):
            if q == nd.actor:
                pr = softmax([lg[x] for x in nd.actions])
                if s.leaf == 0 and s.noise is not None and s.noise[0] > 0:
                    eps, al, r = s.noise
                    d = dirichlet(r, al, len(pr))
                    pr = [(1 - eps) * p + eps * x for p, x in zip(pr, d)]
                nd.prior = pr
            nd.values_all[q] = v
        s.backprop_maxn(nd.values_all)
    def consume(s, out, A):
        nd = s.arena[s.leaf]
        if s.kind == 'uct':
            q = out  # (K, A)
            v = max(sum(q[h][x] for h in range(len(q))) / len(q) for x in nd.actions)
        else:
            lg, v = out
            pr = softmax([lg[x] for x in nd.actions])
            if s.leaf == 0 and s.noise is not None and s.noise[0] > 0:
                eps, al, r = s.noise
                d = dirichlet(r, al, len(pr))
                pr = [(1 - eps) * p + eps * x for p, x in zip(pr, d)]
            nd.prior = pr
        s.backprop(v)
    def run(s, nsims, infer_one):
        """advance until all sims done; infer_one(obs)->out"""
        while s.sims < nsims:
            s.sims += 1
            r = s.select_expand()
            if r == 'T': s.term += 1; s.backprop(0.0)
            elif r == 'D': s.cap += 1; s.backprop(s.arena[s.leaf].value)
            else: s.consume(infer_one(s.arena[s.leaf].obs), None)
    def evaluation(s, A):
        root = s.arena[0]; vals = [0.0] * A; vis = [0.0] * A
        for i, a in enumerate(root.actions):
            if root.visits[i] > 0: vals[a] = root.vsum[i] / root.visits[i]
            vis[a] = float(root.visits[i])
        return vals, vis, list(root.actions)
