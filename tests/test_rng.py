"""Per-slot RNG kernels: determinism, ranges and distributions."""

from __future__ import annotations

import numpy as np
from helpers import python_callable

from reinfors.jit import rng

R = python_callable(rng)  # the kernels under test are internal: Python calls them through njit shims


def _row(seed=0, a=0, b=0):
    r = np.zeros(R.RNG_WIDTH, np.uint64)
    R.seed_row(r, seed, a, b)
    return r


def test_streams_are_deterministic_and_distinct():
    a, b, c = _row(1, 2, 3), _row(1, 2, 3), _row(1, 2, 4)
    xs = [int(R.next_u64(a)) for _ in range(5)]
    assert xs == [int(R.next_u64(b)) for _ in range(5)]
    assert xs != [int(R.next_u64(c)) for _ in range(5)]
    assert R.derive(np.uint64(2**64 - 1), 0, 0) != R.derive(np.uint64(0), 0, 0)


def test_uniform_and_randbelow_ranges():
    r = _row(7)
    u = np.array([R.uniform(r) for _ in range(20000)])
    assert (u >= 0).all() and (u < 1).all()
    assert abs(u.mean() - 0.5) < 0.01
    k = np.array([R.randbelow(r, 7) for _ in range(70000)])
    counts = np.bincount(k, minlength=7)
    assert k.min() == 0 and k.max() == 6
    chi2 = ((counts - 10000) ** 2 / 10000).sum()
    assert chi2 < 30  # 6 dof; p ~ 4e-5
    assert R.randbelow(r, 1) == 0


def test_categorical_follows_weights_and_skips_zero():
    r = _row(3)
    p = np.array([0.0, 1.0, 3.0, 0.0])
    k = np.array([R.categorical(r, p, 4) for _ in range(40000)])
    assert set(np.unique(k)) == {1, 2}
    assert abs((k == 2).mean() - 0.75) < 0.01
    z = np.zeros(3)
    assert {R.categorical(r, z, 3) for _ in range(300)} == {0, 1, 2}


def test_gamma_and_dirichlet():
    r = _row(11)
    for alpha in (0.3, 1.0, 2.5):
        g = np.array([R.gamma(r, alpha) for _ in range(20000)])
        assert (g > 0).all()
        assert abs(g.mean() - alpha) < 0.05 * max(1.0, alpha)
    out = np.zeros(7)
    R.dirichlet(r, 0.3, out, 7)
    assert abs(out.sum() - 1.0) < 1e-12 and (out >= 0).all()


def test_mulhi64_matches_python_big_ints():
    rs = np.random.default_rng(0)
    for _ in range(2000):
        a, b = (int(x) for x in rs.integers(0, 2**64, size=2, dtype=np.uint64))
        assert int(R.mulhi64(np.uint64(a), np.uint64(b))) == (a * b) >> 64


def test_index_hi_is_the_original_chance_mapping():
    # SplitMix64 from the raw seed, high word of x * n (reinfors 0.4.0's Env chance stream).
    r = np.array([5], np.uint64)
    state = 5
    for n in (2, 3, 7, 24, 400):
        state = (state + 0x9E3779B97F4A7C15) % 2**64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2**64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2**64
        z ^= z >> 31
        assert R.index_hi(r, n) == (z * n) >> 64


def test_sample_chance_uniform_over_positive_outcomes():
    r = np.array([9], np.uint64)
    p = np.array([0.0, 0.5, 0.0, 0.5])
    ks = {R.sample_chance(r, p, 4) for _ in range(200)}
    assert ks == {1, 3}
