"""Differential tests: Texas Hold'em against reinfors==0.4.0 (side venv).

Seeded random legal playouts give the same button, hole cards and board in both builds (the
deal's chance draws are reproduced exactly), so active seats, legal sets, every seat's
observation, the inspection state (hidden cards included), events, rewards, done / ticks and
information-state keys are compared bit for bit on every tick.  Small stacks force all-ins and
run-outs; unequal blinds force odd split pots.  Skips cleanly without the side venv.
"""

from __future__ import annotations

import pytest

import reinfors as rf

from .harness import compare_outcomes, outcome, replay, run_orig

pytestmark = pytest.mark.differential

PLAYOUTS = [
    ({}, {}),
    ({"num_players": 2}, {"scale": 0.5}),
    ({"num_players": 3, "stack": 25}, {}),
    ({"num_players": 4, "stack": 40, "small_blind": 3, "big_blind": 10}, {"scale": -2.0}),
    ({"num_players": 9, "stack": 60, "small_blind": 1, "big_blind": 2}, {}),
    ({"num_players": 3, "stack": 10, "small_blind": 5, "big_blind": 10}, {}),
    ({"num_players": 2, "stack": 11, "small_blind": 10, "big_blind": 10}, {}),
    ({"num_players": 5, "stack": 1000, "small_blind": 7, "big_blind": 7}, {}),
]


@pytest.mark.parametrize("kwargs,reward", PLAYOUTS, ids=[f"holdem-{i}" for i in range(len(PLAYOUTS))])
def test_random_playouts_match(kwargs, reward):
    spec = {
        "ctor": "TexasHoldem",
        "kwargs": kwargs,
        "reward": reward,
        "seeds": list(range(6)),
        "episodes": 5,
        "max_steps": 200,
    }
    assert replay(spec) > 50
