"""Per-slot RNG kernels: determinism, ranges and distributions."""

from __future__ import annotations

import numpy as np

from reinfors.jit import rng as R


def _row(seed=0, a=0, b=0):
    r = np.zeros(R.RNG_WIDTH, np.uint64)
    R.seed_row(r, seed, a, b)
    return r


def test_streams_are_deterministic_and_distinct():
    a, b, c = _row(1, 2, 3), _row(1, 2, 3), _row(1, 2, 4)
    xs = [int(R.next_u64(a)) for _ in range(5)]
    assert xs == [int(R.next_u64(b)) for _ in range(5)]
    assert xs != [int(R.next_u64(c)) for _ in range(5)]
    assert R.derive(2**64 - 1, 0, 0) != R.derive(0, 0, 0)


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
