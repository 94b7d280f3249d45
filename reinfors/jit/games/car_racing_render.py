"""CarRacing's ``car_racing_pixels`` encoder: an njit rasteriser of Gymnasium's ``state_pixels``
frame, drawn straight into the ``(3, 96, 96)`` float32 observation row (raw 0-255).

What is drawn, in order (Gymnasium's ``_render``): the playfield square (``102, 204, 102``) on
black, the 20 x 20 checkerboard of grass patches (``102, 230, 102``, cells of ``2000/6/20``),
the road tiles (``102 + int(2.55 (i mod 3))`` grey until visited, then ``102``), the red
(``255, 0, 0``) / white kerbs, the four black wheels and the red hull (``204, 0, 0``), then the
indicator bar (bottom 12 rows, black) with the score digits (a 5 x 7 bitmap font box-filtered
to the state pixels, standing in for pygame's 42 px text), the speed (white), wheel omega
(blue), steering (green) and angular-velocity (red) bars.  The camera follows the hull: rotated by ``-angle``,
the car at 3/4 of the height, zoom ``0.6 (1 - t) + 16.2 t`` for ``t = (tick + 1) / 50 <= 1``
(Gymnasium's zoom-in during the first second), world units mapped to the 1000 x 800 window
and the window scaled to 96 x 96.

Each pixel takes the colour at its centre (one sample): Gymnasium antialiases polygon edges
and box-filters the window down (pygame ``smoothscale``); its score glyphs are the font's.
"""

from __future__ import annotations

import math

import numpy as np

from reinfors.jit._compile import kernel
from reinfors.jit.games._contract import TICKS
from reinfors.jit.games.car_racing_layout import (
    BORDER,
    F_ANG,
    F_AV,
    F_SCORE,
    F_VX,
    F_VY,
    F_WHEEL,
    F_X,
    F_Y,
    NT,
    PENDING,
    PLAYFIELD,
    SCALE,
    SIZE,
    TRACK_WIDTH,
    TRK,
    V_KERB,
    V_SIDE,
    V_VISITED,
    VIS,
    W_JANG,
    W_OMEGA,
    WHEEL_R,
    WHEEL_W,
    WHEELPOS,
    WW,
)

W = 96
PLANE = W * W
GRASS_DIM = PLAYFIELD / 20.0
ZOOM = 2.7
SX = 96.0 / 1000.0  # window -> state pixels
SY = 96.0 / 800.0
# hull fixtures (body frame), padded to 8 vertices per polygon with their counts
_HULL = np.zeros((4, 8, 2))
_HULL_N = np.array([4, 4, 8, 4], np.int64)
for _k, _poly in enumerate(
    (
        [(-60, +130), (+60, +130), (+60, +110), (-60, +110)],
        [(-15, +120), (+15, +120), (+20, +20), (-20, 20)],
        [(+25, +20), (+50, -10), (+50, -40), (+20, -90), (-20, -90), (-50, -40), (-50, -10), (-25, +20)],
        [(-50, -120), (+50, -120), (+50, -90), (-50, -90)],
    )
):
    _HULL[_k, : len(_poly)] = np.array(_poly, float) * SIZE
_WHEEL = np.array([(-WHEEL_W, +WHEEL_R), (+WHEEL_W, +WHEEL_R), (+WHEEL_W, -WHEEL_R), (-WHEEL_W, -WHEEL_R)]) * SIZE
# Score digits: a 5 x 7 bitmap font (rows top to bottom, bit 4 = left column) for 0-9 and '-'
# (index 10), laid out as Gymnasium's 42 px text centred at window (60, 750) and box-filtered.
_GLYPHS = np.array(
    [
        [14, 17, 19, 21, 25, 17, 14], [4, 12, 4, 4, 4, 4, 14], [14, 17, 1, 2, 4, 8, 31],
        [30, 1, 1, 14, 1, 1, 30], [2, 6, 10, 18, 31, 2, 2], [31, 16, 30, 1, 1, 17, 14],
        [6, 8, 16, 30, 17, 17, 14], [31, 1, 2, 4, 8, 8, 8], [14, 17, 17, 14, 17, 17, 14],
        [14, 17, 17, 15, 1, 2, 12], [0, 0, 0, 31, 0, 0, 0],
    ],
    np.int64,
)  # fmt: skip
DIGIT_ADVANCE = 23.4  # window px per digit (freesansbold 42)
MINUS_ADVANCE = 14.0
GLYPH_X0, GLYPH_W = 2.5, 18.0  # glyph box inside its advance
GLYPH_Y0, GLYPH_H = 731.0, 33.0  # glyph box rows in the (flipped) window


@kernel
def _score(out, score):
    """Gymnasium's ``f"{reward:04.0f}"`` in white at the bottom left, area-averaged to state pixels."""
    v = np.rint(score)
    neg = score < 0  # Python keeps the sign of a value that rounds to 0 ("-000")
    n = int(abs(v))
    digits = np.zeros(24, np.int64)
    nd = 0
    while n > 0 or nd == 0:
        digits[nd] = n % 10
        n //= 10
        nd += 1
    width = 3 if neg else 4
    while nd < width:
        digits[nd] = 0
        nd += 1
    if nd > 20:
        return
    chars = np.empty(nd + 1, np.int64)
    nc = 0
    if neg:
        chars[0] = 10
        nc = 1
    for k in range(nd):
        chars[nc] = digits[nd - 1 - k]
        nc += 1
    total = nc * DIGIT_ADVANCE
    if neg:
        total = (nc - 1) * DIGIT_ADVANCE + MINUS_ADVANCE
    x0 = 60.0 - total / 2.0
    starts = np.empty(nc)
    xx = x0
    for c in range(nc):
        starts[c] = xx
        xx += MINUS_ADVANCE if chars[c] == 10 else DIGIT_ADVANCE
    j0 = int(GLYPH_Y0 * SY)
    j1 = min(W - 1, int((GLYPH_Y0 + GLYPH_H) * SY))
    i1 = min(W - 1, int(xx * SX) + 1)
    for j in range(j0, j1 + 1):
        for i in range(0, i1 + 1):
            lit = 0
            for sy in range(4):
                y = (j + (sy + 0.5) / 4.0) / SY
                row = int((y - GLYPH_Y0) / GLYPH_H * 7.0)
                if y < GLYPH_Y0 or row > 6:
                    continue
                for sx in range(4):
                    x = (i + (sx + 0.5) / 4.0) / SX
                    for c in range(nc):
                        gx = x - starts[c] - (GLYPH_X0 if chars[c] != 10 else 1.0)
                        gw = GLYPH_W if chars[c] != 10 else 12.0
                        if 0.0 <= gx < gw:
                            col = int(gx / gw * 5.0)
                            if (_GLYPHS[chars[c], row] >> (4 - col)) & 1:
                                lit += 1
                            break
            if lit:
                o = j * W + i
                val = math.floor(255.0 * lit / 16.0)
                out[o] = val
                out[PLANE + o] = val
                out[2 * PLANE + o] = val


@kernel
def _fill(out, pu, pv, n, r, g, b, vmax):
    """Paint the pixels whose centres lie inside the convex polygon ``(pu, pv)[:n]`` (state-pixel
    coordinates, either orientation), rows below ``vmax`` only.  ``out: [3 * 96 * 96] float32``."""
    umin = pu[0]
    umax = pu[0]
    vmin_ = pv[0]
    vmax_ = pv[0]
    for k in range(1, n):
        umin = min(umin, pu[k])
        umax = max(umax, pu[k])
        vmin_ = min(vmin_, pv[k])
        vmax_ = max(vmax_, pv[k])
    if not (umin < W and umax > 0.0 and vmin_ < vmax and vmax_ > 0.0):  # off screen (or NaN)
        return
    i0 = max(0, int(math.floor(max(umin, -1.0) - 0.5)) + 1)
    i1 = min(W - 1, int(math.floor(min(umax, W + 1.0) - 0.5)))
    j0 = max(0, int(math.floor(max(vmin_, -1.0) - 0.5)) + 1)
    j1 = min(vmax - 1, int(math.floor(min(vmax_, W + 1.0) - 0.5)))
    if i0 > i1 or j0 > j1:
        return
    for j in range(j0, j1 + 1):
        y = j + 0.5
        for i in range(i0, i1 + 1):
            x = i + 0.5
            pos = False
            neg = False
            for k in range(n):
                k2 = k + 1 if k + 1 < n else 0
                c = (pu[k2] - pu[k]) * (y - pv[k]) - (pv[k2] - pv[k]) * (x - pu[k])
                if c > 0:
                    pos = True
                elif c < 0:
                    neg = True
            if not (pos and neg):
                o = j * W + i
                out[o] = r
                out[PLANE + o] = g
                out[2 * PLANE + o] = b


@kernel
def _bar(out, pu, pv, u0, u1, v0, v1, r, g, b):
    """An axis-aligned indicator rectangle in state pixels."""
    pu[0] = u0
    pv[0] = v0
    pu[1] = u1
    pv[1] = v0
    pu[2] = u1
    pv[2] = v1
    pu[3] = u0
    pv[3] = v1
    _fill(out, pu, pv, 4, r, g, b, W)


@kernel(entry=True)
def render(params, state, agent, out):
    """Render the frame of ``state`` into ``out: [3 * 96 * 96] float32`` (channel-major, 0-255)."""
    for i in range(3 * PLANE):
        out[i] = 0.0
    if state[PENDING]:
        return
    f = state.view(np.float64)
    hx = f[F_X]
    hy = f[F_Y]
    hang = f[F_ANG]
    t = (state[TICKS] + 1) / 50.0
    zoom = 0.1 * SCALE * max(1.0 - t, 0.0) + ZOOM * SCALE * min(t, 1.0)
    ca = math.cos(-hang)
    sa = math.sin(-hang)
    # background and grass: per pixel, through the inverse camera (affine: stepped along each row)
    inv_g = 1.0 / GRASS_DIM
    dwx = ca / (SX * zoom)  # world step per pixel column
    dwy = -sa / (SX * zoom)
    for j in range(84):
        ry = (600.0 - (j + 0.5) / SY) / zoom
        rx = (0.5 / SX - 500.0) / zoom
        wx = hx + ca * rx + sa * ry
        wy = hy - sa * rx + ca * ry
        for i in range(W):
            if abs(wx) <= PLAYFIELD and abs(wy) <= PLAYFIELD:
                gx = math.floor(wx * inv_g)
                gy = math.floor(wy * inv_g)
                green = 204.0
                if -20 <= gx < 20 and -20 <= gy < 20 and gx % 2 == 0 and gy % 2 == 0:
                    green = 230.0
                o = j * W + i
                out[o] = 102.0
                out[PLANE + o] = green
                out[2 * PLANE + o] = 102.0
            wx += dwx
            wy += dwy
    pu = np.empty(8)
    pv = np.empty(8)
    nt = state[NT]
    reach = 1.2 * W + 2.0
    for i in range(nt):
        jp = (i - 1) % nt
        x1 = f[TRK + 3 * i]
        y1 = f[TRK + 3 * i + 1]
        b1 = f[TRK + 3 * i + 2]
        x2 = f[TRK + 3 * jp]
        y2 = f[TRK + 3 * jp + 1]
        b2 = f[TRK + 3 * jp + 2]
        # cull on the track point's pixel position
        dx = x1 - hx
        dy = y1 - hy
        cu = (zoom * (ca * dx - sa * dy) + 500.0) * SX
        cv = (600.0 - zoom * (sa * dx + ca * dy)) * SY
        if abs(cu - 48.0) > reach or abs(cv - 48.0) > reach:
            continue
        c1 = math.cos(b1)
        s1 = math.sin(b1)
        c2 = math.cos(b2)
        s2 = math.sin(b2)
        for side in range(2):
            if side == 0:
                k1 = -TRACK_WIDTH
                k2 = TRACK_WIDTH
            else:
                if state[VIS + i] & V_KERB == 0:
                    break
                sg = 1.0 if state[VIS + i] & V_SIDE else -1.0
                k1 = sg * TRACK_WIDTH
                k2 = sg * (TRACK_WIDTH + BORDER)
            qx0 = x1 + k1 * c1
            qy0 = y1 + k1 * s1
            qx1 = x1 + k2 * c1
            qy1 = y1 + k2 * s1
            qx2 = x2 + k2 * c2
            qy2 = y2 + k2 * s2
            qx3 = x2 + k1 * c2
            qy3 = y2 + k1 * s2
            for k in range(4):
                if k == 0:
                    dx, dy = qx0 - hx, qy0 - hy
                elif k == 1:
                    dx, dy = qx1 - hx, qy1 - hy
                elif k == 2:
                    dx, dy = qx2 - hx, qy2 - hy
                else:
                    dx, dy = qx3 - hx, qy3 - hy
                pu[k] = (zoom * (ca * dx - sa * dy) + 500.0) * SX
                pv[k] = (600.0 - zoom * (sa * dx + ca * dy)) * SY
            if side == 0:
                grey = 102.0 if state[VIS + i] & V_VISITED else 102.0 + math.floor(0.01 * (i % 3) * 255.0)
                _fill(out, pu, pv, 4, grey, grey, grey, 84)
            elif i % 2 == 0:
                _fill(out, pu, pv, 4, 255.0, 255.0, 255.0, 84)
            else:
                _fill(out, pu, pv, 4, 255.0, 0.0, 0.0, 84)
    # car: wheels, then the hull
    hc = math.cos(hang)
    hs = math.sin(hang)
    for w in range(4):
        wa = hang + f[F_WHEEL + WW * w + W_JANG]
        wc = math.cos(wa)
        ws = math.sin(wa)
        ox = hx + hc * WHEELPOS[w, 0] - hs * WHEELPOS[w, 1]
        oy = hy + hs * WHEELPOS[w, 0] + hc * WHEELPOS[w, 1]
        for k in range(4):
            dx = ox + wc * _WHEEL[k, 0] - ws * _WHEEL[k, 1] - hx
            dy = oy + ws * _WHEEL[k, 0] + wc * _WHEEL[k, 1] - hy
            pu[k] = (zoom * (ca * dx - sa * dy) + 500.0) * SX
            pv[k] = (600.0 - zoom * (sa * dx + ca * dy)) * SY
        _fill(out, pu, pv, 4, 0.0, 0.0, 0.0, 84)
    for p in range(4):
        n = _HULL_N[p]
        for k in range(n):
            dx = hc * _HULL[p, k, 0] - hs * _HULL[p, k, 1]
            dy = hs * _HULL[p, k, 0] + hc * _HULL[p, k, 1]
            pu[k] = (zoom * (ca * dx - sa * dy) + 500.0) * SX
            pv[k] = (600.0 - zoom * (sa * dx + ca * dy)) * SY
        _fill(out, pu, pv, n, 204.0, 0.0, 0.0, 84)
    _score(out, f[F_SCORE])
    # indicators (window units: s = 25, h = 20; bars end at H - h = 780)
    speed = math.sqrt(f[F_VX] * f[F_VX] + f[F_VY] * f[F_VY])
    if abs(speed) > 1e-4:
        top = (780.0 - 20.0 * 0.02 * speed) * SY
        _bar(out, pu, pv, 5 * 25.0 * SX, 6 * 25.0 * SX, top, 780.0 * SY, 255.0, 255.0, 255.0)
    for w in range(4):
        om = f[F_WHEEL + WW * w + W_OMEGA]
        if abs(om) > 1e-4:
            red = 0.0 if w < 2 else 51.0
            _bar(out, pu, pv, (7 + w) * 25.0 * SX, (8 + w) * 25.0 * SX, (780.0 - 20.0 * 0.01 * om) * SY, 780.0 * SY,
                 red, 0.0, 255.0)  # fmt: skip
    ja = f[F_WHEEL + W_JANG]
    if abs(ja) > 1e-4:
        _bar(out, pu, pv, 20 * 25.0 * SX, (20 - 10.0 * ja) * 25.0 * SX, 720.0 * SY, 760.0 * SY, 0.0, 255.0, 0.0)
    av = f[F_AV]
    if abs(av) > 1e-4:
        _bar(out, pu, pv, 30 * 25.0 * SX, (30 - 0.8 * av) * 25.0 * SX, 720.0 * SY, 760.0 * SY, 255.0, 0.0, 0.0)
