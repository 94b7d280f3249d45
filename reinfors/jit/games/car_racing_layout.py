"""CarRacing constants and state-row layout, shared by the rules (``car_racing.py``) and the
rasteriser (``car_racing_render.py``); see ``car_racing.py`` for the layout diagram."""

from __future__ import annotations

import numpy as np

from reinfors.jit.games._contract import HEADER

# -- Gymnasium's constants -----------------------------------------------------------------------
SCALE = 6.0
TRACK_RAD = 900.0 / SCALE
PLAYFIELD = 2000.0 / SCALE
FPS = 50.0
DT = 1.0 / FPS
TRACK_DETAIL_STEP = 21.0 / SCALE
TRACK_TURN_RATE = 0.31
TRACK_WIDTH = 40.0 / SCALE
BORDER = 8.0 / SCALE
BORDER_MIN_COUNT = 4
CHECKPOINTS = 12
MAX_RAW = 2501  # generator steps (no_freeze = 2500)
MAX_TILES = 600  # longest accepted track (Gymnasium's stay under ~400)
MAX_TRIES = 64  # generator attempts before the circle fallback

SIZE = 0.02
ENGINE_POWER = 100000000.0 * SIZE * SIZE
WHEEL_MOI = 4000.0 * SIZE * SIZE
FRICTION_LIMIT = 1000000.0 * SIZE * SIZE
WHEEL_R = 27.0
WHEEL_W = 14.0
WHEELPOS = np.array([[-55.0, 80.0], [55.0, 80.0], [-55.0, -82.0], [55.0, -82.0]]) * SIZE
HULL_POLYS = (
    [(-60, +130), (+60, +130), (+60, +110), (-60, +110)],
    [(-15, +120), (+15, +120), (+20, +20), (-20, 20)],
    [(+25, +20), (+50, -10), (+50, -40), (+20, -90), (-20, -90), (-50, -40), (-50, -10), (-25, +20)],
    [(-50, -120), (+50, -120), (+50, -90), (-50, -90)],
)
WHEEL_POLY = [(-WHEEL_W, +WHEEL_R), (+WHEEL_W, +WHEEL_R), (+WHEEL_W, -WHEEL_R), (-WHEEL_W, -WHEEL_R)]


def _mass_props():
    """Mass, centre of mass (body frame) and inertia about it of the hull + 4 wheels."""
    parts = [(np.array(p, float) * SIZE, 1.0) for p in HULL_POLYS]
    for wx, wy in WHEELPOS:
        parts.append((np.array(WHEEL_POLY, float) * SIZE + (wx, wy), 0.1))
    m = 0.0
    c = np.zeros(2)
    i0 = 0.0  # about the body origin
    for poly, rho in parts:
        x, y = poly[:, 0], poly[:, 1]
        x1, y1 = np.roll(x, -1), np.roll(y, -1)
        cr = x * y1 - x1 * y
        a = cr.sum() / 2.0
        cx = ((x + x1) * cr).sum() / (6.0 * a)
        cy = ((y + y1) * cr).sum() / (6.0 * a)
        j = (cr * (x * x + x * x1 + x1 * x1 + y * y + y * y1 + y1 * y1)).sum() / 12.0
        m += rho * abs(a)
        c += rho * abs(a) * np.array([cx, cy])
        i0 += rho * abs(j)
    c /= m
    return m, c, i0 - m * float(c @ c)


MASS, _COM, INERTIA = _mass_props()
COM_X, COM_Y = float(_COM[0]), float(_COM[1])
# wheel offsets from the centre of mass (body frame)
WREL = np.ascontiguousarray(WHEELPOS - _COM)

# parameter row
P_LAP, P_MAX_TICKS = 0, 1

# state row
PENDING = HEADER
SEED = HEADER + 1
NT = HEADER + 2
VISITED = HEADER + 3
NEW_LAP = HEADER + 4
FALLBACK = HEADER + 5
OFF = HEADER + 6
NEWT = HEADER + 7
WTILE = HEADER + 8
FLT = HEADER + 12
F_X, F_Y, F_ANG, F_VX, F_VY, F_AV = range(FLT, FLT + 6)
F_WHEEL = FLT + 6
WW = 6
W_OMEGA, W_PHASE, W_GAS, W_BRAKE, W_STEER, W_JANG = range(WW)
F_SCORE = FLT + 30
TRK = FLT + 31
VIS = TRK + 3 * MAX_TILES
STATE_SIZE = VIS + MAX_TILES

V_VISITED, V_KERB, V_SIDE = 1, 2, 4
