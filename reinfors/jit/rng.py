"""Counter-based per-slot random numbers on explicit ``uint64`` state rows.

There is no global RNG inside reinfors kernels: every consumer owns a state row
``rng: [RNG_WIDTH] uint64`` (a slot's row of a ``[n_slots, RNG_WIDTH]`` array, or an Env's own
row) and passes it in.  Results therefore depend only on the row, never on which thread ran the
kernel or when.

The generator is SplitMix64 (Steele, Lea & Flood 2014): one 64-bit counter advanced by the
golden-ratio increment, output through a 64-bit finaliser.  ``derive(seed, a, b)`` builds
independent streams for ``(seed, slot, episode)``-style coordinates by mixing them through the
same finaliser.

All arithmetic is explicit ``uint64``: Numba silently promotes ``uint64 op int64`` to ``int64``
(and then ``w >> 63`` is ``-1``), so every constant below is a ``np.uint64``.
"""

from __future__ import annotations

import numpy as np

from ._compile import kernel, leaf

RNG_WIDTH = 1  # uint64 words per state row

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_ONE = np.uint64(1)
_INV53 = 1.0 / 9007199254740992.0  # 2**-53


@leaf()
def mix64(z):
    """SplitMix64 finaliser: a bijective 64-bit mix of ``z`` (uint64 → uint64)."""
    z = np.uint64(z)
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@leaf(entry=True)
def derive(seed, a, b):
    """Stream start for coordinates ``(seed, a, b)``; distinct coordinates give independent streams."""
    z = mix64(np.uint64(seed) ^ _GOLDEN)
    z = mix64(z ^ (np.uint64(a) * _M1 + _GOLDEN))
    return mix64(z ^ (np.uint64(b) * _M2 + _ONE))


@leaf(entry=True)
def seed_row(rng, seed, a, b):
    """Write the start of stream ``(seed, a, b)`` into ``rng: [RNG_WIDTH] uint64`` (in place)."""
    rng[0] = derive(seed, a, b)


@leaf()
def next_u64(rng):
    """Advance ``rng`` (in place) and return the next uniformly distributed ``uint64``."""
    s = rng[0] + _GOLDEN
    rng[0] = s
    return mix64(s)


@leaf()
def uniform(rng):
    """A float64 uniform on ``[0, 1)`` with 53 random bits; advances ``rng``."""
    return np.float64(next_u64(rng) >> _S11) * _INV53


_MASK32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)


@leaf()
def mulhi64(a, b):
    """High 64 bits of the 128-bit product ``a * b`` of two uint64 values."""
    a = np.uint64(a)
    b = np.uint64(b)
    a_lo = a & _MASK32
    a_hi = a >> _S32
    b_lo = b & _MASK32
    b_hi = b >> _S32
    lo_lo = a_lo * b_lo
    hi_lo = a_hi * b_lo
    lo_hi = a_lo * b_hi
    hi_hi = a_hi * b_hi
    cross = (lo_lo >> _S32) + (hi_lo & _MASK32) + lo_hi
    return hi_hi + (hi_lo >> _S32) + (cross >> _S32)


@leaf()
def index_hi(rng, n):
    """A uniform index in ``[0, n)`` as the high word of ``next_u64() * n`` (one draw).

    This is the range mapping of reinfors 0.4.0's chance stream (SplitMix64 seeded with the raw
    seed), so games that draw chance through it reproduce the original's deals and placements.
    Bias is below ``n / 2**64``.
    """
    return np.int64(mulhi64(next_u64(rng), np.uint64(n)))


@leaf(entry=True)
def randbelow(rng, n):
    """A uniform integer in ``[0, n)`` for ``n >= 1`` (Lemire's unbiased rejection); advances ``rng``."""
    un = np.uint64(n)
    if un <= _ONE:
        return 0
    # threshold = 2**64 mod n, computed without 128-bit arithmetic.
    threshold = (np.uint64(0) - un) % un
    while True:
        x = next_u64(rng)
        if x >= threshold:
            return np.int64(x % un)


@kernel
def categorical(rng, probs, n):
    """Sample an index in ``[0, n)`` with weights ``probs[:n]`` (non-negative, any scale).

    Falls back to the last positive-weight index when rounding leaves the draw unassigned, and to a
    uniform draw when every weight is zero.
    """
    total = 0.0
    for i in range(n):
        total += probs[i]
    if not total > 0.0:
        return randbelow(rng, n)
    u = uniform(rng) * total
    acc = 0.0
    last = 0
    for i in range(n):
        if probs[i] > 0.0:
            last = i
            acc += probs[i]
            if u < acc:
                return i
    return last


@kernel
def sample_chance(rng, probs, n):
    """Draw one outcome of a chance node with weights ``probs[:n]``.

    Uniform nodes (every positive weight equal) take the ``index_hi`` draw over the positive
    outcomes in order — one draw, exactly as the original engine's chance stream; other nodes
    use inverse-CDF sampling (:func:`categorical`).
    """
    first = -1.0
    uniform_node = True
    count = 0
    for i in range(n):
        p = probs[i]
        if p > 0.0:
            if first < 0.0:
                first = p
            elif p != first:
                uniform_node = False
            count += 1
    if count == 0:
        return index_hi(rng, n)
    if not uniform_node:
        return categorical(rng, probs, n)
    k = index_hi(rng, count)
    for i in range(n):
        if probs[i] > 0.0:
            if k == 0:
                return i
            k -= 1
    return n - 1


_MIN_POSITIVE = 2.2250738585072014e-308
_TWO_PI = 2.0 * np.pi


@kernel
def standard_normal(rng):
    """A standard normal draw: Box-Muller, one value per call (two uniforms, nothing cached) —
    reinfors 0.4.0's sampler, so its Dirichlet root noise reproduces bit for bit."""
    u1 = max(uniform(rng), _MIN_POSITIVE)
    u2 = uniform(rng)
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(_TWO_PI * u2)


@kernel
def _gamma_ge1(rng, alpha):
    """A Gamma(alpha, 1) draw for ``alpha >= 1`` (Marsaglia & Tsang 2000, the original's form:
    float powers, ``u`` clamped to the smallest positive double)."""
    d = alpha - 1.0 / 3.0
    c = 1.0 / np.sqrt(9.0 * d)
    while True:
        x = standard_normal(rng)
        v = (1.0 + c * x) ** 3.0
        if v <= 0.0:
            continue
        u = max(uniform(rng), _MIN_POSITIVE)
        if u < 1.0 - 0.0331 * x**4.0 or np.log(u) < 0.5 * x * x + d * (1.0 - v + np.log(v)):
            return d * v


@kernel
def gamma(rng, alpha):
    """A Gamma(alpha, 1) draw for ``alpha > 0``; ``alpha < 1`` draws ``u`` first, then boosts a
    Gamma(alpha + 1) draw by ``u**(1/alpha)``."""
    if alpha >= 1.0:
        return _gamma_ge1(rng, alpha)
    u = max(uniform(rng), _MIN_POSITIVE)
    return _gamma_ge1(rng, alpha + 1.0) * u ** (1.0 / alpha)


@kernel
def dirichlet(rng, alpha, out, n):
    """Write a symmetric Dirichlet(alpha) draw of size ``n`` into ``out[:n]`` (float64, in place):
    ``n`` gamma draws in order, divided by their sequential sum (uniform if it is not > 0)."""
    total = 0.0
    for i in range(n):
        g = gamma(rng, alpha)
        out[i] = g
        total += g
    if total > 0.0:
        for i in range(n):
            out[i] = out[i] / total
    else:
        for i in range(n):
            out[i] = 1.0 / n
