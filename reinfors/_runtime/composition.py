"""Composition facts shared by ``Engine`` and ``PolicyHandle.choose``: policy / learner kind codes,
the policy knobs' engine-time caps and ranges, and the search-tree geometry (``search_spec``).

Plain functions over the handles' parameters: this module imports neither ``reinfors.engine``
nor ``reinfors.policies``, so ``engine -> policies -> _runtime.choose -> composition`` is a
chain, not a circle.
"""

from __future__ import annotations

from reinfors.jit import engine_codes as C

MAX_HEADS = 4096
MAX_SIMS = 1 << 20


# The search knobs 0.4.0 caps at 2**20 when an Engine (or ``choose``) is composed, in its order of
# checks (probed: tests/differential/test_caps_vs_original.py); the handles accept any value.
CAPPED_KNOBS = ("num_simulations", "expansion_budget", "depth", "top_k", "max_depth")


def _check_engine_caps(policy) -> None:
    """Upper caps of policy knobs; the original checks these before the policy/learner pairing."""
    p = policy._params
    if p.get("n_heads", 0) > MAX_HEADS:
        raise ValueError(f"n_heads must be <= {MAX_HEADS} (got {p['n_heads']})")
    for key in CAPPED_KNOBS:
        v = p.get(key)
        if v is not None and v > MAX_SIMS:
            raise ValueError(f"{key} must be <= {MAX_SIMS} (got {v})")
    chance = policy._chance
    if chance is not None and chance.name == "committed" and chance._samples > MAX_SIMS:  # same 2^20 cap
        raise ValueError(f"chance samples must be <= {MAX_SIMS} (got {chance._samples})")


def _check_engine_ranges(policy) -> None:
    """Engine-time lower bounds of policy knobs, after the pairing, in the original's order."""
    p = policy._params
    for key in ("num_simulations", "expansion_budget", "top_k", "max_depth", "n_heads"):
        if p.get(key) is None:
            continue
        lo = 2 if key == "num_simulations" and policy.name == "alphazero" else 1
        if p[key] < lo:
            raise ValueError(f"{key} must be >= {lo}")


_POLICY_KINDS = {
    "epsilon_greedy_q": C.POLICY_EGQ,
    "ppo": C.POLICY_PPO,
    "alphazero": C.POLICY_AZ,
    "gumbel_alphazero": C.POLICY_GUMBEL,
    "mcts": C.POLICY_MCTS,
    "minimax": C.POLICY_MINIMAX,
    "selective_expectimax": C.POLICY_SELEXP,
}
_LEARNER_KINDS = {"dqn": C.LEARNER_DQN, "ppo": C.LEARNER_PPO, "alphazero": C.LEARNER_AZ, "treestrap": C.LEARNER_TS}
# The search policies, with the labels their messages use (validators, composition errors).
SEARCH_LABELS = {
    "alphazero": "AlphaZero",
    "gumbel_alphazero": "GumbelAlphaZero",
    "mcts": "Mcts",
    "minimax": "Minimax",
    "selective_expectimax": "SelectiveExpectimax",
}
_SEARCH = tuple(SEARCH_LABELS)
_TREES = ("alphazero", "gumbel_alphazero", "mcts")  # the AlphaZero / Mcts tree (search_puct.py)
TREE_BYTES_LIMIT = 8 << 30
CACHE_BYTES_LIMIT = 8 << 30
AUTO_SEARCH_BATCH = 4096  # preallocated search trees of all slots together
U32_MAX = (1 << 32) - 1
_EXPAND_MAX = 1 << 20  # ExpandAll: the largest outcome fan a tree enumerates
SATURATED = 1 << 62  # sizes are computed saturating here: "at least 2**62" is all a refusal needs


def _search_spec(policy, learner, d, n_games: int) -> dict:
    """Tree geometry (nodes per slot, path length, rows per request, interior records per
    decision) and the knobs the search kernels read, for a search policy."""
    p = policy._params
    lp = learner._params
    N, A = d.n_players, d.n_actions
    chance = policy._chance
    spec = {
        "resample": int(d.chance_in_step and chance is not None and chance.name == "always_resample"),
        "samples": chance._samples if chance is not None and chance.name == "committed" else 1,
        "expand": int(d.chance_in_step and chance is not None and chance.name == "expand_all"),
        "c": p.get("c_puct", p.get("uct_c", 0.0)),
        "temperature": p.get("temperature", 0.0),
        "temperature_drop": U32_MAX if p.get("temperature_drop") is None else p["temperature_drop"],
        "outcome_weight": lp.get("outcome_weight", 0.0),
        "interior": 0,
    }
    # Sequential trees with in-step chance: an expanded edge may become a chance node with F
    # outcome children (ExpandAll: the fan, Committed(k > 1): k frozen draws).
    fanout = 1
    if d.chance_in_step and not d.simultaneous and chance is not None:
        if spec["expand"]:
            fanout = max(1, d.max_chance)
        elif spec["samples"] > 1:
            fanout = spec["samples"]
    if policy.name in _TREES:
        gumbel = policy.name == "gumbel_alphazero"
        # GumbelAlphaZero counts its simulations after the root's evaluation (mctx); the tree
        # counts the root's evaluation as simulation 1, as AlphaZero's.
        sims = p["num_simulations"] + (1 if gumbel else 0)
        maxn = policy.name != "mcts" and p["sequential_backup"] == "maxn" and N >= 2 and not d.simultaneous
        noise = policy._noise
        fan = max(1, d.max_chance) if spec["expand"] else 1  # ExpandAll: a fan of children per expansion
        if spec["expand"]:
            spec["samples"] = C.FAN_MULT  # outcome index space in the children's keys
        if not d.simultaneous:
            fan = fanout + (fanout > 1)  # a chance node and its outcome children
            if spec["resample"]:
                fan = 2  # a simulation adds at most a resampled chance node and one outcome child
        spec.update(
            sims=sims,
            max_depth=p["max_depth"],
            nodes=sims * fan + 2,
            path=min(p["max_depth"], sims) + 2,
            max_rows=(N if maxn or d.simultaneous else 1) * (fan if d.simultaneous or spec["expand"] else 1),
            maxn=int(maxn),
            act_by=1 if p.get("act_by") == "visits" else 0,
            noise=int(noise is not None),
            noise_epsilon=0.0 if noise is None else noise._epsilon,
            noise_alpha=1.0 if noise is None else noise._alpha,
        )
        if gumbel:
            # one more node: the tree's last row holds the root's Gumbel draws (search_gumbel.py;
            # the bound above leaves it unreached)
            spec.update(
                nodes=spec["nodes"] + 1,
                gb_k=p["max_num_considered_actions"],
                gb_mixed=int(p["use_mixed_value"]),
                gb_rescale=int(p["rescale_values"]),
                gb_scale=p["gumbel_scale"],
                gb_cvisit=p["c_visit"],
                gb_cscale=p["c_scale"],
            )
        # Leaf batching (leaf_batch > 1): up to k leaves per inference round, so k times the rows
        # of a request; t_path keeps the working path plus k saved blocks (4 context rows and a
        # path each, search_puct.py).  More leaves than simulations can never be selected.
        k = min(int(p.get("leaf_batch", 1)), sims)
        if k > 1:
            spec.update(
                leaf_batch=k,
                virtual_loss=p.get("virtual_loss", 1.0),
                path=spec["path"] + k * (spec["path"] + 4),
                max_rows=spec["max_rows"] * k,
            )
        what = f"num_simulations={p['num_simulations']}"
    elif policy.name == "selective_expectimax":
        budget, top_k = p["expansion_budget"], p["top_k"]
        spec.update(
            budget=budget,
            top_k=top_k,
            max_depth=p["max_depth"],
            beta=p["beta"],
            opponent=int(p["opponent"] == "distributional"),
            opp_temperature=p.get("opp_temperature", 1.0),
            opp_floor=p.get("opp_floor", 0.0),
            nodes=1 + budget * A * (fanout + (fanout > 1)),
            path=2,
            max_rows=min(top_k, budget) * (A * fanout + 1),
            # A round requests about a quarter of max_rows (Snake: ~19 of 80): the automatic
            # batch counts that share of the bound (Engine._runtime).
            rows_share=4,
            interior_targets=int(bool(lp.get("interior_targets"))),
            interior=budget if lp.get("interior_targets") else 0,
        )
        if d.simultaneous:
            # One search per acting agent; an expansion fans each of the searcher's actions over
            # the co-movers' joint and the chance outcomes (search_sxsim.py).
            fan = 1
            if d.has_chance and chance is not None:
                fan = max(1, d.max_chance) if chance.name == "expand_all" else chance._samples
            per = A * A ** (N - 1) * fan
            spec.update(
                expand=int(d.has_chance and chance is not None and chance.name == "expand_all"),
                samples=chance._samples if chance is not None and chance.name == "committed" else 1,
                # the acting agents' searches run side by side: one partition each, its last
                # row the waiting search's counters
                nodes=N * (2 + budget * per),
                max_rows=min(top_k, budget) * (N - 1 + per),
                interior=N * budget if lp.get("interior_targets") else 0,
            )
        what = f"expansion_budget={budget}"
    else:  # minimax: full width (or the beam below the root), level by level
        depth, top_k = p["depth"], p["top_k"]
        levels = [A * fanout]  # decision nodes per level (outcome children of chance edges)
        for _ in range(depth - 1):
            # saturated: past SATURATED nodes the tree is refused anyway (a deep search would
            # otherwise build numbers of millions of digits, level by level)
            levels.append(min(SATURATED, levels[-1] * (min(A, top_k) if top_k else A) * fanout))
            if levels[-1] == SATURATED:
                break
        chance_nodes = sum(n // fanout for n in levels) if fanout > 1 else 0
        spec.update(
            depth=depth,
            top_k=top_k or 0,
            nodes=min(SATURATED, 1 + sum(levels) + chance_nodes),
            path=2,
            max_rows=levels[-1],
            interior_targets=int(bool(lp.get("interior_targets"))),
            interior=sum(levels[:-1]) if lp.get("interior_targets") else 0,
        )
        what = f"depth={depth}" + (f", top_k={top_k}" if top_k else "")
    per_node = 8 * (d.state_size + C.TN_SIZE + 3 * A + A * (C.EF_RALL + N) + max(N, 1) + 3) + A
    need = min(SATURATED, n_games * spec["nodes"] * per_node)
    spec["tree_bytes"], spec["tree_knob"] = need, what.split("=")[0]
    if need > TREE_BYTES_LIMIT:
        # Refused (MemoryError) when the trees would be allocated (the first collect), like any
        # out-of-memory condition: the composition itself is valid (the original accepts it).
        nodes = "more than 2**62" if spec["nodes"] == SATURATED else f"up to {spec['nodes']}"
        need_s = "more than 2**62" if need == SATURATED else str(need)
        spec["too_big"] = (
            f"{policy.name} with {what} needs {nodes} tree nodes per game: {need_s} bytes of "
            f"preallocated trees for n_games={n_games} (limit {TREE_BYTES_LIMIT}); use fewer n_games or a "
            "smaller search"
        )
    return spec
