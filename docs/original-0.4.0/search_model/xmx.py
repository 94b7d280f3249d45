"""SelectiveExpectimax model (best-first, rounds), reinfors 0.4.0 — deterministic games only (no chance)."""
import math
def pstd(v):
    n = len(v); m = 0.0
    for x in v: m += x
    m /= n; s = 0.0
    for x in v: s += (x - m) * (x - m)
    return math.sqrt(s / n)
def softmax_floor(q, temp, floor):
    qm = max(q); z = [math.exp((v - qm) / temp) for v in q]; zs = 0.0
    for x in z: zs += x
    n = len(q)
    return [(1.0 - floor) * zi / zs + floor / n for zi in z]
class XNode:
    __slots__ = ('env', 'obs', 'depth', 'terminal', 'edges', 'boot', 'value', 'sigma', 'pw', 'max_node')
class SelExp:
    def __init__(s, env, budget, top_k, max_depth, beta, gamma, opponent='uniform', opp_t=1.0, opp_f=0.0):
        s.budget, s.top_k, s.maxd, s.beta, s.gamma = budget, top_k, max_depth, beta, gamma
        s.opp, s.opp_t, s.opp_f = opponent, opp_t, opp_f
        r = XNode(); r.env = env.fork(); r.obs = None; r.depth = 0; r.terminal = False; r.edges = None
        r.boot = None; r.value = None; r.sigma = 0.0; r.pw = 1.0; r.max_node = False
        s.agent = env.active_agents()[0]
        s.arena = [r]; s.frontier = [0]; s.first = True; s.K = 1
        s.expansions = 0; s.leaves = 0; s.rounds = 0; s.maxdepth = 0; s.sigma_sum = 0.0
    def active(s): return bool(s.frontier) and s.expansions < s.budget
    def sort_frontier(s):
        A = s.arena
        mv = 0.0
        for i in s.frontier: mv = max(mv, A[i].pw * A[i].sigma)
        if not mv > 0.0: mv = 1.0
        def key(i):
            n = A[i]
            voi = s.beta * (n.pw * n.sigma) / mv
            dt = (1.0 - s.beta) * n.depth / s.maxd
            return (-(voi + dt), -float(n.depth), -n.pw)
        s.frontier.sort(key=key)
    def new_node(s, e, depth, terminal):
        c = XNode(); c.env = e; c.depth = depth; c.terminal = terminal; c.edges = None; c.boot = None; c.value = None
        c.sigma = 0.0; c.pw = 1.0; c.max_node = False
        c.obs = None if terminal else e.observe(s.agent).reshape(-1)
        s.arena.append(c); return len(s.arena) - 1
    def round(s):
        if not s.first: s.sort_frontier()
        s.first = False
        take = min(s.top_k, s.budget - s.expansions, len(s.frontier))
        s.batch = s.frontier[:take]; s.frontier = s.frontier[take:]
        s.opp_obs = []; s.opp_legal = []; s.new = []
        for ni in s.batch:
            nd = s.arena[ni]; mover = nd.env.active_agents()[0]
            if mover == s.agent:
                edges = []
                for a in nd.env.legal_actions(mover):
                    e = nd.env.fork(); e.step({mover: a})
                    ci = s.new_node(e, nd.depth + 1, e.done())
                    if not e.done(): s.new.append(ci)
                    edges.append([[1.0, None, e.rewards[s.agent], ci]])
                nd.edges = edges; nd.max_node = True
            else:
                legal = nd.env.legal_actions(mover)
                if s.opp == 'uniform': ws = [(1.0 / len(legal), None)] * len(legal)
                else:
                    oi = len(s.opp_obs); s.opp_obs.append(nd.env.observe(mover).reshape(-1)); s.opp_legal.append((mover, legal))
                    ws = [(0.0, (oi, a)) for a in legal]
                br = []
                for a, (w, d) in zip(legal, ws):
                    e = nd.env.fork(); e.step({mover: a})
                    ci = s.new_node(e, nd.depth + 1, e.done())
                    if not e.done(): s.new.append(ci)
                    br.append([w, d, e.rewards[s.agent], ci])
                nd.edges = [br]; nd.max_node = False
            s.expansions += 1; s.maxdepth = max(s.maxdepth, nd.depth + 1)
        s.rounds += 1
        for ci in s.new:
            if s.arena[ci].depth < s.maxd: s.frontier.append(ci)
        return list(s.opp_obs) + [s.arena[ci].obs for ci in s.new]
    def absorb(s, outs):
        K = len(outs[0]) if outs else s.K; s.K = K; A = len(outs[0][0]) if outs else 0
        n_opp = len(s.opp_obs)
        probs = []
        for i in range(n_opp):
            q = outs[i]; mover, legal = s.opp_legal[i]
            mean = [sum(q[h][a] for h in range(K)) / K for a in range(A)]
            p = softmax_floor([mean[a] for a in legal], s.opp_t, s.opp_f)
            full = [0.0] * A
            for a, x in zip(legal, p): full[a] = x
            probs.append(full)
        for j, ci in enumerate(s.new):
            q = outs[n_opp + j]; nd = s.arena[ci]
            legal = nd.env.legal_actions(nd.env.active_agents()[0])
            nd.boot = [max(q[h][a] for a in legal) for h in range(K)]
            nd.sigma = pstd(nd.boot); s.leaves += 1; s.sigma_sum += nd.sigma
        for ni in s.batch:
            nd = s.arena[ni]
            for edge in nd.edges:
                for b in edge:
                    if b[1] is not None: b[0] = 1.0 * probs[b[1][0]][b[1][1]]
                    s.arena[b[3]].pw = nd.pw * b[0] * s.gamma
    def resolve(s, ni):
        nd = s.arena[ni]
        if nd.terminal: return
        if nd.edges is None: nd.value = list(nd.boot); return
        for edge in nd.edges:
            for b in edge: s.resolve(b[3])
        v = [-math.inf] * s.K
        for edge in nd.edges:
            ev = s.edge_value(edge)
            v = [max(x, y) for x, y in zip(v, ev)]
        nd.value = v
    def edge_value(s, edge):
        acc = [0.0] * s.K
        for (w, d, r, ci) in edge:
            c = s.arena[ci]
            for h in range(s.K):
                acc[h] += w * r if c.terminal else w * (r + s.gamma * c.value[h])
        return acc
    def evaluation(s, A, n_heads):
        s.resolve(0)
        root = s.arena[0]
        if root.edges is None: vals = [[0.0] * A for _ in range(s.K)]
        else:
            legal = root.env.legal_actions(s.agent)
            vals = [[0.0] * A for _ in range(s.K)]
            for a, e in zip(legal, root.edges):
                ev = s.edge_value(e)
                for h in range(s.K): vals[h][a] = ev[h]
        if len(vals) < n_heads: vals = [list(vals[0]) for _ in range(n_heads)]
        return vals
    def node_values(s, ni, A):
        nd = s.arena[ni]; legal = nd.env.legal_actions(s.agent)
        vals = [[0.0] * A for _ in range(s.K)]
        for a, e in zip(legal, nd.edges):
            ev = s.edge_value(e)
            for h in range(s.K): vals[h][a] = ev[h]
        return vals
    def interior(s, A):
        out = []
        def rec(ni):
            nd = s.arena[ni]
            if nd.terminal or nd.edges is None: return
            if nd.max_node and len(nd.edges) == len(nd.env.legal_actions(s.agent)):
                out.append((nd.obs, s.node_values(ni, A)))
            for e in nd.edges:
                for b in e: rec(b[3])
        if s.arena[0].edges is not None:
            for e in s.arena[0].edges:
                for b in e: rec(b[3])
        return out
