import sys; sys.path.insert(0, "/work/notes/probes3")
from h import *; from searchmodel import *
def runm(g, n_games, seed, nsims, bs=0, temp=0.0, tdrop=None, floors=(1,), gamma=0.99, c=2.0, maxd=64, reward=None, verbose=True,
         act_by='value', ow=0.0, bp=1.0, cbf=None, policy='mcts', depth=4, top_k=None, interior=False, sx=None):
    cb = cbf or QRec(osz(g), g.action_space().n)
    if policy == 'mcts': pol = rf.policies.Mcts(num_simulations=nsims, uct_c=c, max_depth=maxd, act_by=act_by, temperature=temp, temperature_drop=tdrop)
    elif policy == 'sex':
        pol = rf.policies.SelectiveExpectimax(**{k: v for k, v in sx.items() if k not in ('opp_t', 'opp_f')},
                                              **({'opp_temperature': sx['opp_t'], 'opp_floor': sx['opp_f']} if sx['opponent'] == 'distributional' else {}))
        cb = cbf or QRec(osz(g), g.action_space().n, n_heads=sx['n_heads'])
    else: pol = rf.policies.Minimax(depth=depth, top_k=top_k)
    E = rf.Engine(g, reward or rf.Reward(), pol, rf.learners.TreeStrap(gamma=gamma, outcome_weight=ow, bootstrap_p=bp, interior_targets=interior), n_games=n_games, seed=seed, n_threads=1, batch_size=bs)
    M = SearchEngine(g, reward or rf.Reward(), policy, depth=depth, top_k=top_k, n_games=n_games, seed=seed, nsims=nsims, c=c, max_depth=maxd, temperature=temp,
                     temperature_drop=(1 << 32) - 1 if tdrop is None else tdrop, noise=None, gamma=gamma, batch_size=bs, learner='treestrap',
                     act_by=act_by, outcome_weight=ow, bootstrap_p=bp, interior=interior, sx=sx)
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
            r['tg'] = np.array_equal(b.targets, np.array([x['targets'] for x in recs]))
            r['mask'] = np.array_equal(b.masks, np.array([x['masks'] for x in recs], dtype=np.float32))
            r['pl'] = np.array_equal(b.players, np.array([x['player'] for x in recs]))
            if not r['tg']:
                bad = [j for j in range(len(recs)) if not np.array_equal(b.targets[j], np.array(recs[j]['targets']))]
                r['tgbad'] = (bad[:5], b.targets[bad[0]], recs[bad[0]]['targets'])
        T = b.telemetry
        for k in ('extra_eval_rows', 'infer_rows', 'decisions', 'terminal_sims', 'depthcap_sims', 'requested_rows', 'tail_rows', 'infer_calls', 'max_depth'):
            if T[k] != tm[k]: r['tel_' + k] = (T[k], tm[k])
        for k, k2 in (('mean_leaves', 'leaves'), ('mean_rounds', 'rounds'), ('mean_expansions', 'expansions')):
            mv = tm[k2] / tm['decisions'] if tm['decisions'] else 0.0
            if T[k] != mv: r['tel_' + k] = (T[k], mv)
        r['stall'] = (T['stall_closes'], tm.get('stall_closes'))
        if policy == 'sex':
            for k, k2 in (('mean_sigma', 'sum_sigma'), ('mean_disagreement', 'sum_dis')):
                mv = tm[k2] / tm['decisions'] if tm['decisions'] else 0.0
                if T[k] != mv: r['tel_' + k] = (T[k], mv)
        if [tuple(e[0]) + (e[1],) for e in T['episodes']] != [tuple(e[0]) + (e[1],) for e in tm['episodes']]: r['episodes'] = (T['episodes'], tm['episodes'])
        good = all(v for k, v in r.items() if k in ('callseq', 'obs', 'tg', 'pl', 'mask')) and r['n'][0] == r['n'][1] and not any(k.startswith('tel_') or k == 'episodes' for k in r)
        ok &= good
        if verbose or not good: print('  ', fl, 'OK' if good else 'FAIL', r)
    return ok
if __name__ == '__main__':
    c4 = rf.games.Connect4()
    print(runm(c4, 1, 0, 16))
    print(runm(c4, 4, 3, 16, floors=(5, 20), bp=0.5))
    print(runm(c4, 4, 3, 10, floors=(5, 20), act_by='visits', temp=1.0, tdrop=4, maxd=2))
