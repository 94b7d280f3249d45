"""Minimax (negamax, level-by-level rounds) model for reinfors 0.4.0."""
import math
class MNode:
    __slots__ = ('env', 'depth', 'terminal', 'mover', 'obs', 'edges', 'boot', 'value', 'qrow')
class Minimax:
    def __init__(s, env, depth, gamma, top_k=None, heads=1):
        s.D, s.gamma, s.top_k, s.K = depth, gamma, top_k, heads
        r = MNode(); r.env = env.fork(); r.depth = 0; r.terminal = False; r.mover = env.active_agents()[0]
        r.obs = None; r.edges = None; r.boot = None; r.qrow = None
        s.arena = [r]; s.frontier = [0]
        s.expansions = 0; s.rounds = 0; s.leaves = 0; s.maxd = 0
    def active(s): return bool(s.frontier)
    def round(s):
        batch = s.frontier; s.frontier = []; s.new = []
        for ni in batch:
            nd = s.arena[ni]
            legal = nd.env.legal_actions(nd.mover)
            if s.top_k is not None and nd.depth > 0 and s.top_k < len(legal) and nd.qrow is not None:
                legal = sorted(sorted(legal, key=lambda a: -nd.qrow[a])[:s.top_k])
            edges = []
            for a in legal:
                e = nd.env.fork(); e.step({nd.mover: a})
                c = MNode(); c.env = e; c.depth = nd.depth + 1; c.terminal = e.done(); c.edges = None; c.boot = None; c.qrow = None
                c.mover = None if c.terminal else e.active_agents()[0]
                c.obs = None if c.terminal else e.observe(c.mover).reshape(-1)
                s.arena.append(c); ci = len(s.arena) - 1
                edges.append((a, e.rewards[nd.mover], ci))
                if not c.terminal:
                    s.new.append(ci)
                    if c.depth < s.D: s.frontier.append(ci)
            nd.edges = edges
            s.expansions += 1; s.maxd = max(s.maxd, nd.depth + 1)
        s.rounds += 1
        return [s.arena[ci].obs for ci in s.new]
    def absorb(s, outs):
        for ci, q in zip(s.new, outs):
            nd = s.arena[ci]; legal = nd.env.legal_actions(nd.mover)
            nd.boot = [max(q[h][a] for a in legal) for h in range(len(q))]
            if s.top_k is not None:
                nd.qrow = [sum(q[h][a] for h in range(len(q))) / len(q) if a in legal else -math.inf for a in range(len(q[0]))]
            s.leaves += 1
    def resolve(s, ni):
        nd = s.arena[ni]
        if nd.terminal: return None
        if nd.edges is None: nd.value = list(nd.boot); return nd.value
        best = None
        for (a, r, ci) in nd.edges:
            ev = s.edge_value(nd, r, ci)
            best = ev if best is None else [max(x, y) for x, y in zip(best, ev)]
        nd.value = best; return best
    def edge_value(s, nd, r, ci):
        c = s.arena[ci]
        if c.terminal: return [r] * s.K
        cv = s.resolve(ci)
        sign = 1.0 if c.mover == nd.mover else -1.0
        return [r + s.gamma * (sign * v) for v in cv]
    def evaluation(s, A):
        root = s.arena[0]
        vals = [[0.0] * A for _ in range(s.K)]
        for (a, r, ci) in root.edges:
            ev = s.edge_value(root, r, ci)
            for h in range(s.K): vals[h][a] = ev[h]
        return vals

    def node_values(s, ni, A):
        nd = s.arena[ni]
        vals = [[0.0] * A for _ in range(s.K)]
        for (a, r, ci) in nd.edges:
            ev = s.edge_value(nd, r, ci)
            for h in range(s.K): vals[h][a] = ev[h]
        return vals
    def interior(s, A):
        """TreeStrap interior targets: DFS below the root (edge order), searcher-to-move expanded nodes, full width."""
        s.resolve(0)
        me = s.arena[0].mover; out = []
        def rec(ni):
            nd = s.arena[ni]
            if nd.terminal or nd.edges is None: return
            if nd.mover == me and len(nd.edges) == len(nd.env.legal_actions(nd.mover)):
                out.append((nd.obs, s.node_values(ni, A)))
            for (a, r, ci) in nd.edges: rec(ci)
        for (a, r, ci) in s.arena[0].edges: rec(ci)
        return out
