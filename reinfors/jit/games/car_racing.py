"""CarRacing: one car drives a procedurally generated closed track (Gymnasium's ``CarRacing-v3``
with its 5 discrete controls), as reinfors 0.4.0 ships it.

Track (``_gen_track``): Gymnasium's generator.  12 checkpoints at angles
``2 pi c / 12 + U(0, 2 pi / 12)`` and radii ``U(50, 150)`` (checkpoints 0 and 11 pinned at radius
225, angles 0 and 330 deg); a point walks from ``(225, 0)`` in steps of ``21/6`` turning toward the
next checkpoint (rate <= 0.31 rad per step) for up to 5 laps / 2500 steps; the second full lap
past the start angle ``-15 deg`` becomes the track, kept only when its ends glue within one step
(else the generator draws again from the same stream).  Each point ``i`` gives a road tile (the
quad between points ``i-1`` and ``i``, half width ``40/6``) and, on hard turns (4 consecutive
heading changes > 0.062 rad, one sign), a red/white kerb of width ``8/6`` on the outer side.
The generator's uniforms come from a SplitMix64 stream started at the episode's 32-bit track
seed (the chance outcome drawn at reset, ``index_hi(2**32 - 1)`` as the original); the
original's own track generator could not be reproduced (see docs/original-0.4.0/car_racing.md).

Car (``_physics``): Gymnasium's ``car_dynamics`` (4 wheels; engine power 40000, wheel inertia
1.6, friction limit 400 on road / 240 on grass, gas ramps by 0.1 per tick on the rear wheels,
brake 0.8, steering motor to +-0.6 clamped to the joint's +-0.4 rad), the hull and wheels
integrated as ONE rigid body (mass and inertia of Gymnasium's fixtures, density 1 / 0.1) with
Box2D's semi-implicit Euler at 50 ticks/s, in place of Box2D's joint solver.  Actions:
``0`` nothing, ``1`` steer -0.6, ``2`` steer +0.6, ``3`` gas 0.2, ``4`` brake 0.8.

Tiles: a wheel touching an unvisited tile (a corner of its rectangle inside the tile, for
Box2D's sensor overlap) visits it (``tile`` amount ``1/N`` per tile, ``N`` tiles); touching tile
0 with more than ``lap_complete_percent`` of the tiles visited sets ``new_lap``.  The episode
ends (terminal) on ``new_lap``, when every tile is visited, or when the hull leaves the
``|x|, |y| <= 2000/6`` playfield (that tick's amounts are ``off_playfield`` 1 only, as
Gymnasium's ``step_reward = -100``).  ``step`` is 1 every tick.

Parameter row (``int64``): ``0 lap_complete_percent (float64 bits)  1 max_ticks (u64, 0 = None)``.

State row (``int64``; words past ``FLT`` hold float64 bit patterns, read through a float64 view)::

    HEADER+0 PENDING   1 until the track seed is drawn     +1 SEED      32-bit track seed
    HEADER+2 NT        tiles in the track                  +3 VISITED   tiles visited
    HEADER+4 NEW_LAP   lap completed                       +5 FALLBACK  circle track used
    HEADER+6 OFF       left the playfield (this tick)      +7 NEWT      tiles first visited this tick
    HEADER+8 … +11     a tile each wheel touches (-1: on grass)
    FLT + 0 … 5        hull origin x, y, angle, COM velocity vx, vy, angular velocity
    FLT + 6 + 6 w …    wheel w: omega, phase, gas, brake, steer, joint angle
    FLT + 30           cumulative reward (the on-screen score)
    TRK + 3 i …        point i of the track: x, y, beta (heading angle)
    VIS + i            tile i: bit 0 visited, bit 1 kerb, bit 2 kerb side is +1

Encoders: ``car_racing_pixels`` (default, ``(3, 96, 96)`` raw 0-255, channel-major) renders the
frame (``car_racing_render.py``); ``car_racing_vec`` ``(1, 1, 21)``: x/333.3, y/333.3, cos, sin of
the hull angle, vx/300, vy/300, angular velocity, per wheel (omega/100, on road), the two front
wheels' steer commands, tiles visited / N, tick/1000, fallback_track, speed/300.
"""

from __future__ import annotations

import math

import numpy as np

from reinfors._validate import as_float, as_unsigned
from reinfors.jit import rng as _rng
from reinfors.jit._compile import kernel
from reinfors.jit.games._contract import HEADER, TICKS, engine_horizon, u64_word, word_u64
from reinfors.jit.games.car_racing_layout import (  # noqa: F401
    BORDER,
    BORDER_MIN_COUNT,
    CHECKPOINTS,
    COM_X,
    COM_Y,
    DT,
    ENGINE_POWER,
    F_ANG,
    F_AV,
    F_SCORE,
    F_VX,
    F_VY,
    F_WHEEL,
    F_X,
    F_Y,
    FALLBACK,
    FLT,
    FPS,
    FRICTION_LIMIT,
    HULL_POLYS,
    INERTIA,
    MASS,
    MAX_RAW,
    MAX_TILES,
    MAX_TRIES,
    NEW_LAP,
    NEWT,
    NT,
    OFF,
    P_LAP,
    P_MAX_TICKS,
    PENDING,
    PLAYFIELD,
    SCALE,
    SEED,
    SIZE,
    STATE_SIZE,
    TRACK_DETAIL_STEP,
    TRACK_RAD,
    TRACK_TURN_RATE,
    TRACK_WIDTH,
    TRK,
    V_KERB,
    V_SIDE,
    V_VISITED,
    VIS,
    VISITED,
    W_BRAKE,
    W_GAS,
    W_JANG,
    W_OMEGA,
    W_PHASE,
    W_STEER,
    WHEEL_MOI,
    WHEEL_POLY,
    WHEEL_R,
    WHEEL_W,
    WHEELPOS,
    WREL,
    WTILE,
    WW,
)
from reinfors.jit.games.car_racing_render import render as encode

NAME = "car_racing"
N_ACTIONS = 5
SIMULTANEOUS = False
REWARD_KEYS = ("tile", "step", "off_playfield")
REWARD_DEFAULTS = (1000.0, -0.1, -100.0)
K_TILE, K_STEP, K_OFF = 0, 1, 2
CHANCE_IN_STEP = False  # the track seed is drawn at reset only
REVISION = 1



# ---------------------------------------------------------------------------------------------
# Python side
# ---------------------------------------------------------------------------------------------


def _f64_word(x: float) -> int:
    return int(np.array([x], np.float64).view(np.int64)[0])


def _word_f64(w) -> float:
    return float(np.array([w], np.int64).view(np.float64)[0])


def _rust_float(x: float) -> str:
    """Rust's ``{}`` of an f64 (``NaN``, ``inf``, shortest digits, never an exponent)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return np.format_float_positional(x, unique=True, trim="-")


def make_params(lap_complete_percent=0.95, max_ticks=1000) -> np.ndarray:
    """Convert (pyo3's order and types), validate (the original's wording) and pack."""
    lap = as_float("lap_complete_percent", lap_complete_percent, finite=False)
    max_ticks = None if max_ticks is None else as_unsigned("max_ticks", max_ticks)
    if max_ticks is not None and max_ticks < 1:
        raise ValueError("max_ticks must be >= 1 (or None to never truncate)")
    if not 0.0 <= lap <= 1.0:
        raise ValueError(f"lap_complete_percent must be in [0, 1], got {_rust_float(lap)}")
    return np.array([_f64_word(lap), u64_word(0 if max_ticks is None else max_ticks)], np.int64)


def resolved(params) -> dict:
    max_ticks = word_u64(params[P_MAX_TICKS])
    return {
        "lap_complete_percent": _word_f64(params[P_LAP]),
        "max_ticks": max_ticks or None,
        "revision": REVISION,
    }


def n_players(params) -> int:
    return 1


def state_size(params) -> int:
    return STATE_SIZE


def obs_shape(params) -> tuple:
    return (3, 96, 96)


def vec_shape(params) -> tuple:
    return (1, 1, 21)


def horizon(params) -> int:
    """The engine's truncation horizon (0 = None)."""
    return engine_horizon(params[P_MAX_TICKS])


def truncation_horizon(params) -> int | None:
    return resolved(params)["max_ticks"]


def max_chance(params) -> int:
    return 1  # the seed node is uniform over 2**32 - 1 outcomes, drawn through chance_uniform


def inspect(params, state) -> dict:
    f = state.view(np.float64)
    vx, vy = float(f[F_VX]), float(f[F_VY])
    return {
        "pending": bool(state[PENDING]),
        "seed": int(state[SEED]),
        "tick": int(state[TICKS]),
        "tiles_visited": int(state[VISITED]),
        "total_tiles": int(state[NT]),
        "hull_position": (float(np.float32(f[F_X])), float(np.float32(f[F_Y]))),
        "hull_angle": float(np.float32(f[F_ANG])),
        "speed": math.hypot(vx, vy),
        "new_lap": bool(state[NEW_LAP]),
        "done": bool(state[1] != 0),
        "fallback_track": bool(state[FALLBACK]),
    }


def events(params, state, amounts) -> list:
    """Every tick: ``[(0, {'new_tiles', 'total_tiles', 'off_playfield'})]``."""
    return [(0, {"new_tiles": int(state[NEWT]), "total_tiles": int(state[NT]), "off_playfield": bool(state[OFF])})]


def validate_state(params, state) -> str | None:
    """``None`` for a consistent row, else the reason (rejects forged snapshots)."""
    if state[PENDING] not in (0, 1):
        return "pending flag must be 0 or 1"
    if state[PENDING]:
        return "track seed still pending"
    nt = int(state[NT])
    if not 4 <= nt <= MAX_TILES:
        return f"tile count {nt} out of range"
    if not 0 <= int(state[SEED]) < 2**32:
        return "track seed out of range"
    for w in (NEW_LAP, FALLBACK, OFF):
        if state[w] not in (0, 1):
            return "flags must be 0 or 1"
    vis = state[VIS : VIS + nt]
    if ((vis < 0) | (vis > 7)).any() or (state[VIS + nt : VIS + MAX_TILES] != 0).any():
        return "tile words malformed"
    if int(state[VISITED]) != int(np.count_nonzero(vis & V_VISITED)):
        return "visited count disagrees with the tiles"
    if not (0 <= state[NEWT] <= nt) or ((state[WTILE : WTILE + 4] < -1) | (state[WTILE : WTILE + 4] >= nt)).any():
        return "tile indices out of range"
    f = state.view(np.float64)
    if not np.isfinite(f[FLT : TRK + 3 * nt]).all():
        return "non-finite car or track values"
    return None


# ---------------------------------------------------------------------------------------------
# Track generation
# ---------------------------------------------------------------------------------------------


@kernel
def _gen_track(rngrow, raw, out):
    """One attempt of Gymnasium's ``_create_track`` with uniforms from ``rngrow``.

    Parameters
    ----------
    rngrow : [1] uint64, advanced in place.
    raw : [MAX_RAW, 4] float64 scratch (alpha, beta, x, y per generator step).
    out : [MAX_TILES, 3] float64, receives (x, y, beta) of the accepted loop.

    Returns the tile count, or 0 when the attempt fails (no loop, bad glue, too long).
    """
    cps = np.empty((CHECKPOINTS, 3))
    two_pi = 2.0 * math.pi
    for c in range(CHECKPOINTS):
        noise = _rng.uniform(rngrow) * (two_pi / CHECKPOINTS)
        alpha = two_pi * c / CHECKPOINTS + noise
        rad = TRACK_RAD / 3.0 + _rng.uniform(rngrow) * (TRACK_RAD - TRACK_RAD / 3.0)
        if c == 0:
            alpha = 0.0
            rad = 1.5 * TRACK_RAD
        if c == CHECKPOINTS - 1:
            alpha = two_pi * c / CHECKPOINTS
            rad = 1.5 * TRACK_RAD
        cps[c, 0] = alpha
        cps[c, 1] = rad * math.cos(alpha)
        cps[c, 2] = rad * math.sin(alpha)
    start_alpha = two_pi * (-0.5) / CHECKPOINTS
    x = 1.5 * TRACK_RAD
    y = 0.0
    beta = 0.0
    dest_i = 0
    laps = 0
    n = 0
    no_freeze = 2500
    other_side = False
    dest_x = 0.0
    dest_y = 0.0
    while True:
        alpha = math.atan2(y, x)
        if other_side and alpha > 0:
            laps += 1
            other_side = False
        if alpha < 0:
            other_side = True
            alpha += two_pi
        while True:
            failed = True
            while True:
                k = dest_i % CHECKPOINTS
                dest_x = cps[k, 1]
                dest_y = cps[k, 2]
                if alpha <= cps[k, 0]:
                    failed = False
                    break
                dest_i += 1
                if dest_i % CHECKPOINTS == 0:
                    break
            if not failed:
                break
            alpha -= two_pi
        r1x = math.cos(beta)
        r1y = math.sin(beta)
        p1x = -r1y
        p1y = r1x
        proj = r1x * (dest_x - x) + r1y * (dest_y - y)
        while beta - alpha > 1.5 * math.pi:
            beta -= two_pi
        while beta - alpha < -1.5 * math.pi:
            beta += two_pi
        prev_beta = beta
        proj *= SCALE
        if proj > 0.3:
            beta -= min(TRACK_TURN_RATE, abs(0.001 * proj))
        if proj < -0.3:
            beta += min(TRACK_TURN_RATE, abs(0.001 * proj))
        x += p1x * TRACK_DETAIL_STEP
        y += p1y * TRACK_DETAIL_STEP
        raw[n, 0] = alpha
        raw[n, 1] = prev_beta * 0.5 + beta * 0.5
        raw[n, 2] = x
        raw[n, 3] = y
        n += 1
        if laps > 4:
            break
        no_freeze -= 1
        if no_freeze == 0:
            break
    i1 = -1
    i2 = -1
    i = n
    while True:
        i -= 1
        if i == 0:
            return 0
        through = raw[i, 0] > start_alpha and raw[i - 1, 0] <= start_alpha
        if through and i2 == -1:
            i2 = i
        elif through and i1 == -1:
            i1 = i
            break
    nt = i2 - 1 - i1
    if nt < 4 or nt > MAX_TILES:
        return 0
    for j in range(nt):
        out[j, 0] = raw[i1 + j, 2]
        out[j, 1] = raw[i1 + j, 3]
        out[j, 2] = raw[i1 + j, 1]
    fb = out[0, 2]
    gx = math.cos(fb) * (out[0, 0] - out[nt - 1, 0])
    gy = math.sin(fb) * (out[0, 1] - out[nt - 1, 1])
    if math.sqrt(gx * gx + gy * gy) > TRACK_DETAIL_STEP:
        return 0
    return nt


@kernel
def _build(state, seed):
    """Generate the track of ``seed`` into ``state`` (retries, then the circle fallback)."""
    f = state.view(np.float64)
    rngrow = np.empty(1, np.uint64)
    rngrow[0] = np.uint64(seed)
    raw = np.empty((MAX_RAW, 4))
    out = np.empty((MAX_TILES, 3))
    nt = 0
    for _ in range(MAX_TRIES):
        nt = _gen_track(rngrow, raw, out)
        if nt > 0:
            break
    state[FALLBACK] = 0
    if nt == 0:  # a circle of radius 1.5 * TRACK_RAD, driven counter-clockwise
        state[FALLBACK] = 1
        nt = int(2.0 * math.pi * 1.5 * TRACK_RAD / TRACK_DETAIL_STEP)
        for j in range(nt):
            a = 2.0 * math.pi * j / nt
            out[j, 0] = 1.5 * TRACK_RAD * math.cos(a)
            out[j, 1] = 1.5 * TRACK_RAD * math.sin(a)
            out[j, 2] = a
    state[NT] = nt
    for j in range(nt):
        f[TRK + 3 * j] = out[j, 0]
        f[TRK + 3 * j + 1] = out[j, 1]
        f[TRK + 3 * j + 2] = out[j, 2]
    for j in range(MAX_TILES):
        state[VIS + j] = 0
    # kerbs on hard turns (Python's negative indices wrap)
    for i in range(nt):
        good = True
        oneside = 0
        for neg in range(BORDER_MIN_COUNT):
            b1 = out[(i - neg) % nt, 2]
            b2 = out[(i - neg - 1) % nt, 2]
            good = good and abs(b1 - b2) > TRACK_TURN_RATE * 0.2
            oneside += 1 if b1 > b2 else (-1 if b1 < b2 else 0)
        if good and abs(oneside) == BORDER_MIN_COUNT:
            state[VIS + i] |= 8  # scratch: kerb seed
    for i in range(nt):
        if state[VIS + i] & 8:
            for neg in range(BORDER_MIN_COUNT):
                state[VIS + (i - neg) % nt] |= V_KERB
    for i in range(nt):
        state[VIS + i] &= V_KERB
        if state[VIS + i] & V_KERB and out[(i - 1) % nt, 2] > out[i, 2]:
            state[VIS + i] |= V_SIDE
    return nt


# ---------------------------------------------------------------------------------------------
# Rules
# ---------------------------------------------------------------------------------------------


@kernel(entry=True)
def init(params, state):
    """No track yet: the 32-bit track seed is a pending chance node."""
    for i in range(HEADER, STATE_SIZE):
        state[i] = 0
    state[PENDING] = 1
    for w in range(4):
        state[WTILE + w] = -1


@kernel(entry=True)
def chance_pending(params, state):
    return state[PENDING] != 0


@kernel(entry=True)
def chance_uniform(params, state):
    return 4294967295  # u32::MAX equally likely seeds, one index_hi draw (the original's)


@kernel(entry=True)
def chance_outcomes(params, state, probs):
    """The fan is far too wide to enumerate: searches never meet it (``CHANCE_IN_STEP`` False);
    enumerating callers get the single outcome 0."""
    probs[0] = 1.0
    return 1


@kernel(entry=True)
def apply_chance(params, state, outcome):
    """Build the track of seed ``outcome`` and park the car on its first point."""
    f = state.view(np.float64)
    state[SEED] = outcome
    _build(state, outcome)
    state[PENDING] = 0
    f[F_X] = f[TRK]
    f[F_Y] = f[TRK + 1]
    f[F_ANG] = f[TRK + 2]
    for i in range(F_VX, TRK):
        f[i] = 0.0
    _contacts(params, state, f)  # Gymnasium's reset step: the wheels touch their first tiles
    f[F_SCORE] = 1000.0 * state[VISITED] / state[NT]  # shown on screen, never paid as a reward
    state[NEWT] = 0
    state[OFF] = 0


@kernel(entry=True)
def legal(params, state, agent, mask):
    for a in range(N_ACTIONS):
        mask[a] = 1
    return N_ACTIONS


@kernel(entry=True)
def active(params, state, out):
    out[0] = 0
    return 1


@kernel
def _in_tile(f, state, i, px, py):
    """True when ``(px, py)`` lies inside road tile ``i`` (the quad between points i-1 and i)."""
    nt = state[NT]
    j = (i - 1) % nt
    x1 = f[TRK + 3 * i]
    y1 = f[TRK + 3 * i + 1]
    b1 = f[TRK + 3 * i + 2]
    x2 = f[TRK + 3 * j]
    y2 = f[TRK + 3 * j + 1]
    b2 = f[TRK + 3 * j + 2]
    qx = np.empty(4)
    qy = np.empty(4)
    qx[0] = x1 - TRACK_WIDTH * math.cos(b1)
    qy[0] = y1 - TRACK_WIDTH * math.sin(b1)
    qx[1] = x1 + TRACK_WIDTH * math.cos(b1)
    qy[1] = y1 + TRACK_WIDTH * math.sin(b1)
    qx[2] = x2 + TRACK_WIDTH * math.cos(b2)
    qy[2] = y2 + TRACK_WIDTH * math.sin(b2)
    qx[3] = x2 - TRACK_WIDTH * math.cos(b2)
    qy[3] = y2 - TRACK_WIDTH * math.sin(b2)
    pos = 0
    neg = 0
    for k in range(4):
        k2 = (k + 1) % 4
        c = (qx[k2] - qx[k]) * (py - qy[k]) - (qy[k2] - qy[k]) * (px - qx[k])
        if c > 0:
            pos += 1
        elif c < 0:
            neg += 1
    return pos == 0 or neg == 0


@kernel
def _contacts(params, state, f):
    """Tiles touched by each wheel (a corner of the wheel's rectangle inside the tile, for
    Box2D's sensor overlap): visit the unvisited ones, note whether the wheel is on the road.
    Returns the tiles newly visited."""
    nt = state[NT]
    lap = params.view(np.float64)[P_LAP]
    ang = f[F_ANG]
    ca = math.cos(ang)
    sa = math.sin(ang)
    new = 0
    for w in range(4):
        ox = f[F_X] + ca * WHEELPOS[w, 0] - sa * WHEELPOS[w, 1]
        oy = f[F_Y] + sa * WHEELPOS[w, 0] + ca * WHEELPOS[w, 1]
        wa = ang + f[F_WHEEL + WW * w + W_JANG]
        wc = math.cos(wa)
        ws = math.sin(wa)
        touched = -1
        for i in range(nt):
            dx = f[TRK + 3 * i] - ox
            dy = f[TRK + 3 * i + 1] - oy
            if dx * dx + dy * dy > 81.0:
                continue
            hit = False
            for k in range(4):
                hx = WHEEL_W * SIZE if k == 1 or k == 2 else -WHEEL_W * SIZE
                hy = WHEEL_R * SIZE if k < 2 else -WHEEL_R * SIZE
                if _in_tile(f, state, i, ox + wc * hx - ws * hy, oy + ws * hx + wc * hy):
                    hit = True
                    break
            if not hit:
                continue
            touched = i
            if state[VIS + i] & V_VISITED == 0:
                state[VIS + i] |= V_VISITED
                state[VISITED] += 1
                new += 1
                if i == 0 and state[VISITED] / nt > lap:
                    state[NEW_LAP] = 1
        state[WTILE + w] = touched
    return new


@kernel
def _physics(params, state, f, action):
    """One tick of Gymnasium's car dynamics on the rigid-body car (in place)."""
    # controls (Car.steer / gas / brake)
    steer = -0.6 if action == 1 else (0.6 if action == 2 else 0.0)
    gas = 0.2 if action == 3 else 0.0
    brake = 0.8 if action == 4 else 0.0
    for w in range(4):
        b = F_WHEEL + WW * w
        f[b + W_BRAKE] = brake
        if w < 2:
            f[b + W_STEER] = steer
        else:
            d = gas - f[b + W_GAS]
            if d > 0.1:
                d = 0.1
            f[b + W_GAS] += d
    ang = f[F_ANG]
    ca = math.cos(ang)
    sa = math.sin(ang)
    vx = f[F_VX]
    vy = f[F_VY]
    av = f[F_AV]
    fx_sum = 0.0
    fy_sum = 0.0
    torque = 0.0
    for w in range(4):
        b = F_WHEEL + WW * w
        # steering motor on the joint angle (limits +-0.4)
        ja = f[b + W_JANG]
        diff = f[b + W_STEER] - ja
        speed = min(50.0 * abs(diff), 3.0)
        ja += (speed if diff > 0 else (-speed if diff < 0 else 0.0)) * DT
        ja = min(max(ja, -0.4), 0.4)
        f[b + W_JANG] = ja
        friction_limit = FRICTION_LIMIT * (1.0 if state[WTILE + w] >= 0 else 0.6)
        wa = ang + ja
        forw_x = -math.sin(wa)
        forw_y = math.cos(wa)
        side_x = math.cos(wa)
        side_y = math.sin(wa)
        rx = ca * WREL[w, 0] - sa * WREL[w, 1]
        ry = sa * WREL[w, 0] + ca * WREL[w, 1]
        wvx = vx - av * ry
        wvy = vy + av * rx
        vf = forw_x * wvx + forw_y * wvy
        vs = side_x * wvx + side_y * wvy
        om = f[b + W_OMEGA]
        om += DT * ENGINE_POWER * f[b + W_GAS] / WHEEL_MOI / (abs(om) + 5.0)
        br = f[b + W_BRAKE]
        if br >= 0.9:
            om = 0.0
        elif br > 0:
            val = 15.0 * br
            if abs(val) > abs(om):
                val = abs(om)
            om += (-1.0 if om > 0 else (1.0 if om < 0 else 0.0)) * val
        f[b + W_PHASE] += om * DT
        vr = om * WHEEL_R * SIZE
        f_force = (-vf + vr) * 205000.0 * SIZE * SIZE
        p_force = -vs * 205000.0 * SIZE * SIZE
        force = math.sqrt(f_force * f_force + p_force * p_force)
        if abs(force) > friction_limit:
            f_force = f_force / force * friction_limit
            p_force = p_force / force * friction_limit
        om -= DT * f_force * WHEEL_R * SIZE / WHEEL_MOI
        f[b + W_OMEGA] = om
        fx = p_force * side_x + f_force * forw_x
        fy = p_force * side_y + f_force * forw_y
        fx_sum += fx
        fy_sum += fy
        torque += rx * fy - ry * fx
    # semi-implicit Euler on the centre of mass
    vx += DT * fx_sum / MASS
    vy += DT * fy_sum / MASS
    av += DT * torque / INERTIA
    cx = f[F_X] + ca * COM_X - sa * COM_Y + DT * vx
    cy = f[F_Y] + sa * COM_X + ca * COM_Y + DT * vy
    ang += DT * av
    ca = math.cos(ang)
    sa = math.sin(ang)
    f[F_X] = cx - (ca * COM_X - sa * COM_Y)
    f[F_Y] = cy - (sa * COM_X + ca * COM_Y)
    f[F_ANG] = ang
    f[F_VX] = vx
    f[F_VY] = vy
    f[F_AV] = av


@kernel(entry=True)
def step(params, state, actions, amounts):
    """Controls, physics, tile contacts, then Gymnasium's step reward and termination."""
    f = state.view(np.float64)
    _physics(params, state, f, actions[0])
    new = _contacts(params, state, f)
    state[NEWT] = new
    off = abs(f[F_X]) > PLAYFIELD or abs(f[F_Y]) > PLAYFIELD
    state[OFF] = 1 if off else 0
    nt = state[NT]
    f[F_SCORE] += 1000.0 * new / nt - 0.1  # the on-screen score: Gymnasium's own running reward
    if off:
        amounts[0, K_OFF] += 1.0
    else:
        amounts[0, K_TILE] += new / nt
        amounts[0, K_STEP] += 1.0


@kernel(entry=True)
def is_terminal(params, state):
    return state[PENDING] == 0 and (state[OFF] != 0 or state[NEW_LAP] != 0 or state[VISITED] == state[NT])


@kernel(entry=True)
def encode_vec(params, state, agent, out):
    """``car_racing_vec``: ``out: [21] float32`` (layout in the module docstring)."""
    f = state.view(np.float64)
    for i in range(21):
        out[i] = 0.0
    if state[PENDING]:
        return
    out[0] = f[F_X] / PLAYFIELD
    out[1] = f[F_Y] / PLAYFIELD
    out[2] = math.cos(f[F_ANG])
    out[3] = math.sin(f[F_ANG])
    out[4] = f[F_VX] / 300.0
    out[5] = f[F_VY] / 300.0
    out[6] = f[F_AV]
    for w in range(4):
        out[7 + 2 * w] = f[F_WHEEL + WW * w + W_OMEGA] / 100.0
        out[8 + 2 * w] = 1.0 if state[WTILE + w] >= 0 else 0.0
    out[15] = f[F_WHEEL + W_STEER]
    out[16] = f[F_WHEEL + WW + W_STEER]
    out[17] = state[VISITED] / state[NT]
    out[18] = state[TICKS] / 1000.0
    out[19] = 1.0 if state[FALLBACK] else 0.0  # 0 in every 0.4.0 probe (new_lap, off-playfield too)
    out[20] = math.sqrt(f[F_VX] * f[F_VX] + f[F_VY] * f[F_VY]) / 300.0


DEFAULT_ENCODER = "car_racing_pixels"
ENCODERS = {
    "car_racing_pixels": (encode, obs_shape, 0.0, 255.0),
    "car_racing_vec": (encode_vec, vec_shape, -math.inf, math.inf),
}
ENCODER_REVISIONS = {"car_racing_pixels": 2, "car_racing_vec": 1}
