"""Differential tests of Engine.collect against reinfors==0.4.0 (side venv).

Both builds draw every slot's chance and policy randomness from the same per-slot SplitMix64
stream (state ``seed ^ slot * 0x9E3779B97F4A7C15``) in the same order, so each slot plays the
same episodes.  Which episodes land in which batch differs by design (this build windows
records by decision level so batches do not depend on thread timing or batch_size; the original
windows by completion order), so the comparison is per episode: every DQN episode this build
delivers — all its records, bit for bit — must be one the original delivers when run longer.
PPO segments are cut at different window boundaries, so for PPO every decision record (obs,
action, behaviour log-prob, critic value, legal set) is compared instead.
"""

from __future__ import annotations

import collections

import pytest

from .engine_cases import (
    AZ_FIELDS,
    DQN_FIELDS,
    PPO_FIELDS,
    TS_FIELDS,
    _decode,
    _dqn_episodes,
    _ours,
    _rows,
)
from .harness import run_orig

pytestmark = pytest.mark.differential


DQN_CASES = [
    ("GridWorld", {"size": 5, "max_ticks": 20}, {"step": -0.01, "goal": 1.0}, {"n_heads": 2, "epsilon": 0.3},
     {"n_step": 3, "gamma": 0.9, "bootstrap_p": 0.5}, {"n_games": 6, "seed": 7}),
    ("Connect4", {}, {}, {"epsilon": 0.2}, {"n_step": 2}, {"n_games": 5, "seed": 3}),
    ("KuhnPoker", {"players": 3}, {"scale": 0.5}, {"epsilon": 0.5}, {"n_step": 1, "gamma": 1.0}, {"n_games": 4, "seed": 1}),
    # one food: at most one placement per tick (multi-food ticks use a draw scheme not reproduced)
    ("Snake", {"grid_size": 7, "food": 1, "max_ticks": 40}, {"food": 1.0, "loss": -1.0, "step": -0.01},
     {"epsilon": 0.3}, {"n_step": 2, "gamma": 0.95}, {"n_games": 4, "seed": 5}),
]  # fmt: skip


def _assert_contained(ours, theirs, what):
    """Every record / episode of this build (a multiset) is one the original delivered."""
    missing = ours - theirs
    assert not missing, f"{sum(missing.values())} of {sum(ours.values())} {what} differ from the original"


def _orig_record_set(spec, collects, floor, names):
    """:func:`_record_set` of the original's run of ``spec`` (``collects`` collects of ``floor``)."""
    run = run_orig(dict(spec, collects=collects, floor=floor))
    return _record_set([{"fields": _decode(b["fields"])} for b in run], names)


def _record_set(run, names=DQN_FIELDS):
    """Multiset of single records over ``names`` (for simultaneous games, whose per-episode record
    counts are not in the telemetry, and for batches compared record by record)."""
    out = collections.Counter()
    for batch in run:
        f = batch["fields"]
        out.update(_rows(f, j, names) for j in range(len(f["players"])))
    return out


@pytest.mark.parametrize("case", DQN_CASES, ids=[c[0] for c in DQN_CASES])
def test_dqn_episodes_match_the_original(case):
    ctor, kwargs, reward, pk, lk, ek = case
    spec = {
        "mode": "engine",
        "ctor": ctor,
        "kwargs": kwargs,
        "reward": reward,
        "policy": "EpsilonGreedyQ",
        "policy_kwargs": pk,
        "learner": "Dqn",
        "learner_kwargs": lk,
        "engine": dict(ek, n_threads=1),
        "fields": DQN_FIELDS,
        "cb_seed": 5,
    }
    theirs_raw = run_orig(dict(spec, collects=6, floor=80))
    split = _record_set if ctor == "Snake" else _dqn_episodes
    theirs = split([{"fields": _decode(b["fields"]), "episodes": b["episodes"]} for b in theirs_raw])
    ours = split(_ours(dict(spec, engine=dict(ek)), 2, 80))
    assert sum(ours.values()) >= 5
    _assert_contained(ours, theirs, "episodes")


def test_ppo_decisions_match_the_original():
    spec = {
        "mode": "engine",
        "ctor": "GridWorld",
        "kwargs": {"size": 5, "max_ticks": 15},
        "reward": {"step": -0.01, "goal": 1.0},
        "policy": "Ppo",
        "policy_kwargs": {},
        "learner": "Ppo",
        "learner_kwargs": {"gamma": 0.97, "lam": 0.9},
        "engine": {"n_games": 4, "seed": 2, "n_threads": 1},
        "fields": PPO_FIELDS,
        "cb_seed": 9,
    }
    theirs_raw = run_orig(dict(spec, collects=6, floor=60))
    theirs = collections.Counter()
    for b in theirs_raw:
        f = _decode(b["fields"])
        theirs.update(_rows(f, i, PPO_FIELDS) for i in range(len(f["actions"])))
    ours = collections.Counter()
    for b in _ours(dict(spec, engine={"n_games": 4, "seed": 2}), 2, 60):
        f = b["fields"]
        ours.update(_rows(f, i, PPO_FIELDS) for i in range(len(f["actions"])))
    assert sum(ours.values()) >= 100
    assert not (ours - theirs)


@pytest.mark.slow  # chess model-free modules (PPO, DQN) with RelativeChess: ~4 min cold
@pytest.mark.parametrize("learner", ["Ppo", "Dqn"])
def test_chess_modelfree_decisions_match_the_original(learner):
    """Chess in 0.4.0's legal order and RelativeChess head frame: PPO samples and EpsilonGreedyQ
    explores over the legal list in generation order; actions and legal sets in the head frame."""
    names = PPO_FIELDS if learner == "Ppo" else DQN_FIELDS
    spec = {
        "mode": "engine",
        "ctor": "Chess",
        "kwargs": {"max_ticks": 15},
        "encoder": "RelativeChess",
        "reward": {},
        "policy": "Ppo" if learner == "Ppo" else "EpsilonGreedyQ",
        "policy_kwargs": {} if learner == "Ppo" else {"epsilon": 0.3},
        "learner": learner,
        "learner_kwargs": {},
        "engine": {"n_games": 2, "seed": 3, "n_threads": 1},
        "fields": names,
        "cb_seed": 2,
        "cb": "int",
    }
    theirs = _orig_record_set(spec, 4, 30, names)
    ours = _record_set(_ours(dict(spec, engine={"n_games": 2, "seed": 3}), 2, 30), names)
    assert sum(ours.values()) >= 30
    _assert_contained(ours, theirs, "records")


SEARCH_CASES = [
    # (id, game ctor, kwargs, reward, policy, policy kwargs, learner, learner kwargs, engine kwargs)
    ("az-c4", "Connect4", {}, {}, "AlphaZero", {"num_simulations": 12}, "AlphaZero", {"gamma": 0.95},
     {"n_games": 3, "seed": 4}),
    ("az-c4-greedy-nonoise", "Connect4", {}, {}, "AlphaZero",
     {"num_simulations": 9, "noise": None, "temperature": 0.0, "max_depth": 3}, "AlphaZero", {}, {"n_games": 2, "seed": 2}),
    ("az-gridworld-trunc", "GridWorld", {"size": 5, "max_ticks": 12}, {"step": -0.01, "goal": 1.0}, "AlphaZero",
     {"num_simulations": 8, "temperature_drop": 4}, "AlphaZero", {"gamma": 0.9}, {"n_games": 3, "seed": 6}),
    ("mcts-c4", "Connect4", {}, {}, "Mcts", {"num_simulations": 10}, "TreeStrap", {"gamma": 0.9, "bootstrap_p": 0.5},
     {"n_games": 3, "seed": 1}),
    ("mcts-c4-visits-temp", "Connect4", {}, {}, "Mcts",
     {"num_simulations": 7, "act_by": "visits", "temperature": 1.0, "temperature_drop": 6, "max_depth": 2},
     "TreeStrap", {"outcome_weight": 0.5}, {"n_games": 2, "seed": 3}),
    ("mcts-gridworld-ow", "GridWorld", {"size": 5, "max_ticks": 10}, {"step": -0.01, "goal": 1.0}, "Mcts",
     {"num_simulations": 6}, "TreeStrap", {"outcome_weight": 0.3, "gamma": 0.9}, {"n_games": 3, "seed": 8}),
    ("minimax-c4-d2", "Connect4", {}, {}, "Minimax", {"depth": 2}, "TreeStrap", {"gamma": 0.9, "bootstrap_p": 0.7},
     {"n_games": 3, "seed": 5}),
    ("minimax-c4-d3-topk", "Connect4", {}, {}, "Minimax", {"depth": 3, "top_k": 3}, "TreeStrap",
     {"outcome_weight": 0.25}, {"n_games": 2, "seed": 9}),
    ("sx-c4-uniform", "Connect4", {}, {}, "SelectiveExpectimax", {"expansion_budget": 16, "top_k": 4, "n_heads": 2},
     "TreeStrap", {"gamma": 0.9, "bootstrap_p": 0.6}, {"n_games": 3, "seed": 2}),
    ("sx-c4-distributional", "Connect4", {}, {}, "SelectiveExpectimax",
     {"expansion_budget": 12, "top_k": 3, "n_heads": 3, "beta": 0.5, "epsilon": 0.2, "max_depth": 4,
      "opponent": "distributional", "opp_temperature": 0.5, "opp_floor": 0.1},
     "TreeStrap", {"outcome_weight": 0.5}, {"n_games": 2, "seed": 7}),
    ("sx-gridworld", "GridWorld", {"size": 5, "max_ticks": 10}, {"step": -0.01, "goal": 1.0}, "SelectiveExpectimax",
     {"expansion_budget": 10, "top_k": 2}, "TreeStrap", {"outcome_weight": 0.3, "gamma": 0.9},
     {"n_games": 3, "seed": 8}),
]  # fmt: skip


def _search_spec(case, cb_seed):
    """(record fields, driver spec, our engine kwargs) of a search case; the original runs with
    ``n_threads=1`` (its only deterministic setting), this build at its default."""
    _, ctor, kwargs, reward, pol, pk, lrn, lk, ek = case
    names = AZ_FIELDS if lrn == "AlphaZero" else TS_FIELDS
    spec = {
        "mode": "engine",
        "ctor": ctor,
        "kwargs": kwargs,
        "reward": reward,
        "policy": pol,
        "policy_kwargs": pk,
        "learner": lrn,
        "learner_kwargs": lk,
        "engine": dict(ek, n_threads=1),
        "fields": names,
        "cb_seed": cb_seed,
    }
    return names, spec, ek


@pytest.mark.parametrize("case", SEARCH_CASES, ids=[c[0] for c in SEARCH_CASES])
def test_search_episodes_match_the_original(case):
    """Every episode this build delivers for a search composition (records, visit/target rows,
    returns, masks) must be one the original delivers, bit for bit."""
    names, spec, ek = _search_spec(case, cb_seed=3)
    theirs_raw = run_orig(dict(spec, collects=4, floor=60))
    theirs = _dqn_episodes([{"fields": _decode(b["fields"]), "episodes": b["episodes"]} for b in theirs_raw], names)
    ours = _dqn_episodes(_ours(dict(spec, engine=dict(ek)), 2, 40), names)
    assert sum(ours.values()) >= 2
    _assert_contained(ours, theirs, "episodes")


RECORD_CASES = [
    # maxn: every agent gets a row per tick (value-only rows for non-movers); interior targets add
    # records at decisions — compared as a multiset of records.
    ("az-c4-maxn", "Connect4", {}, {}, "AlphaZero", {"num_simulations": 8, "sequential_backup": "maxn"}, "AlphaZero",
     {"gamma": 0.9}, {"n_games": 2, "seed": 3}),
    ("minimax-c4-interior", "Connect4", {}, {}, "Minimax", {"depth": 3}, "TreeStrap",
     {"interior_targets": True, "bootstrap_p": 0.5}, {"n_games": 2, "seed": 4}),
    ("sx-c4-interior", "Connect4", {}, {}, "SelectiveExpectimax", {"expansion_budget": 12, "top_k": 3, "n_heads": 2},
     "TreeStrap", {"interior_targets": True, "bootstrap_p": 0.5}, {"n_games": 2, "seed": 6}),
]  # fmt: skip


@pytest.mark.parametrize("case", RECORD_CASES, ids=[c[0] for c in RECORD_CASES])
def test_search_records_match_the_original(case):
    names, spec, ek = _search_spec(case, cb_seed=4)
    theirs = _orig_record_set(spec, 10, 150, names)
    ours = _record_set(_ours(dict(spec, engine=dict(ek)), 2, 60), names)
    assert sum(ours.values()) >= 60
    _assert_contained(ours, theirs, "records")


# Chess: 0.4.0's search walks each node's edges in its generation order (root noise is drawn per
# legal move in that order, PUCT ties break to the first) and lists every record's legal set in
# that order; with RelativeChess an agent-1 record is in the head frame (legal ids and policy
# target columns through head_index).  An integer-weight callback keeps the 4673-wide rows exact.
CHESS_CASES = [
    pytest.param(("az-chess", "Chess", {"max_ticks": 16}, {}, "AlphaZero", {"num_simulations": 8}, "AlphaZero",
                  {"gamma": 1.0}, {"n_games": 2, "seed": 3}), None, id="az-chess"),
    pytest.param(("az-chess-relative", "Chess", {"max_ticks": 16}, {}, "AlphaZero", {"num_simulations": 8},
                  "AlphaZero", {"gamma": 1.0}, {"n_games": 2, "seed": 3}), "RelativeChess",
                 marks=pytest.mark.slow, id="az-chess-relative"),  # its own tree module (~3 min cold)
]  # fmt: skip


@pytest.mark.parametrize("case,encoder", CHESS_CASES)
def test_chess_search_records_match_the_original(case, encoder):
    names, spec, ek = _search_spec(case, cb_seed=5)
    spec = dict(spec, cb="int", encoder=encoder)
    theirs = _orig_record_set(spec, 3, 40, names)
    ours = _record_set(_ours(dict(spec, engine=dict(ek)), 2, 30), names)
    assert sum(ours.values()) >= 30
    _assert_contained(ours, theirs, "records")


# SelectiveExpectimax + TreeStrap on Snake (simultaneous: one search per acting snake per tick,
# co-movers fanned Uniform / Distributional, chance fanned per mode).  Compared as multisets of
# records (simultaneous episodes have no fixed records-per-tick count).  With food=0 the trees
# hold no chance; ExpandAll enumerates the respawn outcomes (no RNG); Committed draws in-tree
# from the slot stream, the agents' searches taking turns round by round
# (docs/original-0.4.0/engine-search.md §4.1).
SIM_SX_CASES = [
    ("sx-snake2-nofood", "Snake", {"grid_size": 7, "food": 0, "max_ticks": 20}, {"loss": -1.0, "step": -0.01},
     "SelectiveExpectimax", {"expansion_budget": 8, "top_k": 2, "n_heads": 2}, "TreeStrap",
     {"gamma": 0.9, "bootstrap_p": 0.6}, {"n_games": 2, "seed": 2}),
    ("sx-snake3-nofood-dist-interior", "Snake", {"grid_size": 7, "food": 0, "max_ticks": 20, "num_snakes": 3},
     {"loss": -1.0, "step": -0.01, "win": 1.0}, "SelectiveExpectimax",
     {"expansion_budget": 6, "top_k": 2, "n_heads": 3, "opponent": "distributional", "opp_temperature": 0.5,
      "opp_floor": 0.1, "epsilon": 0.2, "beta": 0.5, "max_depth": 4},
     "TreeStrap", {"outcome_weight": 0.5, "interior_targets": True}, {"n_games": 2, "seed": 5}),
    ("sx-snake2-expandall", "Snake", {"grid_size": 6, "food": 1, "max_ticks": 20}, {"loss": -1.0, "food": 1.0},
     "SelectiveExpectimax", {"expansion_budget": 8, "top_k": 2, "n_heads": 2, "chance": {"name": "expand_all"}},
     "TreeStrap", {"gamma": 0.9, "outcome_weight": 0.3}, {"n_games": 2, "seed": 2}),
    ("sx-snake3-expandall-dist", "Snake", {"grid_size": 6, "food": 1, "max_ticks": 15, "num_snakes": 3},
     {"loss": -1.0, "food": 1.0, "win": 1.0}, "SelectiveExpectimax",
     {"expansion_budget": 5, "top_k": 2, "n_heads": 3, "opponent": "distributional", "opp_temperature": 0.5,
      "opp_floor": 0.1, "epsilon": 0.2, "beta": 0.5, "chance": {"name": "expand_all"}},
     "TreeStrap", {"outcome_weight": 0.5}, {"n_games": 2, "seed": 5}),
    ("sx-snake2-committed", "Snake", {"grid_size": 6, "food": 1, "max_ticks": 20}, {"loss": -1.0, "food": 1.0},
     "SelectiveExpectimax", {"expansion_budget": 8, "top_k": 2, "n_heads": 2}, "TreeStrap", {"gamma": 0.9},
     {"n_games": 2, "seed": 2}),
    # Committed(2) with 3 snakes, depth-capped searches (some end before their budget: the
    # decisions' draws then come between the other searches' rounds) and interior records
    ("sx-snake3-committed2-dist-depth2", "Snake", {"grid_size": 6, "food": 1, "max_ticks": 15, "num_snakes": 3},
     {"loss": -1.0, "food": 1.0, "win": 1.0}, "SelectiveExpectimax",
     {"expansion_budget": 6, "top_k": 2, "n_heads": 2, "opponent": "distributional", "opp_temperature": 0.5,
      "opp_floor": 0.1, "epsilon": 0.2, "max_depth": 2, "chance": {"name": "committed", "samples": 2}},
     "TreeStrap", {"interior_targets": True, "bootstrap_p": 0.7}, {"n_games": 2, "seed": 7}),
    ("sx-snake3-expandall-depth2", "Snake", {"grid_size": 6, "food": 1, "max_ticks": 20, "num_snakes": 3},
     {"loss": -1.0, "food": 1.0}, "SelectiveExpectimax",
     {"expansion_budget": 6, "top_k": 2, "n_heads": 2, "max_depth": 2, "epsilon": 0.1,
      "chance": {"name": "expand_all"}},
     "TreeStrap", {"interior_targets": True, "bootstrap_p": 0.5}, {"n_games": 2, "seed": 3}),
]  # fmt: skip


@pytest.mark.parametrize(
    "case", SIM_SX_CASES, ids=[c[0] if isinstance(c, tuple) else None for c in SIM_SX_CASES]
)
def test_sim_selexp_records_match_the_original(case):
    names, spec, ek = _search_spec(case, cb_seed=3)
    theirs = _orig_record_set(spec, 4, 60, names)
    ours = _record_set(_ours(dict(spec, engine=dict(ek)), 2, 40), names)
    assert sum(ours.values()) >= 40
    _assert_contained(ours, theirs, "records")


WINDOW_CASES = [
    # (num_snakes, n_games, floor): Snake DQN windows, whose records complete at episode ends.
    # Not every configuration matches window for window: 0.4.0 also keeps the completions of
    # decisions it had admitted before the floor was reached (4 snakes x 3 games, floor 60:
    # windows 1-4 equal, the 5th is 121 records there, 98 here).
    (3, 2, 100),
    (2, 4, 150),
]


@pytest.mark.parametrize("case", WINDOW_CASES, ids=[f"snake{c[0]}x{c[1]}" for c in WINDOW_CASES])
def test_simultaneous_dqn_windows_have_the_original_sizes(case):
    """A window stops at the lowest level whose completed records reach the floor and carries the
    rest over (0.4.0 stops admitting decisions at the floor): window sizes and the episodes each
    window reports equal the original's."""
    snakes, games, floor = case
    spec = {
        "mode": "engine",
        "ctor": "Snake",
        "kwargs": {"num_snakes": snakes, "grid_size": 10, "food": 1},
        "reward": {},
        "policy": "EpsilonGreedyQ",
        "policy_kwargs": {"epsilon": 0.3},
        "learner": "Dqn",
        "learner_kwargs": {},
        "engine": {"n_games": games, "seed": 2, "n_threads": 1},
        "fields": ["actions", "dones"],
        "cb_seed": 4,
    }
    theirs = run_orig(dict(spec, collects=5, floor=floor))
    ours = _ours(spec, 5, floor)
    assert [len(_decode(b["fields"])["actions"]) for b in theirs] == [len(b["fields"]["actions"]) for b in ours]
    # the episodes of each window (as a multiset: 0.4.0 lists two episodes that end at the same
    # level in completion order, this build by slot)
    assert [sorted(e[1] for e in b["episodes"]) for b in theirs] == [sorted(e[1] for e in b["episodes"]) for b in ours]
    for b in ours:  # a window's terminal records are those of the episodes it reports
        assert int(b["fields"]["dones"].sum()) == snakes * len(b["episodes"])
