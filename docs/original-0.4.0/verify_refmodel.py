"""Compare refmodel.RefEngine against the original reinfors 0.4.0 Engine (n_threads=1).
Run: cd /work/notes/probes2 && /work/.venv-orig/bin/python -I verify_refmodel.py"""
import sys, os; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np, reinfors as rf
from refmodel import RefEngine

class QNet:
    def __init__(self, obs, A, H, seed=123, scale=1.0):
        self.W = np.random.default_rng(seed).standard_normal((obs, H * A)) * scale; self.A, self.H = A, H
    def __call__(self, o):
        o = o.astype(np.float64)
        return np.stack([(o[i][:, None] * self.W).sum(0) for i in range(len(o))]).reshape(len(o), self.H, self.A)

class PNet:
    def __init__(self, obs, A, seed=321, scale=1.0, extra=0):
        r = np.random.default_rng(seed); self.W = r.standard_normal((obs, A + extra)) * scale; self.v = r.standard_normal(obs) * scale
    def __call__(self, o):
        o = o.astype(np.float64)
        return (np.stack([(o[i][:, None] * self.W).sum(0) for i in range(len(o))]),
                np.array([(o[i] * self.v).sum() for i in range(len(o))]))

def logged(fns, log):
    def wrap(j, f):
        def g(o):
            log.append((j, o.copy())); return f(o)
        return g
    return [wrap(j, f) for j, f in enumerate(fns)]

def batch_records(b, kind):
    n = len(b.obs); out = []
    lo = b.legal_offsets
    for i in range(n):
        r = dict(obs=b.obs[i], player=int(b.players[i]), action=int(b.actions[i]), legal=b.legal_ids[lo[i]:lo[i+1]].tolist())
        if kind == 'dqn':
            nlo = b.next_legal_offsets
            r.update(reward=float(b.rewards[i]), next_obs=b.next_obs[i], done=bool(b.dones[i]), can_bootstrap=bool(b.can_bootstrap[i]),
                     discount=float(b.discounts[i]), masks=b.masks[i].tolist(), next_legal=b.next_legal_ids[nlo[i]:nlo[i+1]].tolist())
        else:
            r.update(behavior_log_prob=float(b.behavior_log_probs[i]), advantage=float(b.advantages[i]), ret=float(b.returns[i]), value=float(b.values[i]))
        out.append(r)
    return out

def same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray): return np.array_equal(np.asarray(a, np.float32), np.asarray(b, np.float32))
    return a == b

def run_case(name, game, reward, kind, ng, seed, floors, per_player=False, err_at=None, **kw):
    A = game.action_space().n; obs = int(np.prod(game.observation_space().shape)); npl = rf.Env(game).num_agents()
    if kind == 'dqn':
        pol = rf.policies.EpsilonGreedyQ(n_heads=kw.get('n_heads', 1), epsilon=kw.get('epsilon', 0.1))
        lrn = rf.learners.Dqn(bootstrap_p=kw.get('bootstrap_p', 1.0), n_step=kw.get('n_step', 1), gamma=kw.get('gamma', 0.99))
        net = QNet(obs, A, kw.get('n_heads', 1), scale=kw.get('scale', 1.0))
    else:
        pol = rf.policies.Ppo(); lrn = rf.learners.Ppo(gamma=kw.get('gamma', 0.99), lam=kw.get('lam', 0.95))
        net = PNet(obs, A, scale=kw.get('scale', 1.0), extra=kw.get('extra', 0))
    e = rf.Engine(game, reward, pol, lrn, ng, seed=seed, n_threads=1, batch_size=kw.get('batch_size', 0), pad=kw.get('pad', False),
                  learn_players=kw.get('learn_players'))
    ref = RefEngine(game, reward, kind, ng, seed, epsilon=kw.get('epsilon', 0.1), n_heads=kw.get('n_heads', 1), bootstrap_p=kw.get('bootstrap_p', 1.0),
                    n_step=kw.get('n_step', 1), gamma=kw.get('gamma', 0.99), lam=kw.get('lam', 0.95), batch_size=kw.get('batch_size', 0),
                    pad=kw.get('pad', False), learn_players=kw.get('learn_players'))
    problems = []
    for ci, f in enumerate(floors):
        def mkfns():
            fns = [net] * npl if per_player else [net]
            if err_at is not None and ci == err_at[0]:
                cnt = [0]
                def bad(o, net=net):
                    cnt[0] += 1
                    if cnt[0] == err_at[1]: raise KeyError('boom')
                    return net(o)
                fns = [bad] * npl if per_player else [bad]
            return fns
        log_o, log_r = [], []
        infer_o = logged(mkfns(), log_o); infer_r = logged(mkfns(), log_r)
        eo = er = None
        try: b = e.collect(f, infer_o if per_player else infer_o[0])
        except KeyError as ex: eo = ex
        try: recs, tel, calls = ref.collect(f, infer_r if per_player else infer_r[0])
        except KeyError as ex: er = ex
        if (eo is None) != (er is None): problems.append((ci, 'error mismatch', eo, er)); break
        if len(log_o) != len(log_r) or any(j1 != j2 or not np.array_equal(o1, o2) for (j1, o1), (j2, o2) in zip(log_o, log_r)):
            ids = {}
            for _, o in log_o + log_r:
                for x in o: ids.setdefault(x.tobytes(), len(ids))
            L1 = [(j, [ids[x.tobytes()] for x in o]) for j, o in log_o]; L2 = [(j, [ids[x.tobytes()] for x in o]) for j, o in log_r]
            k = next((k for k, (a, c) in enumerate(zip(L1, L2)) if a != c), min(len(L1), len(L2)))
            problems.append((ci, 'callback log differs at call', k, L1[max(0,k-2):k+4], L2[max(0,k-2):k+4])); break
        if eo is not None: continue
        ob = batch_records(b, kind)
        if len(ob) != len(recs): problems.append((ci, 'n records', len(ob), len(recs))); break
        for i, (x, y) in enumerate(zip(ob, recs)):
            bad = [k for k in x if not same(x[k], y[k])]
            if bad: problems.append((ci, 'record', i, bad)); break
        t = b.telemetry
        for k in ['decisions', 'infer_calls', 'infer_rows', 'padded_rows', 'tail_rows']:
            if t[k] != tel[k]: problems.append((ci, 'telemetry', k, t[k], tel[k]))
        if t['requested_rows'] != tel['infer_rows']: problems.append((ci, 'requested_rows'))
        if t['episodes'] != tel['episodes']: problems.append((ci, 'episodes'))
        if problems: break
    print(('OK  ' if not problems else 'FAIL'), name, problems[:3])
    return not problems

G = rf.games
cases = [
    ('c4 dqn', G.Connect4(), None, 'dqn', 4, 0, [16, 30, 1], {}),
    ('c4 dqn heads3 nstep3 bp.5', G.Connect4(), None, 'dqn', 5, 9, [40, 40], dict(n_heads=3, n_step=3, bootstrap_p=0.5, epsilon=0.3)),
    ('c4 dqn pad bs3', G.Connect4(), None, 'dqn', 5, 1, [20, 20], dict(pad=True, batch_size=3, epsilon=0.3)),
    ('c4 dqn per-player', G.Connect4(), None, 'dqn', 4, 1, [20, 20, 3], dict(per_player=True, batch_size=3, epsilon=0.3)),
    ('c4 dqn learn[1]', G.Connect4(), None, 'dqn', 4, 2, [30, 20], dict(learn_players=[1], epsilon=0.5)),
    ('c4 dqn error', G.Connect4(), None, 'dqn', 4, 2, [12, 15, 15], dict(err_at=(0, 4), epsilon=0.3)),
    ('gw5 T50 dqn', G.GridWorld(size=5, max_ticks=50), None, 'dqn', 5, 7, [30, 30, 30], dict(epsilon=0.5)),
    ('gw5 T3 dqn nstep5', G.GridWorld(size=5, max_ticks=3), rf.Reward(step=-0.013, goal=1.7), 'dqn', 2, 5, [30, 30], dict(n_step=5, gamma=0.93, epsilon=0.4)),
    ('kuhn2 dqn', G.KuhnPoker(players=2), rf.Reward(scale=0.37), 'dqn', 4, 1, [30, 30], dict(n_step=2, gamma=0.9, epsilon=0.5)),
    ('kuhn3 dqn heads3', G.KuhnPoker(players=3), None, 'dqn', 6, 2, [30, 50, 20], dict(n_heads=3, bootstrap_p=0.5, n_step=3, gamma=0.95, batch_size=4, epsilon=0.5)),
    ('kuhn5 dqn per-player', G.KuhnPoker(players=5), None, 'dqn', 16, 1, [50, 100], dict(per_player=True, batch_size=6, epsilon=0.3)),
    ('snake6 dqn', G.Snake(grid_size=6, max_ticks=20), None, 'dqn', 2, 0, [10, 40], dict(epsilon=0.3)),
    ('snake8x3 dqn', G.Snake(grid_size=8, max_ticks=12, num_snakes=3), rf.Reward(step=-0.01, food=0.5), 'dqn', 5, 4, [40, 40, 40], dict(n_step=3, gamma=0.9, epsilon=0.2)),
    ('snake8x3 dqn bs5 pp', G.Snake(grid_size=8, max_ticks=30, num_snakes=3), None, 'dqn', 16, 1, [50, 100], dict(per_player=True, batch_size=7, epsilon=0.3)),
    ('chess T3 dqn', G.Chess(max_ticks=3), None, 'dqn', 2, 1, [6, 6], dict(n_step=2, epsilon=0.5, scale=0.1)),
    ('c4 ppo', G.Connect4(), None, 'ppo', 4, 3, [16, 30, 5], {}),
    ('c4 ppo pad', G.Connect4(), None, 'ppo', 5, 1, [20, 20], dict(pad=True, batch_size=3)),
    ('c4 ppo per-player', G.Connect4(), None, 'ppo', 4, 1, [16, 20, 3], dict(per_player=True, batch_size=3)),
    ('c4 ppo learn[1] wide', G.Connect4(), None, 'ppo', 4, 3, [16, 30, 5], dict(learn_players=[1], extra=3)),
    ('c4 ppo error', G.Connect4(), None, 'ppo', 4, 2, [12, 15, 15], dict(err_at=(1, 3))),
    ('gw T6 ppo', G.GridWorld(size=5, max_ticks=6), rf.Reward(step=-0.01, goal=1.3), 'ppo', 1, 0, [10, 7, 3], dict(gamma=0.97, lam=0.9)),
    ('gw T4 ppo', G.GridWorld(size=5, max_ticks=4), rf.Reward(step=-0.01, goal=1.3), 'ppo', 4, 0, [10, 7, 3], dict(gamma=0.97, lam=0.9)),
    ('gw T50 ppo', G.GridWorld(size=5, max_ticks=50), None, 'ppo', 5, 3, [16, 40, 1, 100], {}),
    ('kuhn2 ppo', G.KuhnPoker(players=2), rf.Reward(scale=0.5), 'ppo', 4, 3, [16, 30, 5], dict(batch_size=3, gamma=0.9, lam=0.8)),
    ('kuhn3 ppo learn[2,0]', G.KuhnPoker(players=3), None, 'ppo', 6, 3, [16, 30, 5], dict(learn_players=[2, 0], gamma=0.9, lam=0.8)),
    ('kuhn5 ppo per-player', G.KuhnPoker(players=5), None, 'ppo', 16, 1, [50, 100], dict(per_player=True, batch_size=6)),
    ('snake6 ppo', G.Snake(grid_size=6, max_ticks=15), None, 'ppo', 3, 3, [16, 30, 5, 40], dict(gamma=0.9, lam=0.8)),
    ('snake8x3 ppo bs5', G.Snake(grid_size=8, max_ticks=10, num_snakes=3), rf.Reward(step=-0.01, food=0.3), 'ppo', 4, 3, [16, 30, 5, 40], dict(batch_size=5, gamma=0.9, lam=0.8)),
    ('snake10x3 ppo long', G.Snake(grid_size=10, max_ticks=12, num_snakes=3), rf.Reward(step=-0.01, food=0.3), 'ppo', 2, 5, [300, 300], dict(gamma=0.9, lam=0.8)),
    ('snake8x3 ppo pp learn[0]', G.Snake(grid_size=8, max_ticks=10, num_snakes=3), None, 'ppo', 6, 1, [50, 100], dict(per_player=True, batch_size=4, learn_players=[0])),
    ('chess T3 ppo', G.Chess(max_ticks=3), None, 'ppo', 2, 1, [6, 6], dict(scale=0.1)),
]
if len(sys.argv) > 1: cases = [c for c in cases if any(a in c[0] for a in sys.argv[1:])]
ok = 0
for name, game, reward, kind, ng, seed, floors, kw in cases:
    kw = dict(kw); pp = kw.pop('per_player', False); ea = kw.pop('err_at', None)
    ok += run_case(name, game, reward, kind, ng, seed, floors, per_player=pp, err_at=ea, **kw)
print(f'{ok}/{len(cases)} cases identical')
