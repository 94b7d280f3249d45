"""Reference (pure-Python) re-implementation of reinfors 0.4.0 `rf.games.Snake` as reverse-engineered
from the original through its public API.  Verified against the original by verify_ref.py
(placement/validation/step/events/rewards/observations); only the food RNG is not reproduced —
food cells are drawn by a pluggable `pick(free_cells)` callback (original: uniform over free cells).

Conventions: cell = (row, col), row 0 at top; directions 0=up(-1,0) 1=down(+1,0) 2=left(0,-1) 3=right(0,+1).
Relative actions: 0=straight, 1=turn left (counter-clockwise on screen), 2=turn right (clockwise).
"""
import random

import numpy as np

DELTA = {0: (-1, 0), 1: (1, 0), 2: (0, -1), 3: (0, 1)}
OPPOSITE = {0: 1, 1: 0, 2: 3, 3: 2}
TURN_LEFT = {0: 2, 2: 1, 1: 3, 3: 0}  # up->left->down->right->up
TURN_RIGHT = {v: k for k, v in TURN_LEFT.items()}  # up->right->down->left->up
# initial-body trail turns when it would leave the grid: left->down->right->up->left
TRAIL_TURN = {2: 1, 1: 3, 3: 0, 0: 2}

EVENT_KEYS = ("ate_food", "died", "killed_opponent", "won", "lost", "drew", "death_cause")
REWARD_DEFAULTS = dict(step=0.0, food=0.0, loss=-1.0, draw=0.0, kill=0.0, win=1.0, survival=0.0)


def tdiv(a, b):
    """Rust/C integer division (truncates toward zero) — only matters for grid_size <= 0."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def apply_action(d, a):
    return d if a == 0 else (TURN_LEFT[d] if a == 1 else TURN_RIGHT[d])


def head_positions(n, G):
    rows = [tdiv(G, 2)] * 2 if n == 2 else [tdiv((i + 1) * G, n + 1) for i in range(n)]
    c0, c1 = tdiv(G, 3), G - tdiv(G, 3)
    return [(rows[i], c0 if i % 2 == 0 else c1, 3 if i % 2 == 0 else 2) for i in range(n)]


def validate_and_place(grid_size=20, initial_length=3, food=3, play_to_last=True, win_food_lead=None,
                       max_ticks=1000, num_snakes=2):
    """Returns (bodies, directions) or raises ValueError with the original's message."""
    G, L, n = grid_size, initial_length, num_snakes
    if max_ticks is not None and max_ticks < 1:
        raise ValueError("max_ticks must be >= 1 (or None to never truncate)")
    if not 2 <= n <= 8:
        raise ValueError("num_snakes must be in 2..=8")
    if L < 1:
        raise ValueError("initial_length must be >= 1")
    if win_food_lead is not None:
        if win_food_lead < 1:
            raise ValueError("win_food_lead must be >= 1 (a lead of 0 ends the game on tick one)")
        if n != 2:
            raise ValueError("win_food_lead is a two-snake rule (a lead over WHOM is undefined past two); "
                             "unset it for more snakes")
    if G > 0 and 5 * G * G > 2 ** 31:
        raise ValueError(f"grid_size {G} makes the observation tensor exceed 2^31 elements")
    cells = max(G, 0) ** 2
    if food > cells:
        raise ValueError(f"initial_food_count {food} exceeds the {cells}-cell grid")
    k = min(food, n)  # apples that can be eaten (and must be respawned) in one tick
    space = 1
    for i in range(k):
        space *= cells - i
    if space > 2 ** 53:
        raise ValueError(f"worst-case respawn index space ({k} apples eatable at once on a {cells}-cell grid) "
                         f"exceeds min(2^53, usize::MAX); reduce food or grid size")
    heads = head_positions(n, G)
    for (r, c, d) in heads:  # capacity of the 4-segment wall-following trail
        if d == 3:
            cap = 1 + max(c, 0) + max(G - 1 - r, 0) + 2 * max(G - 1, 0)
        else:
            cap = 1 + max(G - 1 - c, 0) + max(r, 0) + 2 * max(G - 1, 0)
        if L > cap:
            raise ValueError(f"initial_length {L} does not fit grid_size {G}")
    inb = lambda r, c: 0 <= r < G and 0 <= c < G
    bodies, dirs = [], []
    for (r, c, d) in heads:
        if not inb(r, c):
            raise ValueError(f"grid_size {G} is too small: initial snake placement leaves cell ({r}, {c}) "
                             f"outside the grid")
        body, t = [(r, c)], OPPOSITE[d]
        while len(body) < L:
            for _ in range(4):
                nr, nc = body[-1][0] + DELTA[t][0], body[-1][1] + DELTA[t][1]
                if inb(nr, nc):
                    break
                t = TRAIL_TURN[t]
            body.append((nr, nc))
        bodies.append(body)
        dirs.append(d)
    seen = set()
    for b in bodies:
        for cell in b:
            if cell in seen:
                raise ValueError(f"grid_size {G} is too small for initial_length {L}: initial snakes overlap at "
                                 f"({cell[0]}, {cell[1]})")
            seen.add(cell)
    free = G * G - n * L
    if food > free:
        raise ValueError(f"food {food} exceeds the {free} free cells left by the initial snakes")
    return bodies, dirs


class SnakeRef:
    def __init__(self, reward=None, pick=None, **cfg):
        self.cfg = dict(grid_size=20, initial_length=3, food=3, play_to_last=True, win_food_lead=None,
                        max_ticks=1000, num_snakes=2)
        self.cfg.update(cfg)
        validate_and_place(**self.cfg)
        self.G, self.n = self.cfg["grid_size"], self.cfg["num_snakes"]
        self.w = None if reward is None else {**REWARD_DEFAULTS, **reward}
        rng = random.Random(0)
        self.pick = pick or (lambda free: rng.choice(free))
        self.reset()

    # ---- state -------------------------------------------------------------------------------
    def reset(self):
        bodies, dirs = validate_and_place(**self.cfg)
        self.bodies, self.dirs = bodies, dirs
        self.alive = [True] * self.n
        self.eaten = [0] * self.n
        self.decided = False  # a winner/draw has been announced
        self.over = False  # done()
        self.ticks = 0
        self.rewards = None
        self.food = set()
        for _ in range(self.cfg["food"]):
            self._spawn_one()

    def _free_cells(self):
        occ = set(c for b in self.bodies for c in b) | self.food  # dead bodies included
        return [(r, c) for r in range(self.G) for c in range(self.G) if (r, c) not in occ]

    def _spawn_one(self):
        free = self._free_cells()
        if free:
            self.food.add(self.pick(free))

    def state(self):
        return dict(bodies=[list(b) for b in self.bodies], food=list(self.food),
                    directions=bytes(self.dirs), alive=list(self.alive))

    def done(self):
        return self.over

    def active_agents(self):
        return [] if self.over else [i for i in range(self.n) if self.alive[i]]

    def legal_actions(self, a):
        return [0, 1, 2] if a in self.active_agents() else []

    # ---- dynamics ----------------------------------------------------------------------------
    def step(self, actions):
        G, n = self.G, self.n
        ev = [{k: (None if k == "death_cause" else False) for k in EVENT_KEYS} for _ in range(n)]
        movers = [i for i in range(n) if self.alive[i]]
        nh = {}
        for i in movers:
            d = apply_action(self.dirs[i], actions[i])
            self.dirs[i] = d  # direction is updated even if the snake dies this tick
            h = self.bodies[i][0]
            nh[i] = (h[0] + DELTA[d][0], h[1] + DELTA[d][1])
        inb = lambda p: 0 <= p[0] < G and 0 <= p[1] < G
        grows = {i: nh[i] in self.food for i in movers}
        # cells blocked after the move: each mover's body, minus its tail unless it grows this tick
        occ = {}
        for i in movers:
            for c in (self.bodies[i] if grows[i] else self.bodies[i][:-1]):
                occ.setdefault(c, []).append(i)
        cause = {}
        for i in movers:
            p = nh[i]
            if not inb(p):
                cause[i] = "wall"
            elif any(j != i and nh[j] == p for j in movers):
                cause[i] = "head_on"
            elif p in occ:
                cause[i] = "self" if i in occ[p] else "opponent"
        for i in movers:
            b = self.bodies[i]
            if i in cause:
                self.alive[i] = False
                ev[i]["died"] = True
                ev[i]["death_cause"] = cause[i]
                self.bodies[i] = b if grows[i] else b[:-1]  # body stays, minus tail (head not added)
            else:
                self.bodies[i] = [nh[i]] + (b if grows[i] else b[:-1])
                if grows[i]:
                    ev[i]["ate_food"] = True
                    self.eaten[i] += 1
                    self.food.discard(nh[i])
        for i in movers:  # killer credit: owner of the body cell, if the owner survives
            if cause.get(i) == "opponent":
                for j in occ[nh[i]]:
                    if j not in cause:
                        ev[j]["killed_opponent"] = True
        alive = [i for i in range(n) if self.alive[i]]
        died = [i for i in movers if i in cause]
        lead_win = False
        if not self.decided:
            if len(alive) == 1:
                ev[alive[0]]["won"] = True
                for i in died:
                    ev[i]["lost"] = True
                self.decided = True
            elif len(alive) == 0:
                for i in died:
                    ev[i]["drew"] = True
                self.decided = True
            else:
                for i in died:
                    ev[i]["lost"] = True
                lead = self.cfg["win_food_lead"]
                if lead is not None:  # only n == 2 here, both alive
                    for a, b in ((0, 1), (1, 0)):
                        if self.eaten[a] - self.eaten[b] >= lead:
                            ev[a]["won"] = True
                            ev[b]["lost"] = True
                            self.decided = lead_win = True
        if not alive or lead_win or (self.decided and not self.cfg["play_to_last"]):
            self.over = True
        else:
            for i in movers:  # respawn one food per eaten food (skipped on the final tick)
                if ev[i]["ate_food"]:
                    self._spawn_one()
        self.ticks += 1
        if self.w is not None:
            w = self.w
            self.rewards = []
            for e in ev:
                r = 0.0
                r += w["step"]
                if e["ate_food"]: r += w["food"]
                if e["lost"]: r += w["loss"]
                if e["drew"]: r += w["draw"]
                if e["killed_opponent"]: r += w["kill"]
                if e["won"]: r += w["win"]
                self.rewards.append(r)
        return [(i, ev[i]) for i in range(n)]

    # ---- observation -------------------------------------------------------------------------
    def observe(self, agent):
        G = self.G
        o = np.zeros((5, G, G), np.float32)
        d = self.dirs[agent]

        def rot(r, c):
            if d == 0: return r, c
            if d == 1: return G - 1 - r, G - 1 - c
            if d == 3: return G - 1 - c, r
            return c, G - 1 - r  # d == 2

        for j, b in enumerate(self.bodies):  # all snakes, dead ones included
            for k, (r, c) in enumerate(b):
                plane = (0 if k == 0 else 1) if j == agent else (2 if k == 0 else 3)
                o[(plane,) + rot(r, c)] = 1.0
        for (r, c) in self.food:
            o[(4,) + rot(r, c)] = 1.0
        return o
