"""Snake: 2-8 snakes move simultaneously on a ``G x G`` grid, eat food, grow, and die on walls,
bodies and head-on collisions (reinfors 0.4.0's rules, probed bit for bit).

Cell-index diagram for ``G = 5`` (``cell = row * G + col``; row 0 is the top)::

          col 0   1   2   3   4
    row 0 |  0   1   2   3   4 |        directions (``state()['directions']``):
    row 1 |  5   6   7   8   9 |          0 up (row - 1)     1 down  (row + 1)
    row 2 | 10  11  12  13  14 |          2 left (col - 1)   3 right (col + 1)
    row 3 | 15  16  17  18  19 |        actions, relative to the current direction:
    row 4 | 20  21  22  23  24 |          0 straight, 1 turn left (ccw), 2 turn right (cw)

Initial placement (deterministic, computed once in :func:`make_params`): two snakes share the
head row ``G/2``, ``n >= 3`` snakes use rows ``(i+1)*G/(n+1)``; even snakes sit in column ``G/3``
facing right, odd ones in column ``G - G/3`` facing left; each body trails backwards from the
head and turns along the walls (left -> down -> right -> up) when it would leave the grid.

Tick: every alive snake turns and targets the next cell; it grows when the target holds food.
Cells blocked this tick are every mover's body minus its tail (kept when it grows).  Causes, first
match wins: ``wall``, ``head_on`` (shared target), ``self``, ``opponent`` (any other mover's
blocked cell, its new neck included: a head swap of two long snakes kills both).  A dead snake
keeps its body minus the tail, frozen forever; later movers pass through dead bodies.  The owner
of the cell an ``opponent`` death entered gets ``killed_opponent`` if it survives.  Outcome (once):
one survivor wins and the tick's dead lose; no survivor: the tick's dead draw; otherwise the
tick's dead lose and, with ``win_food_lead``, a food lead of that size wins at once.  The episode
ends when nobody is alive, on a food-lead win, or when decided and ``play_to_last`` is False.

Food (chance): the initial ``food`` cells are placed one chance node at a time, each uniform over
the free cells (no body of any snake, dead ones included, and no food), the outcome being the
k-th free cell in row-major order drawn with one ``index_hi`` draw — exactly the original's
placements for a seeded Env.  After a tick (not the final one) in which ``m`` foods were eaten,
``m`` spawns are pending, one chance node each; when no free cell is left the remaining spawns are
dropped for good (a node with no free cell still consumes one draw, as the original's).  The
original draws a tick's ``k = min(m, N) >= 2`` respawns jointly with *one* draw ``x`` (an index
into the ``N (N-1) … (N-k+1)`` ordered tuples of the ``N`` free cells, which decodes as
``i_j = hi(x_j * (N-j))``, ``x_{j+1} = lo(x_j * (N-j))``, ``x_0 = x``, ``i_j`` the rank among the
cells still free).  The shared chance resolution draws once per node, so seeded Envs match the
original except on ticks where two or more foods are placed (the first cell still matches; the
differential tests sync the rest).

Parameter row (``int64``)::

    0 G   1 initial_length L   2 food   3 play_to_last   4 win_food_lead (u64 bitwise, 0 = None)
    5 max_ticks (u64 bitwise, 0 = None)   6 num_snakes n   7 cells = G*G   8 ring capacity C
    9 … 9+n*L-1   the initial bodies (cell indices), snake by snake, head first

State row (``int64``; after the shared header; ``SNAKES = HEADER + 5``, ``GRID = SNAKES + 7n``,
``FOODS = GRID + G*G``, ``RINGS = FOODS + food``; ring capacity ``C = G*G``, or ``L`` when
``food = 0`` since bodies then never grow)::

    HEADER+0  OVER      1 once the rules ended the episode
    HEADER+1  DECIDED   1 once the outcome (win/draw) was announced
    HEADER+2  PENDING   food spawns pending (chance)
    HEADER+3  NFREE     free cells (no body, dead or alive, and no food)
    HEADER+4  NFOOD     food cells on the board
    SNAKES + 7*i + 0 … 6   snake i: DIR, ALIVE, LEN, HEADP (ring slot of the head), EATEN
                            (food eaten this episode), CAUSE (death cause on the last tick:
                            0 none, 1 wall, 2 self, 3 opponent, 4 head_on), NH (target cell
                            of the last tick, -1 for a wall or a non-mover)
    GRID + cell          bits 0-3: alive owner + 1 (0 none), bit 4: food, bits 5+: number of
                         body segments (any snake, dead ones included) on the cell
    FOODS + k            the NFOOD food cells (k < NFOOD, in placement order with swap-removal);
                         ``food`` slots, the rest 0 (the food count never exceeds ``food``)
    RINGS + i*C + k      snake i's body ring: body[j] = ring[(HEADP + j) mod C]; slots outside
                         the body are 0

Default encoder ``snake``, ``(5, G, G)`` float32, the whole board rotated so that the observer's
direction points up: planes own head, own body, other heads, other bodies, food (dead snakes
included).  Reward keys ``step, food, loss, draw, kill, win, survival`` (defaults
``0, 0, -1, 0, 0, 1, 0``): ``step`` every agent every tick (dead ones too), ``survival`` to every
snake alive at the end of the tick reaching the engine's truncation horizon (``max_ticks``; never
in an Env, which does not truncate, nor inside search trees).
"""

from __future__ import annotations

import numpy as np

from reinfors._validate import as_bool, as_signed, as_unsigned
from reinfors.jit._compile import kernel
from reinfors.jit.games._contract import (
    DONE,
    HEADER,
    HORIZON,
    RUNNING,
    TERMINAL,
    TICKS,
    TRUNCATED,
    engine_horizon,
    u64_word,
    word_u64,
)

NAME = "snake"
N_ACTIONS = 3
SIMULTANEOUS = True
REWARD_KEYS = ("step", "food", "loss", "draw", "kill", "win", "survival")
REWARD_DEFAULTS = (0.0, 0.0, -1.0, 0.0, 0.0, 1.0, 0.0)
K_STEP, K_FOOD, K_LOSS, K_DRAW, K_KILL, K_WIN, K_SURVIVAL = range(7)

# parameter row
P_G, P_L, P_FOOD, P_PLAY, P_LEAD, P_MAX_TICKS, P_N, P_CELLS, P_CAP, P_INIT = range(10)

# state row
OVER = HEADER
DECIDED = HEADER + 1
PENDING = HEADER + 2
NFREE = HEADER + 3
NFOOD = HEADER + 4
SNAKES = HEADER + 5
SW = 7  # words per snake
S_DIR, S_ALIVE, S_LEN, S_HEADP, S_EATEN, S_CAUSE, S_NH = range(SW)

# grid word
OWNER_MASK = 15
FOOD_BIT = 16
COVER_ONE = 32

CAUSE_NAMES = (None, "wall", "self", "opponent", "head_on")
C_WALL, C_SELF, C_OPP, C_HEAD_ON = 1, 2, 3, 4

_DR = np.array([-1, 1, 0, 0], np.int64)
_DC = np.array([0, 0, -1, 1], np.int64)
# _TURN[d, a]: new direction after relative action a (0 straight, 1 left/ccw, 2 right/cw)
_TURN = np.array([[0, 2, 3], [1, 3, 2], [2, 1, 0], [3, 0, 1]], np.int64)

_OPPOSITE = (1, 0, 3, 2)
_TRAIL_TURN = (2, 3, 1, 0)  # when the initial trail would leave the grid: left->down->right->up->left


# ---------------------------------------------------------------------------------------------
# Python side
# ---------------------------------------------------------------------------------------------


def _tdiv(a: int, b: int) -> int:
    """Integer division truncating toward zero (Rust ``/``); matters only for ``G <= 0``."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _placement(G: int, L: int, n: int):
    """Initial ``(bodies, directions)`` or raise the original's ValueError (checks 9-11)."""
    heads = []
    for i in range(n):
        r = _tdiv(G, 2) if n == 2 else _tdiv((i + 1) * G, n + 1)
        c = _tdiv(G, 3) if i % 2 == 0 else G - _tdiv(G, 3)
        heads.append((r, c, 3 if i % 2 == 0 else 2))
    for r, c, d in heads:  # capacity of the wall-following trail
        if d == 3:
            cap = 1 + max(c, 0) + max(G - 1 - r, 0) + 2 * max(G - 1, 0)
        else:
            cap = 1 + max(G - 1 - c, 0) + max(r, 0) + 2 * max(G - 1, 0)
        if L > cap:
            raise ValueError(f"initial_length {L} does not fit grid_size {G}")
    bodies = []
    for r, c, d in heads:
        if not (0 <= r < G and 0 <= c < G):
            raise ValueError(
                f"grid_size {G} is too small: initial snake placement leaves cell ({r}, {c}) outside the grid"
            )
        body = [(r, c)]
        t = _OPPOSITE[d]
        while len(body) < L:
            for _ in range(4):
                nr, nc = body[-1][0] + int(_DR[t]), body[-1][1] + int(_DC[t])
                if 0 <= nr < G and 0 <= nc < G:
                    break
                t = _TRAIL_TURN[t]
            body.append((nr, nc))
        bodies.append(body)
    seen = set()
    for body in bodies:
        for cell in body:
            if cell in seen:
                raise ValueError(
                    f"grid_size {G} is too small for initial_length {L}: initial snakes overlap at ({cell[0]}, {cell[1]})"
                )
            seen.add(cell)
    return bodies, [h[2] for h in heads]


# 0.4.0's bound on the initial food count: the opening's food placement is a chain of chance
# edges, one per apple (probed: ``Snake(grid_size=101, food=10_001)`` is refused).
MAX_FOOD = 10_000


def make_params(
    grid_size=20, initial_length=3, food=3, play_to_last=True, win_food_lead=None, max_ticks=1000, num_snakes=2
) -> np.ndarray:
    """Convert (pyo3's order and types), validate (the original's order and wording), place, pack."""
    G = as_signed("grid_size", grid_size, 32)
    L = as_unsigned("initial_length", initial_length)
    food = as_unsigned("food", food)
    play = as_bool("play_to_last", play_to_last)
    lead = None if win_food_lead is None else as_unsigned("win_food_lead", win_food_lead)
    max_ticks = None if max_ticks is None else as_unsigned("max_ticks", max_ticks)
    n = as_unsigned("num_snakes", num_snakes)
    if max_ticks is not None and max_ticks < 1:
        raise ValueError("max_ticks must be >= 1 (or None to never truncate)")
    if not 2 <= n <= 8:
        raise ValueError("num_snakes must be in 2..=8")
    if L < 1:
        raise ValueError("initial_length must be >= 1")
    if lead is not None:
        if lead < 1:
            raise ValueError("win_food_lead must be >= 1 (a lead of 0 ends the game on tick one)")
        if n != 2:
            raise ValueError(
                "win_food_lead is a two-snake rule (a lead over WHOM is undefined past two); unset it for more snakes"
            )
    if G > 0 and 5 * G * G > 2**31:
        raise ValueError(f"grid_size {G} makes the observation tensor exceed 2^31 elements")
    cells = max(G, 0) ** 2
    if food > cells:
        raise ValueError(f"initial_food_count {food} exceeds the {cells}-cell grid")
    if food > MAX_FOOD:
        raise ValueError(f"initial_food_count {food} exceeds the {MAX_FOOD}-edge chance-chain limit")
    k = min(food, n)
    space = 1
    for i in range(k):
        space *= cells - i
        if space > 2**53:
            raise ValueError(
                f"worst-case respawn index space ({k} apples eatable at once on a {cells}-cell grid) exceeds "
                f"min(2^53, usize::MAX); reduce food or grid size"
            )
    bodies, _ = _placement(G, L, n)
    free = G * G - n * L
    if food > free:
        raise ValueError(f"food {food} exceeds the {free} free cells left by the initial snakes")
    cap = cells if food > 0 else L  # without food a body never grows
    ticks_word = u64_word(0 if max_ticks is None else max_ticks)
    head = [G, L, food, int(play), u64_word(0 if lead is None else lead), ticks_word, n, cells, cap]
    init = [r * G + c for body in bodies for (r, c) in body]
    return np.array(head + init, np.int64)


def resolved(params) -> dict:
    max_ticks = word_u64(params[P_MAX_TICKS])
    lead = word_u64(params[P_LEAD])
    return {
        "food": int(params[P_FOOD]),
        "grid_size": int(params[P_G]),
        "initial_length": int(params[P_L]),
        "max_ticks": max_ticks or None,
        "num_snakes": int(params[P_N]),
        "play_to_last": bool(params[P_PLAY]),
        "win_food_lead": lead or None,
    }


def n_players(params) -> int:
    return int(params[P_N])


@kernel(inline="always")
def _words(params):
    """Start words of the grid, the food list and the body rings in a state row."""
    grid = SNAKES + SW * params[P_N]
    foods = grid + params[P_CELLS]
    return grid, foods, foods + params[P_FOOD]


def _offsets(params):
    """``(grid, rings, cap, cells, G, n)`` word offsets of one parameter row."""
    grid, _, rings = (int(x) for x in _words(params))
    return grid, rings, int(params[P_CAP]), int(params[P_CELLS]), int(params[P_G]), int(params[P_N])


def state_size(params) -> int:
    grid, rings, cap, _, _, n = _offsets(params)
    return rings + n * cap


def obs_shape(params) -> tuple:
    G = int(params[P_G])
    return (5, G, G)


def horizon(params) -> int:
    """The engine's truncation horizon (0 = None)."""
    return engine_horizon(params[P_MAX_TICKS])


def truncation_horizon(params) -> int | None:
    """The public horizon: ``max_ticks`` as given (a u64), or None."""
    return resolved(params)["max_ticks"]


def max_chance(params) -> int:
    return max(1, int(params[P_CELLS]))


def _bodies(params, state):
    grid, rings, cap, cells, G, n = _offsets(params)
    out = []
    for i in range(n):
        sb = SNAKES + SW * i
        ln, hp = int(state[sb + S_LEN]), int(state[sb + S_HEADP])
        ring = state[rings + i * cap : rings + (i + 1) * cap]
        out.append([int(ring[(hp + j) % cap]) for j in range(ln)])
    return out


def inspect(params, state) -> dict:
    """``{'bodies', 'food', 'directions', 'alive'}`` as the original (food in row-major order;
    the original lists its food set in hash order)."""
    grid, _, _, cells, G, n = _offsets(params)
    bodies = [[(c // G, c % G) for c in body] for body in _bodies(params, state)]
    food = [(int(c) // G, int(c) % G) for c in np.flatnonzero(state[grid : grid + cells] & FOOD_BIT)]
    return {
        "bodies": bodies,
        "food": food,
        "directions": bytes(int(state[SNAKES + SW * i + S_DIR]) for i in range(n)),
        "alive": [bool(state[SNAKES + SW * i + S_ALIVE]) for i in range(n)],
    }


def events(params, state, amounts) -> list:
    """Every tick, every agent (dead ones included), in agent order: ``(agent, {ate_food, died,
    killed_opponent, won, lost, drew, death_cause})``."""
    out = []
    for i in range(int(params[P_N])):
        cause = int(state[SNAKES + SW * i + S_CAUSE])
        out.append(
            (
                i,
                {
                    "ate_food": bool(amounts[i, K_FOOD] != 0.0),
                    "died": cause != 0,
                    "killed_opponent": bool(amounts[i, K_KILL] != 0.0),
                    "won": bool(amounts[i, K_WIN] != 0.0),
                    "lost": bool(amounts[i, K_LOSS] != 0.0),
                    "drew": bool(amounts[i, K_DRAW] != 0.0),
                    "death_cause": CAUSE_NAMES[cause] if 0 <= cause < len(CAUSE_NAMES) else None,
                },
            )
        )
    return out


def validate_state(params, state) -> str | None:
    """``None`` for a consistent row, else the reason (rejects forged or corrupted snapshots)."""
    grid, rings, cap, cells, G, n = _offsets(params)
    s = [int(x) for x in state[HEADER:SNAKES]]
    over, decided, pending, nfree, nfood = s
    if over not in (0, 1) or decided not in (0, 1):
        return "over/decided flags must be 0 or 1"
    bodies = []
    for i in range(n):
        sb = SNAKES + SW * i
        d, alive, ln, hp, eaten, cause, nh = (int(x) for x in state[sb : sb + SW])
        if not 0 <= d <= 3:
            return f"snake {i}: direction {d} out of range"
        if alive not in (0, 1):
            return f"snake {i}: alive flag {alive} is not a bool"
        if not 0 <= ln <= cap or not 0 <= hp < cap:
            return f"snake {i}: body length or head slot out of range"
        if eaten < 0 or not 0 <= cause < len(CAUSE_NAMES) or not -1 <= nh < cells:
            return f"snake {i}: eaten, cause or target word out of range"
        if alive and (ln == 0 or cause != 0):
            return f"snake {i}: an alive snake needs a body and no death cause"
        ring = [int(x) for x in state[rings + i * cap : rings + (i + 1) * cap]]
        body = [ring[(hp + j) % cap] for j in range(ln)]
        rest = [ring[(hp + j) % cap] for j in range(ln, cap)]
        if any(x != 0 for x in rest):
            return f"snake {i}: ring slots outside the body must be 0"
        if any(not 0 <= c < cells for c in body) or len(set(body)) != ln:
            return f"snake {i}: body cells out of range or repeated"
        for a, b in zip(body, body[1:], strict=False):
            if abs(a // G - b // G) + abs(a % G - b % G) != 1:
                return f"snake {i}: body is not a connected path"
        bodies.append(body)
    alive = [bool(state[SNAKES + SW * i + S_ALIVE]) for i in range(n)]
    words = state[grid : grid + cells]
    if ((words < 0) | ((words & FOOD_BIT != 0) & (words >> 5 != 0))).any():
        return "grid words malformed (food under a body)"
    expect = np.zeros(cells, np.int64)
    for i, body in enumerate(bodies):
        for c in body:
            if alive[i]:
                if expect[c] & OWNER_MASK:
                    return "alive snakes overlap"
                expect[c] += i + 1
            expect[c] += COVER_ONE
    expect |= words & FOOD_BIT
    if not np.array_equal(expect, words):
        return "grid words disagree with the bodies"
    nmax = int(params[P_FOOD])
    flist = [int(x) for x in state[grid + cells : grid + cells + nmax]]
    if not 0 <= nfood <= nmax or any(x != 0 for x in flist[nfood:]):
        return "food list malformed"
    if sorted(flist[:nfood]) != [int(c) for c in np.flatnonzero(words & FOOD_BIT)]:
        return "food list disagrees with the grid"
    if nfree != int(np.count_nonzero(words == 0)):
        return "free-cell count disagrees with the grid"
    n_alive = sum(alive)
    done = int(state[DONE])
    if bool(over) != (done == TERMINAL):
        return f"state over flag {str(bool(over)).lower()} disagrees with envelope done {str(done != RUNNING).lower()}"
    lead = word_u64(params[P_LEAD])
    e = [int(state[SNAKES + SW * i + S_EATEN]) for i in range(n)]
    lead_win = lead > 0 and n_alive == 2 and abs(e[0] - e[1]) >= lead
    if not decided and (n_alive < 2 or lead_win):
        return "an undecided game needs two or more snakes alive and no winning food lead"
    if bool(over) != (n_alive == 0 or lead_win or bool(decided and not params[P_PLAY])):
        return "over flag disagrees with the alive snakes and the outcome"
    if pending != 0 and not (done == TRUNCATED and 0 < pending <= n):
        return "food spawns still pending"
    return None


def _with_food(params, state, cells_rc) -> None:
    """Replace the food of ``state`` (in place) by the ``(row, col)`` cells ``cells_rc`` (free cells).

    Not used by the rules: lets tests force food placements the two builds cannot share."""
    grid, _, _, cells, G, _ = _offsets(params)
    words = state[grid : grid + cells]
    flist = state[grid + cells : grid + cells + int(params[P_FOOD])]
    words &= ~np.int64(FOOD_BIT)
    flist[:] = 0
    for k, (r, c) in enumerate(cells_rc):
        assert words[r * G + c] == 0, "food must go on a free cell"
        words[r * G + c] = FOOD_BIT
        flist[k] = r * G + c
    state[NFOOD] = len(cells_rc)
    state[NFREE] = int(np.count_nonzero(words == 0))


# ---------------------------------------------------------------------------------------------
# Rules
# ---------------------------------------------------------------------------------------------


@kernel(entry=True)
def init(params, state):
    """Clear the row, lay out the initial bodies; the initial food is pending chance."""
    n = params[P_N]
    cells = params[P_CELLS]
    cap = params[P_CAP]
    L = params[P_L]
    grid, foods, rings = _words(params)
    for k in range(HEADER, rings + n * cap):
        state[k] = 0
    for i in range(n):
        sb = SNAKES + SW * i
        state[sb + S_DIR] = 3 if i % 2 == 0 else 2
        state[sb + S_ALIVE] = 1
        state[sb + S_LEN] = L
        state[sb + S_NH] = -1
        rb = rings + i * cap
        for k in range(L):
            c = params[P_INIT + i * L + k]
            state[rb + k] = c
            state[grid + c] += COVER_ONE + i + 1
    state[NFREE] = cells - n * L
    state[PENDING] = params[P_FOOD]


@kernel(entry=True)
def chance_pending(params, state):
    return state[PENDING] > 0


@kernel(entry=True)
def chance_outcomes(params, state, probs):
    """Outcome = cell index; uniform over the free cells (none positive when the grid is full)."""
    cells = params[P_CELLS]
    grid = SNAKES + SW * params[P_N]
    nfree = state[NFREE]
    w = 1.0 / nfree if nfree > 0 else 0.0
    for c in range(cells):
        probs[c] = w if state[grid + c] == 0 else 0.0
    return cells


@kernel(entry=True)
def apply_chance(params, state, outcome):
    """Put food on ``outcome``; with no free cell left the remaining spawns of the tick are dropped."""
    cells = params[P_CELLS]
    grid = SNAKES + SW * params[P_N]
    if 0 <= outcome < cells and state[grid + outcome] == 0:
        state[grid + outcome] = FOOD_BIT
        state[grid + cells + state[NFOOD]] = outcome
        state[NFREE] -= 1
        state[NFOOD] += 1
        state[PENDING] -= 1
        if state[NFREE] == 0:
            state[PENDING] = 0
    else:
        state[PENDING] = 0


@kernel(entry=True)
def legal(params, state, agent, mask):
    ok = 1 if state[SNAKES + SW * agent + S_ALIVE] != 0 else 0
    mask[0] = ok
    mask[1] = ok
    mask[2] = ok
    return 3 * ok


@kernel(entry=True)
def active(params, state, out):
    k = 0
    for i in range(params[P_N]):
        if state[SNAKES + SW * i + S_ALIVE] != 0:
            out[k] = i
            k += 1
    return k


@kernel(entry=True)
def step(params, state, actions, amounts):
    """One simultaneous tick: turn, target, resolve deaths, move, eat, decide; queue respawns."""
    G = params[P_G]
    n = params[P_N]
    cap = params[P_CAP]
    grid, foods, rings = _words(params)
    movers = 0
    grows = 0
    # 1. turn and target; the growth flag is read before anything moves
    for i in range(n):
        sb = SNAKES + SW * i
        amounts[i, K_STEP] = 1.0
        state[sb + S_CAUSE] = 0
        state[sb + S_NH] = -1
        if state[sb + S_ALIVE] == 0:
            continue
        movers |= 1 << i
        d = _TURN[state[sb + S_DIR], actions[i]]
        state[sb + S_DIR] = d
        h = state[rings + i * cap + state[sb + S_HEADP]]
        r = h // G + _DR[d]
        c = h % G + _DC[d]
        if 0 <= r < G and 0 <= c < G:
            t = r * G + c
            state[sb + S_NH] = t
            if state[grid + t] & FOOD_BIT:
                grows |= 1 << i
    # 2. death causes against the blocked cells (bodies minus non-growing tails)
    dead = 0
    for i in range(n):
        if not (movers >> i) & 1:
            continue
        sb = SNAKES + SW * i
        t = state[sb + S_NH]
        cause = 0
        if t < 0:
            cause = C_WALL
        else:
            for j in range(n):
                if j != i and state[SNAKES + SW * j + S_NH] == t:
                    cause = C_HEAD_ON
            if cause == 0:
                o = state[grid + t] & OWNER_MASK
                if o != 0:
                    j = o - 1
                    sj = SNAKES + SW * j
                    ti = state[sj + S_HEADP] + state[sj + S_LEN] - 1
                    if ti >= cap:
                        ti -= cap
                    vacated = state[rings + j * cap + ti] == t and not (grows >> j) & 1
                    if not vacated:
                        cause = C_SELF if j == i else C_OPP
        if cause != 0:
            state[sb + S_CAUSE] = cause
            dead |= 1 << i
    # 3. kill credit: the owner of the entered cell, if it survives
    for i in range(n):
        if (dead >> i) & 1 and state[SNAKES + SW * i + S_CAUSE] == C_OPP:
            j = (state[grid + state[SNAKES + SW * i + S_NH]] & OWNER_MASK) - 1
            if not (dead >> j) & 1:
                amounts[j, K_KILL] = 1.0
    # 4a. every non-growing mover vacates its tail (the dying ones too)
    nfree = state[NFREE]
    for i in range(n):
        if not (movers >> i) & 1 or (grows >> i) & 1:
            continue
        sb = SNAKES + SW * i
        ln = state[sb + S_LEN]
        ti = state[sb + S_HEADP] + ln - 1
        if ti >= cap:
            ti -= cap
        rb = rings + i * cap
        cell = state[rb + ti]
        state[rb + ti] = 0
        state[sb + S_LEN] = ln - 1
        w = (state[grid + cell] - COVER_ONE) & ~OWNER_MASK
        state[grid + cell] = w
        if w == 0:
            nfree += 1
    # 4b. the dead stay where they are, no longer owning (blocking) their cells
    for i in range(n):
        if not (dead >> i) & 1:
            continue
        sb = SNAKES + SW * i
        state[sb + S_ALIVE] = 0
        hp = state[sb + S_HEADP]
        rb = rings + i * cap
        for k in range(state[sb + S_LEN]):
            s = hp + k
            if s >= cap:
                s -= cap
            cell = state[rb + s]
            state[grid + cell] &= ~OWNER_MASK
    # 4c. survivors move their head in, eating the food there
    eaten = 0
    for i in range(n):
        if not (movers >> i) & 1 or (dead >> i) & 1:
            continue
        sb = SNAKES + SW * i
        t = state[sb + S_NH]
        hp = state[sb + S_HEADP] - 1
        if hp < 0:
            hp += cap
        state[sb + S_HEADP] = hp
        state[rings + i * cap + hp] = t
        state[sb + S_LEN] += 1
        w = state[grid + t]
        if w == 0:
            nfree -= 1
        w += COVER_ONE + i + 1
        if (grows >> i) & 1:
            w -= FOOD_BIT
            nf = state[NFOOD] - 1
            for k in range(nf):
                if state[foods + k] == t:
                    state[foods + k] = state[foods + nf]
                    break
            state[foods + nf] = 0
            state[NFOOD] = nf
            state[sb + S_EATEN] += 1
            amounts[i, K_FOOD] = 1.0
            eaten += 1
        state[grid + t] = w
    state[NFREE] = nfree
    # 5. outcome
    n_alive = 0
    last = -1
    for i in range(n):
        if state[SNAKES + SW * i + S_ALIVE] != 0:
            n_alive += 1
            last = i
    lead_win = False
    if state[DECIDED] == 0:
        if n_alive == 1:
            amounts[last, K_WIN] = 1.0
            for i in range(n):
                if (dead >> i) & 1:
                    amounts[i, K_LOSS] = 1.0
            state[DECIDED] = 1
        elif n_alive == 0:
            for i in range(n):
                if (dead >> i) & 1:
                    amounts[i, K_DRAW] = 1.0
            state[DECIDED] = 1
        else:
            for i in range(n):
                if (dead >> i) & 1:
                    amounts[i, K_LOSS] = 1.0
            lead = params[P_LEAD]
            if lead > 0:  # two snakes, both alive (a lead past 2**63, stored negative, is unreachable)
                e0 = state[SNAKES + S_EATEN]
                e1 = state[SNAKES + SW + S_EATEN]
                if e0 - e1 >= lead:
                    amounts[0, K_WIN] = 1.0
                    amounts[1, K_LOSS] = 1.0
                    lead_win = True
                elif e1 - e0 >= lead:
                    amounts[1, K_WIN] = 1.0
                    amounts[0, K_LOSS] = 1.0
                    lead_win = True
                if lead_win:
                    state[DECIDED] = 1
    over = n_alive == 0 or lead_win or (state[DECIDED] != 0 and params[P_PLAY] == 0)
    if over:
        state[OVER] = 1
    elif eaten > 0:
        state[PENDING] = eaten
    # 6. survival, on the tick that reaches the engine's truncation horizon (TICKS is the tick
    # being completed): every snake alive at its end, also when this tick decides the game
    # (0.4.0).  An Env (no horizon) and tree copies (HORIZON zeroed) never pay it.
    h = state[HORIZON]
    if h > 0 and state[TICKS] == h:
        for i in range(n):
            if state[SNAKES + SW * i + S_ALIVE] != 0:
                amounts[i, K_SURVIVAL] = 1.0


@kernel(entry=True)
def is_terminal(params, state):
    return state[OVER] != 0


@kernel(entry=True)
def encode(params, state, agent, out):
    """Five ``G x G`` planes (own head, own body, other heads, other bodies, food), rotated so the
    observer's direction points up: ``(r, c)`` goes to ``(r, c)`` facing up, ``(G-1-r, G-1-c)``
    down, ``(G-1-c, r)`` right, ``(c, G-1-r)`` left."""
    G = params[P_G]
    n = params[P_N]
    cells = params[P_CELLS]
    cap = params[P_CAP]
    grid, foods, rings = _words(params)
    for k in range(5 * cells):
        out[k] = 0.0
    d = state[SNAKES + SW * agent + S_DIR]
    # rotated index of (r, c) = a + r * x + c * y
    if d == 0:
        a, x, y = 0, G, 1
    elif d == 1:
        a, x, y = cells - 1, -G, -1
    elif d == 3:
        a, x, y = (G - 1) * G, 1, -G
    else:
        a, x, y = G - 1, -1, G
    for j in range(n):
        sb = SNAKES + SW * j
        ln = state[sb + S_LEN]
        hp = state[sb + S_HEADP]
        rb = rings + j * cap
        base = 0 if j == agent else 2 * cells
        for k in range(ln):
            s = hp + k
            if s >= cap:
                s -= cap
            cell = state[rb + s]
            r = cell // G
            c = cell - r * G
            out[base + (cells if k > 0 else 0) + a + r * x + c * y] = 1.0
    fb = 4 * cells + a
    for k in range(state[NFOOD]):
        cell = state[foods + k]
        r = cell // G
        c = cell - r * G
        out[fb + r * x + c * y] = 1.0


DEFAULT_ENCODER = "snake"
ENCODERS = {"snake": (encode, obs_shape, 0.0, 1.0)}  # name -> (encode, shape fn, low, high)
