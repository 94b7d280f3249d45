import sys; sys.path.insert(0, "/work/notes/probes3")
from h import *; from searchmodel import *
def run(g, n_games, seed, nsims, bs=0, temp=1.0, tdrop=8, noise=(0.25, 0.3), floors=(1,), gamma=1.0, c=1.5, maxd=64, reward=None, verbose=True, maxn=False):
    cb = AZRec(osz(g), g.action_space().n)
    pol = rf.policies.AlphaZero(num_simulations=nsims, c_puct=c, max_depth=maxd, temperature=temp, temperature_drop=tdrop,
                                noise=None if noise is None else rf.noise.Dirichlet(epsilon=noise[0], alpha=noise[1]), sequential_backup='maxn' if maxn else 'auto')
    E = rf.Engine(g, reward or rf.Reward(), pol, rf.learners.AlphaZero(gamma=gamma), n_games=n_games, seed=seed, n_threads=1, batch_size=bs)
    M = SearchEngine(g, reward or rf.Reward(), 'alphazero', n_games, seed, nsims=nsims, c=c, max_depth=maxd, temperature=temp, temperature_drop=tdrop, noise=noise, gamma=gamma, batch_size=bs, maxn=maxn)
    ok = True
    for fl in floors:
        k0 = len(cb.calls)
        b = E.collect(fl, cb)
        recs, tm, calls = M.collect(fl, cb.out)
        oc = cb.calls[k0:]
        r = dict(n=(len(b.obs), len(recs)), calls=(len(oc), len(calls)))
        r['callseq'] = len(oc) == len(calls) and all(x.shape == y.shape and np.array_equal(x, y) for x, y in zip(oc, calls))
        if len(recs) == len(b.obs):
            r['obs'] = np.array_equal(b.obs, np.array([x['obs'] for x in recs]).reshape(len(recs), -1))
            r['pi'] = np.array_equal(b.policy_targets, np.array([x['pi'] for x in recs]).reshape(len(recs), -1))
            r['z'] = np.array_equal(b.value_targets, np.array([x['z'] for x in recs]))
            r['pl'] = np.array_equal(b.players, np.array([x['player'] for x in recs]))
            r['pw'] = np.array_equal(b.policy_weights, np.array([x['w'] for x in recs]))
            r['legal'] = np.array_equal(b.legal_ids, np.array([a for x in recs for a in x['legal']], dtype=np.int64)) and np.array_equal(b.legal_offsets, np.cumsum([0] + [len(x['legal']) for x in recs]))
        T = b.telemetry
        for k in ('extra_eval_rows', 'infer_rows', 'decisions', 'terminal_sims', 'depthcap_sims', 'requested_rows', 'tail_rows', 'infer_calls', 'max_depth'):
            if T[k] != tm[k]: r['tel_' + k] = (T[k], tm[k])
        for k in ('mean_leaves', 'mean_rounds', 'mean_expansions'):
            mv = tm['leaves'] / tm['decisions'] if tm['decisions'] else 0.0
            if T[k] != mv: r['tel_' + k] = (T[k], mv)
        if [tuple(e[0]) + (e[1],) for e in T['episodes']] != [tuple(e[0]) + (e[1],) for e in tm['episodes']]: r['episodes'] = (T['episodes'], tm['episodes'])
        good = all(v for k, v in r.items() if k in ('callseq', 'obs', 'pi', 'z', 'pl', 'pw', 'legal')) and r['n'][0] == r['n'][1] and not any(k.startswith('tel_') or k == 'episodes' for k in r)
        ok &= good
        if verbose or not good: print('  ', fl, 'OK' if good else 'FAIL', r)
    return ok
if __name__ == '__main__':
    c4 = rf.games.Connect4()
    print(run(c4, 1, 7, 16))
    print(run(c4, 1, 3, 16, temp=1.0, tdrop=100, floors=(1, 5)))
    print(run(c4, 4, 3, 16, floors=(1, 5)))
    print(run(c4, 4, 3, 16, bs=3, floors=(1, 5)))
