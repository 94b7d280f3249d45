"""Reference model of reinfors 0.4.0 `Engine.collect` for the model-free compositions
   EpsilonGreedyQ + Dqn  and  Ppo + Ppo   (n_threads = 1 semantics, infer_cache = 0).

Verified record-for-record, call-for-call and telemetry-for-telemetry against the original
(see verify_refmodel.py).  Game dynamics are delegated to the original `rf.Env` (so this file
only documents the *engine*); an implementation replaces `rf.Env` by its own games.  The Env's
chance RNG and the engine's per-slot RNG are ONE SplitMix64 stream per slot; here we keep the
stream in `Slot.rng` and push/pull it into the Env through fork(seed=state) / snapshot bytes.
"""
import math, struct
from collections import deque
import numpy as np
import reinfors as rf

M64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


class SplitMix64:
    def __init__(self, s): self.s = s & M64
    def next(self):
        self.s = (self.s + GOLDEN) & M64
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)
    def f64(self):                      # uniform [0,1): top 53 bits
        return (self.next() >> 11) * 2.0 ** -53


def _env_rng_state(env):
    b = env.snapshot().to_bytes(); L = struct.unpack_from('<I', b, 5)[0]
    return struct.unpack_from('<Q', b, 9 + L)[0]


class Slot:
    def __init__(self, E, i):
        self.E = E
        self.rng = SplitMix64(E.seed ^ ((i * GOLDEN) & M64))       # per-slot stream
        self.new_episode()

    def new_episode(self):
        E = self.E
        # game reset consumes its chance draws from the slot stream (gridworld 1, kuhn p, c4 0, snake: food)
        self.env = rf.Env(E.game, E.reward, seed=self.rng.s)
        self.rng.s = _env_rng_state(self.env)
        if E.kind == 'dqn':
            self.head = self.rng.next() % E.heads                  # ONE head per episode, shared by all players
        self.t = 0
        self.traj = [[] for _ in range(E.np)]                      # per player own-decision list
        self.ret = [0.0] * E.np
        self.last_actors = set()

    def step(self, acts):
        env2 = self.env.fork(seed=self.rng.s)                      # chance during step uses the slot stream
        env2.step(acts)
        self.rng.s = _env_rng_state(env2)
        self.env = env2
        return env2.rewards


class CallbackError(Exception):
    pass


class RefEngine:
    def __init__(self, game, reward, kind, n_games, seed=0, *, epsilon=0.1, n_heads=1, bootstrap_p=1.0,
                 n_step=1, gamma=0.99, lam=0.95, batch_size=0, pad=False, learn_players=None):
        self.game, self.kind, self.seed = game, kind, seed
        self.reward = reward if reward is not None else rf.Reward()
        self.eps, self.heads, self.bp, self.nstep, self.gamma, self.lam = epsilon, n_heads, bootstrap_p, n_step, gamma, lam
        self.np = rf.Env(game).num_agents()
        self.A = game.action_space().n
        self.T = game.truncation_horizon()
        self.sequential_multi = self.np > 1 and game.name != 'snake'
        self.learn = None if learn_players is None else set(learn_players)
        self.bs = batch_size if batch_size else max(1, n_games // 2)
        self.pad = pad
        self.slots = [Slot(self, i) for i in range(n_games)]
        self.n_collects = 0                                        # non-empty collects so far (rotation)

    def learns(self, p):
        return self.learn is None or p in self.learn

    # ------------------------------------------------------------------ collect
    def collect(self, floor, infer):
        per_player = not callable(infer)
        fns = list(infer) if per_player else [infer]
        R = len(fns)
        tel = dict(episodes=[], decisions=0, infer_calls=0, infer_rows=0, padded_rows=0, tail_rows=0)
        recs, calls = [], []
        if floor == 0:
            return recs, tel, calls
        n = len(self.slots)
        order = [(self.n_collects + j) % n for j in range(n)]
        self.n_collects += 1
        queue = deque(('B', i, None) for i in order)
        arenas = [[] for _ in range(R)]
        pending = {}
        st = dict(stopped=False, count=0, error=None)

        # ---------------------------------------------------------- inference
        def call(r, rows):
            obs = np.stack(rows).astype(np.float32)
            if self.pad and not per_player and len(rows) < self.bs:
                tel['padded_rows'] += self.bs - len(rows)
                obs = np.concatenate([obs, np.zeros((self.bs - len(rows), obs.shape[1]), np.float32)])
            k = len(rows)
            if st['error'] is None:
                try:
                    out = fns[r](obs)
                    tel['infer_calls'] += 1
                    return self.validate(out, k)
                except BaseException as ex:      # raised OR invalid output: remember, continue with zeros
                    st['error'] = ex
            if self.kind == 'dqn':
                return [np.zeros((self.heads, self.A)) for _ in range(k)]
            return [(np.zeros(self.A), 0.0) for _ in range(k)]

        def fire(r):
            batch = arenas[r][:]; arenas[r].clear()
            calls.append((r, [row for (_, _, row, _) in batch]))
            outs = call(r, [row for (_, _, row, _) in batch])
            tel['infer_rows'] += len(batch)
            finished = []
            for (i, j, row, kind), o in zip(batch, outs):
                pd = pending[i]; pd['out'][j] = o; pd['got'] += 1
                if kind == 'tail': tel['tail_rows'] += 1
                else: tel['decisions'] += 1
                if pd['got'] == len(pd['rows']): finished.append(i)
            for i in finished:                                   # in order of each slot's last row
                pd = pending.pop(i)
                if pd['kind'] == 'tail':
                    self.tail_done(i, pd, recs, tel, st, queue)  # handled immediately (no worker task)
                else:
                    queue.append(('R', i, pd))                   # worker task: act / step / records

        def request(i, kind, rows, episode_end=False):
            pending[i] = dict(kind=kind, rows=rows, got=0, out=[None] * len(rows), episode_end=episode_end)
            for j, (p, row) in enumerate(rows):
                r = p if per_player else 0
                arenas[r].append((i, j, row, kind))
                if len(arenas[r]) >= self.bs:
                    fire(r)                                      # fires mid-task; remaining rows spill

        # ---------------------------------------------------------- main loop
        def drain():
            while queue or any(arenas):
                if queue:
                    task, i, arg = queue.popleft()
                    if task == 'B':
                        env = self.slots[i].env
                        request(i, 'dec', [(p, env.observe(p).reshape(-1)) for p in env.active_agents()])
                    elif task == 'T':
                        if arg:
                            request(i, 'tail', arg, True)
                        else:                      # nothing to bootstrap: episode ends when the task runs
                            self.tail_done(i, dict(rows=[], out=[], episode_end=True), recs, tel, st, queue)
                    else:
                        self.resume(i, arg, floor, recs, tel, st, queue)
                else:                                            # quiescence: fire every open arena
                    for r in range(R):
                        if arenas[r]: fire(r)
        drain()
        if self.kind == 'ppo':                                   # window end: bootstrap unfinished segments
            for i in range(n):                                   # slot-index order (not rotation order)
                sl = self.slots[i]
                rows = [(p, sl.env.observe(p).reshape(-1)) for p in range(self.np) if sl.traj[p] and self.learns(p)]
                if rows:
                    request(i, 'tail', rows)
            for r in range(R):
                if arenas[r]: fire(r)
        if st['error'] is not None:
            raise st['error']                                    # batch discarded, engine state kept
        return recs, tel, calls

    # ------------------------------------------------------------------ validation (messages: see spec)
    def validate(self, out, k):
        if self.kind == 'dqn':
            if not isinstance(out, np.ndarray): raise TypeError(f'infer output must be a float64 or float32 ndarray; got type {type(out).__name__}')
            if out.ndim != 3: raise TypeError(f'infer output must be a 3-d ndarray; got {out.ndim}-d')
            if out.dtype not in (np.float32, np.float64): raise TypeError(f'infer output must be a float64 or float32 ndarray; got dtype {out.dtype}')
            exp_rows = self.bs if (self.pad) else k
            if out.shape != (exp_rows, self.heads, self.A):
                raise ValueError(f'infer returned shape {list(out.shape)} for {exp_rows} rows; expected ({exp_rows}, n_heads = {self.heads}, {self.A})')
            q = out.astype(np.float64)
            if not np.isfinite(q).all(): raise ValueError('infer outputs must contain only finite values')
            return [q[j] for j in range(k)]
        if not isinstance(out, tuple) or len(out) != 2:
            what = f'a {len(out)}-element tuple' if isinstance(out, tuple) else type(out).__name__
            raise TypeError(f'Ppo infer must return a (policy_logits, values) tuple; got {what}')
        lg, v = out
        for name, a, nd in (('policy_logits', lg, 2), ('values', v, 1)):
            if not isinstance(a, np.ndarray): raise TypeError(f'Ppo infer {name} must be a float64 or float32 ndarray; got type {type(a).__name__}')
            if a.ndim != nd: raise TypeError(f'Ppo infer {name} must be a {nd}-d ndarray; got {a.ndim}-d')
            if a.dtype not in (np.float32, np.float64): raise TypeError(f'Ppo infer {name} must be a float64 or float32 ndarray; got dtype {a.dtype}')
        exp_rows = self.bs if self.pad else k
        if lg.shape[0] != exp_rows or lg.shape[1] < self.A or v.shape[0] != exp_rows:
            raise ValueError(f'Ppo infer must return (policy_logits ({exp_rows}, >={self.A}), values ({exp_rows},)); got logits {list(lg.shape)} and values ({v.shape[0]},)')
        lg = lg[:, :self.A].astype(np.float64); v = v.astype(np.float64)
        if not (np.isfinite(lg).all() and np.isfinite(v).all()): raise ValueError('Ppo infer outputs must contain only finite values')
        return [(lg[j], float(v[j])) for j in range(k)]

    # ------------------------------------------------------------------ one decision (worker task)
    def resume(self, i, pd, floor, recs, tel, st, queue):
        sl = self.slots[i]; env = sl.env; acts = {}
        for (p, row), o in zip(pd['rows'], pd['out']):                 # active-agent order
            legal = env.legal_actions(p)
            if self.kind == 'dqn':
                a = None
                if self.eps > 0 and sl.rng.f64() < self.eps:            # no coin draw when epsilon == 0
                    a = legal[sl.rng.next() % len(legal)]               # uniform legal: u64 % n_legal
                if a is None:
                    q = o[sl.head]
                    a = legal[0]
                    for x in legal:                                     # argmax over legal, lowest id on ties
                        if q[x] > q[a]: a = x
                sl.traj[p].append(dict(obs=row, a=a, legal=legal, r=0.0))
            else:
                lgt, val = o
                l = [float(lgt[x]) for x in legal]; m = max(l)
                s = 0.0
                for x in l: s += math.exp(x - m)                        # sequential sum, legal ascending
                ls = math.log(s)
                u = sl.rng.f64(); c = len(legal) - 1
                for idx, x in enumerate(l):                             # subtractive inverse CDF on exp(logp)
                    pr = math.exp((x - m) - ls)
                    if u <= pr: c = idx; break
                    u -= pr
                a = legal[c]
                sl.traj[p].append(dict(obs=row, a=a, lp=(l[c] - m) - ls, v=val, r=0.0, legal=legal))
            acts[p] = a
        rw = sl.step(acts)
        for p in acts: sl.traj[p][-1]['post'] = sl.env.observe(p).reshape(-1)
        sl.last_actors = set(acts)
        for p in range(self.np):
            sl.ret[p] += rw[p]
            if sl.traj[p]: sl.traj[p][-1]['r'] += rw[p]                 # credited to p's latest own decision
        sl.t += 1
        done = sl.env.done(); trunc = self.T is not None and sl.t >= self.T
        if self.kind == 'dqn':
            if done or trunc:
                before = len(recs)
                self.dqn_flush(sl, recs, done)
                for rec in recs[before:]:                               # masks drawn at flush, record order
                    rec['masks'] = [1.0 if sl.rng.f64() < self.bp else 0.0 for _ in range(self.heads)]
                tel['episodes'].append((list(sl.ret), sl.t, False))
                sl.new_episode()
                if len(recs) >= floor: st['stopped'] = True
            if not st['stopped']: queue.append(('B', i, None))
            return
        st['count'] += sum(1 for p in acts if self.learns(p))
        if st['count'] >= floor: st['stopped'] = True
        if done:
            for p in range(self.np): self.ppo_emit(sl, p, 0.0, recs)
            tel['episodes'].append((list(sl.ret), sl.t, False)); sl.new_episode()
            if not st['stopped']: queue.append(('B', i, None))
        elif trunc:
            rows = [(p, sl.env.observe(p).reshape(-1)) for p in range(self.np) if sl.traj[p] and self.learns(p)]
            queue.append(('T', i, rows))       # tail request is a queued task (even with no rows)
        else:
            if not st['stopped']: queue.append(('B', i, None))

    def tail_done(self, i, pd, recs, tel, st, queue):
        sl = self.slots[i]
        for (p, row), (lgt, val) in zip(pd['rows'], pd['out']):
            self.ppo_emit(sl, p, val, recs)                             # V(obs) even for a dead snake
        if pd['episode_end']:
            tel['episodes'].append((list(sl.ret), sl.t, False)); sl.new_episode()
            if not st['stopped']: queue.append(('B', i, None))

    # ------------------------------------------------------------------ learners
    def dqn_flush(self, sl, recs, terminal):
        env = sl.env; g = self.gamma
        state = env.state()
        alive = state.get('alive', [True] * self.np) if isinstance(state, dict) else [True] * self.np
        for p in range(self.np):                                        # player order
            if not self.learns(p): continue
            D = sl.traj[p]; m = len(D)
            for j in range(m):
                k = min(self.nstep, m - j)
                r = 0.0; d = 1.0; gk = 1.0
                for x in D[j:j + k]:
                    r += d * x['r']; d *= g
                for _ in range(k): gk *= g
                rec = dict(obs=D[j]['obs'], player=p, action=D[j]['a'], legal=D[j]['legal'], reward=r)
                if j + k < m:
                    rec.update(next_obs=D[j + k]['obs'], next_legal=D[j + k]['legal'], done=False)
                else:
                    # tail: obs right after p's own last action; successor legality only for a living
                    # player that acted in the final tick of a truncated (non-terminal) episode
                    nl = [] if (terminal or not alive[p] or p not in sl.last_actors) else env.legal_actions(p)
                    rec.update(next_obs=D[m - 1]['post'], next_legal=nl, done=terminal)
                rec['can_bootstrap'] = bool(rec['next_legal'])
                rec['discount'] = gk if rec['can_bootstrap'] else 0.0
                recs.append(rec)

    def ppo_emit(self, sl, p, boot, recs):
        seg = sl.traj[p]
        if not seg: return
        g, lam = self.gamma, self.lam
        adv = 0.0; A = [0.0] * len(seg)
        for t in reversed(range(len(seg))):
            nv = seg[t + 1]['v'] if t + 1 < len(seg) else boot
            delta = seg[t]['r'] + g * nv - seg[t]['v']
            adv = delta + g * lam * adv
            A[t] = adv
        if self.learns(p):
            for x, a in zip(seg, A):
                recs.append(dict(obs=x['obs'], player=p, action=x['a'], behavior_log_prob=x['lp'], advantage=a,
                                 ret=a + x['v'], value=x['v'], legal=x['legal']))
        sl.traj[p] = []
