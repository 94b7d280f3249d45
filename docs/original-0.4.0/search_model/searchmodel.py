"""Reference model of reinfors 0.4.0 Engine.collect for the SEARCH compositions
   (AlphaZero+AlphaZero, Mcts+TreeStrap, ...), n_threads=1, infer_cache=0.
   Game dynamics delegated to the original rf.Env (fork/step)."""
import sys, math, struct
from collections import deque
import numpy as np
import reinfors as rf
sys.path.insert(0, '/work/notes/probes3')
from tree import SM, Tree, G, M64
from mmx import Minimax
from xmx import SelExp

STALL = 10**9   # the original's stall ladder is timing-dependent (see spec); 8 approximates it
def _env_rng_state(env):
    b = env.snapshot().to_bytes(); L = struct.unpack_from('<I', b, 5)[0]
    return struct.unpack_from('<Q', b, 9 + L)[0]

def sample_visits(vis, temp, rng):
    nmax = 0.0
    for v in vis: nmax = max(nmax, v)
    if nmax <= 0: return 0
    w = [(n / nmax) ** (1.0 / temp) if n > 0 else 0.0 for n in vis]
    tot = 0.0
    for x in w: tot += x
    r = rng.unit() * tot
    for a, x in enumerate(w):
        r -= x
        if x > 0 and r <= 0: return a
    return int(np.argmax(w))

class Slot:
    def __init__(s, E, i):
        s.E = E; s.rng = SM(E.seed ^ ((i * G) & M64)); s.new_episode()
    def new_episode(s):
        E = s.E
        s.env = rf.Env(E.game, E.reward, seed=s.rng.s); s.rng.s = _env_rng_state(s.env)
        s.t = 0; s.ply = 0
        if E.policy == 'sex': s.head = s.rng.next() % E.sx['n_heads']
        s.traj = [[] for _ in range(E.np)]; s.ret = [0.0] * E.np; s.last_actors = set()
        s.tree = None
    def step(s, acts):
        e2 = s.env.fork(seed=s.rng.s); e2.step(acts); s.rng.s = _env_rng_state(e2); s.env = e2
        return e2.rewards

class SearchEngine:
    def __init__(s, game, reward, policy, n_games, seed=0, *, nsims=64, c=1.5, max_depth=64, temperature=1.0,
                 temperature_drop=8, noise=(0.25, 0.3), act_by='value', gamma=1.0, batch_size=0, learner='alphazero', sx=None, depth=4, top_k=None, maxn=False, outcome_weight=0.0, bootstrap_p=1.0, interior=False):
        s.depth, s.top_k = depth, top_k; s.sx = sx
        s.maxn = maxn; s.learner = learner; s.ow = outcome_weight; s.bp = bootstrap_p; s.interior = interior
        s.game, s.seed = game, seed
        s.reward = reward if reward is not None else rf.Reward()
        s.policy, s.nsims, s.c, s.maxd, s.temp, s.tdrop, s.noise, s.act_by, s.gamma = policy, nsims, c, max_depth, temperature, temperature_drop, noise, act_by, gamma
        s.np = rf.Env(game).num_agents(); s.A = game.action_space().n; s.T = game.truncation_horizon()
        s.bs = batch_size if batch_size else max(1, n_games // 2)
        s.slots = [Slot(s, i) for i in range(n_games)]
        s.n_collects = 0

    def collect(s, floor, infer):
        tel = dict(episodes=[], decisions=0, infer_calls=0, infer_rows=0, tail_rows=0, extra_eval_rows=0, rounds=0, expansions=0, sum_sigma=0.0, sum_dis=0.0, terminal_sims=0, depthcap_sims=0,
                   max_depth=0, leaves=0, requested_rows=0)
        recs, calls = [], []
        if floor == 0: return recs, tel, calls
        n = len(s.slots); order = [(s.n_collects + j) % n for j in range(n)]; s.n_collects += 1
        queue = deque(('B', i, None) for i in order)
        arena = []; pending = {}; st = dict(stopped=False, nf=0); tel['stall_closes'] = 0

        def fire():
            batch = arena[:]; arena.clear()
            if getattr(s, 'debug', False):
                print('FIRE', len(calls), [(i, k) for (i, _, k) in batch], 'pending', {j: (pd['n'] - len(pd['out'])) for j, pd in pending.items()}, 'queue', [(t, j) for (t, j, _) in queue])
            obs = np.stack([row for (_, row, _) in batch]).astype(np.float32)
            calls.append(obs)
            out = infer(obs); tel['infer_calls'] += 1; tel['infer_rows'] += len(batch)
            if s.policy == 'alphazero':
                lg, v = out; outs = [(lg[j, :s.A].astype(np.float64), float(v[j])) for j in range(len(batch))]
            else:
                q = np.asarray(out, dtype=np.float64); outs = [q[j] for j in range(len(batch))]
            fin = []
            for (i, row, kind), o in zip(batch, outs):
                pd = pending[i]; pd['out'].append(o)
                if kind == 'tail': tel['tail_rows'] += 1; tel['requested_rows'] += 1
                if len(pd['out']) == pd['n']: fin.append(i)
            st['nf'] = 0 if fin else st['nf'] + 1
            for i in fin:
                pd = pending.pop(i)
                if pd['kind'] == 'tail': s.tail_done(i, pd, recs, tel, st, queue)
                else: queue.append(('R', i, pd))

        def request(i, kind, rows):
            pending[i] = dict(kind=kind, n=len(rows), out=[], rows=rows)
            for row in rows:
                arena.append((i, row[1] if kind == 'tail' else row, kind))
                if len(arena) >= s.bs: fire()

        s._request = request
        while queue or arena:
            if queue:
                task, i, arg = queue.popleft()
                if getattr(s, 'debug', False): print('TASK', task, i)
                if task == 'B': s.begin(i, request, tel, recs, st, queue, floor)
                elif task == 'R': s.resume(i, arg, request, tel, recs, st, queue, floor)
                elif task == 'T':
                    if arg: request(i, 'tail', arg)
                    else: s.tail_done(i, dict(rows=[], out=[]), recs, tel, st, queue)
                if st['nf'] >= STALL and arena:
                    tel['stall_closes'] += 1; fire()
            else:
                fire()
        return recs, tel, calls

    # ---- search driving
    def mm_advance(s, i, request, tel, recs, st, queue, floor):
        m = s.slots[i].tree
        while m.active():
            rows = m.round()
            if rows:
                tel['requested_rows'] += len(rows)
                request(i, 'dec', rows); return
        s.finish(i, tel, recs, st, queue, floor)

    def begin(s, i, request, tel, recs, st, queue, floor):
        sl = s.slots[i]; env = sl.env
        if s.policy == 'minimax':
            sl.tree = Minimax(env, s.depth, s.gamma, s.top_k)
            return s.mm_advance(i, request, tel, recs, st, queue, floor)
        if s.policy == 'sex':
            x = s.sx
            sl.tree = SelExp(env, x['budget'], x['top_k'], x['max_depth'], x['beta'], s.gamma, x['opponent'], x['opp_t'], x['opp_f'])
            return s.mm_advance(i, request, tel, recs, st, queue, floor)
        kind = 'puct' if s.policy == 'alphazero' else 'uct'
        nz = (s.noise[0], s.noise[1], sl.rng) if (s.noise and kind == 'puct') else None
        sl.tree = Tree(env, kind, s.c, s.gamma, s.maxd, noise=nz, maxn=s.maxn)
        s.advance(i, request, tel, recs, st, queue, floor)

    def advance(s, i, request, tel, recs, st, queue, floor):
        sl = s.slots[i]; t = sl.tree
        while t.sims < s.nsims:
            t.sims += 1
            r = t.select_expand()
            if r == 'T': t.term += 1; t.backprop(0.0)
            elif r == 'D': t.cap += 1; t.backprop(t.arena[t.leaf].value)
            else:
                if s.maxn:
                    tel['requested_rows'] += t.N; tel['extra_eval_rows'] += t.N - 1
                    request(i, 'dec', list(t.arena[t.leaf].obs_all)); return
                tel['requested_rows'] += 1
                request(i, 'dec', [t.arena[t.leaf].obs]); return
        s.finish(i, tel, recs, st, queue, floor)

    def resume(s, i, pd, request, tel, recs, st, queue, floor):
        t = s.slots[i].tree
        if s.policy in ('minimax', 'sex'):
            t.absorb(pd['out']); return s.mm_advance(i, request, tel, recs, st, queue, floor)
        if s.maxn: t.consume_maxn(pd['out'])
        else: t.consume(pd['out'][0], s.A)
        s.advance(i, request, tel, recs, st, queue, floor)

    def finish(s, i, tel, recs, st, queue, floor):
        sl = s.slots[i]; t = sl.tree; env = sl.env
        if s.policy == 'sex':
            p = env.active_agents()[0]; legal = env.legal_actions(p)
            V = t.evaluation(s.A, s.sx['n_heads'])
            tel['decisions'] += 1; tel['max_depth'] = max(tel['max_depth'], t.maxdepth); tel['leaves'] += t.leaves
            tel['rounds'] += t.rounds; tel['expansions'] += t.expansions
            if t.leaves > 0: tel['sum_sigma'] += t.sigma_sum / t.leaves
            K = len(V)
            if K >= 2:
                tot = 0.0
                for a in legal:
                    m = 0.0
                    for h in range(K): m += V[h][a]
                    m *= 1.0 / K
                    var = 0.0
                    for h in range(K): var += (V[h][a] - m) ** 2
                    tot += math.sqrt(var * (1.0 / K))
                tel['sum_dis'] += tot / len(legal)
            if s.interior:
                for (o, v) in t.interior(s.A):
                    recs.append(dict(obs=o, player=p, targets=v, masks=[1.0 if sl.rng.unit() < s.bp else 0.0 for _ in v], a=None, legal=None))
            row = V[min(sl.head, K - 1)]; a = legal[0]
            for x in legal:
                if row[x] > row[a]: a = x
            if s.sx['epsilon'] > 0 and sl.rng.unit() < s.sx['epsilon']:
                a = legal[sl.rng.next() % len(legal)]
            return s.act(i, p, a, env.observe(p).reshape(-1), None, V, legal, tel, recs, st, queue, floor, t)
        if s.policy == 'minimax':
            vals = t.evaluation(s.A)[0]; vis = None; legal = env.legal_actions(env.active_agents()[0])
            tel['decisions'] += 1; tel['max_depth'] = max(tel['max_depth'], t.maxd); tel['leaves'] += t.leaves
            tel['rounds'] += t.rounds; tel['expansions'] += t.expansions
            p = env.active_agents()[0]; a = legal[0]
            for x in legal:
                if vals[x] > vals[a]: a = x
            return s.act(i, p, a, t.arena[0].env.observe(p).reshape(-1), vis, vals, legal, tel, recs, st, queue, floor, t)
        vals, vis, legal = t.evaluation(s.A)
        tel['rounds'] += t.sims; tel['expansions'] += t.sims
        tel['decisions'] += 1; tel['terminal_sims'] += t.term; tel['depthcap_sims'] += t.cap
        tel['max_depth'] = max(tel['max_depth'], t.maxseen); tel['leaves'] += t.sims
        p = env.active_agents()[0]
        ply = sl.ply; sl.ply += 1
        if s.temp > 0 and ply < s.tdrop:
            a = sample_visits(vis, s.temp, sl.rng)
        else:
            if s.policy == 'alphazero':
                a = int(np.argmax(vis))
            else:
                row = vis if s.act_by == 'visits' else vals
                a = legal[0]
                for x in legal:
                    if row[x] > row[a]: a = x
        root_obs = t.arena[0].obs
        return s.act(i, p, a, root_obs, vis, vals, legal, tel, recs, st, queue, floor, t)

    def act(s, i, p, a, root_obs, vis, vals, legal, tel, recs, st, queue, floor, t=None):
        sl = s.slots[i]
        if s.interior and s.policy == 'minimax':
            for (o, v) in t.interior(s.A):
                recs.append(dict(obs=o, player=p, targets=v, masks=[1.0 if sl.rng.unit() < s.bp else 0.0 for _ in v], a=None, legal=None))
        sl.traj[p].append(dict(obs=root_obs, vis=vis, vals=vals, legal=legal, a=a, r=0.0))
        if s.maxn:
            for q in range(s.np):
                if q != p: sl.traj[q].append(dict(obs=t.arena[0].obs_all[q], vis=[0.0] * s.A, vals=[0.0] * s.A, legal=[], a=None, r=0.0))
        sl.tree = None
        rw = sl.step({p: a})
        sl.last_actors = {p}
        for q in range(s.np):
            sl.ret[q] += rw[q]
            if sl.traj[q]: sl.traj[q][-1]['r'] += rw[q]
        sl.t += 1
        done = sl.env.done(); trunc = s.T is not None and sl.t >= s.T
        if done:
            s.flush(sl, [None] * s.np, recs)
            tel['episodes'].append((list(sl.ret), sl.t, False)); sl.new_episode()
            if len(recs) >= floor: st['stopped'] = True
            if not st['stopped']: queue.append(('B', i, None))
        elif trunc and s.learner == 'treestrap' and s.ow == 0:
            s.flush(sl, [None] * s.np, recs)
            tel['episodes'].append((list(sl.ret), sl.t, False)); sl.new_episode()
            if len(recs) >= floor: st['stopped'] = True
            if not st['stopped']: queue.append(('B', i, None))
        elif trunc:
            rows = [(q, sl.env.observe(q).reshape(-1)) for q in range(s.np) if sl.traj[q]]
            queue.append(('T', i, rows))
        else:
            if len(recs) >= floor: st['stopped'] = True
            if not st['stopped']: queue.append(('B', i, None))
        s._floor = floor

    def tail_done(s, i, pd, recs, tel, st, queue):
        sl = s.slots[i]
        boot = [None] * s.np
        for (q, row), o in zip(pd['rows'], pd['out']):
            if s.learner == 'treestrap':
                lg = sl.env.legal_actions(q)
                boot[q] = max(o[0][x] for x in lg) if lg else 0.0
            else: boot[q] = o[1]
        s.flush(sl, boot, recs)
        tel['episodes'].append((list(sl.ret), sl.t, False)); sl.new_episode()
        if len(recs) >= s._floor: st['stopped'] = True
        if not st['stopped']: queue.append(('B', i, None))

    def flush(s, sl, boot, recs):
        if s.learner == 'treestrap': return s.flush_ts(sl, boot, recs)
        for p in range(s.np):
            D = sl.traj[p]; z = boot[p] if boot[p] is not None else 0.0
            out = []
            for x in reversed(D):
                z = x['r'] + s.gamma * z
                tot = sum(x['vis'])
                pi = [v / tot for v in x['vis']] if tot > 0 else [0.0] * s.A
                out.append(dict(obs=x['obs'], player=p, pi=pi, z=z, w=1.0 if tot > 0 else 0.0, legal=x['legal'], vals=x['vals'], a=x['a']))
            recs.extend(reversed(out))

    def flush_ts(s, sl, boot, recs):
        for p in range(s.np):
            D = sl.traj[p]; z = boot[p] if boot[p] is not None else 0.0
            tg = []
            for x in reversed(D):
                z = x['r'] + s.gamma * z
                V = x['vals'] if isinstance(x['vals'][0], list) else [x['vals']]
                V = [list(v) for v in V]
                if s.ow > 0:
                    for v in V: v[x['a']] = (1.0 - s.ow) * v[x['a']] + s.ow * z
                tg.append(V)
            tg.reverse()
            for x, V in zip(D, tg):
                m = [1.0 if sl.rng.unit() < s.bp else 0.0 for _ in V]
                recs.append(dict(obs=x['obs'], player=p, targets=V, masks=m, a=x['a'], legal=x['legal']))
