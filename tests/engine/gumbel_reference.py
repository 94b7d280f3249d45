"""A plain-Python Gumbel MuZero search, written from the paper (Danihelka et al., ICLR 2022) and
mctx's semantics (``mctx/_src/policies.py`` ``gumbel_muzero_policy``, ``action_selection.py``,
``seq_halving.py``, ``qtransforms.py`` ``qtransform_completed_by_mix_value``, ``search.py``):
the oracle of ``tests/engine/test_gumbel.py``.  Independent of the engine's kernel (no numba, no
reinfors import): mctx's tree arrays (A-wide rows, illegal actions masked to a huge negative
logit as pgx's ``recurrent_fn`` does) and its sequential simulate / expand / backward loop.

The game is given as plain functions over hashable states; a transition into a terminal state
has discount 0 and the terminal node value 0 (pgx's convention), else discount ``-gamma`` when
the mover changes and ``gamma`` when it does not.  mctx expands a child of a terminal node on a
later visit (a dummy node of value 0, reward 0): its contribution is 0 either way, so the
statistics of every non-terminal node are those of a search that stops at terminal nodes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

LOW_LOGIT = -1e9  # seq_halving.score_considered
MASKED = -1e30  # an illegal action's logit (pgx masks with finfo.min)
TINY = 2.2250738585072014e-308  # finfo(float64).tiny
EPS = 1e-8


def considered_visits(max_num_considered_actions: int, num_simulations: int) -> list[int]:
    """mctx ``seq_halving.get_sequence_of_considered_visits`` (verbatim semantics)."""
    if max_num_considered_actions <= 1:
        return list(range(num_simulations))
    log2max = int(math.ceil(math.log2(max_num_considered_actions)))
    sequence: list[int] = []
    visits = [0] * max_num_considered_actions
    num_considered = max_num_considered_actions
    while len(sequence) < num_simulations:
        num_extra_visits = max(1, int(num_simulations / (log2max * num_considered)))
        for _ in range(num_extra_visits):
            sequence.extend(visits[:num_considered])
            for i in range(num_considered):
                visits[i] += 1
        num_considered = max(2, num_considered // 2)
    return sequence[:num_simulations]


def softmax(xs: list[float]) -> list[float]:
    m = max(xs)
    es = [math.exp(x - m) for x in xs]
    s = sum(es)
    return [e / s for e in es]


def argmax(xs: list[float]) -> int:
    """``jnp.argmax``: the first maximum."""
    best = 0
    for i, x in enumerate(xs):
        if x > xs[best]:
            best = i
    return best


@dataclass
class Node:
    state: object
    mover: int
    logits: list[float]  # A-wide, illegal masked
    raw_value: float
    legal: list[bool]
    terminal: bool
    value: float = 0.0  # mctx node_values (running mean)
    visits: int = 1  # mctx node_visits (1 at expansion)
    children: dict = field(default_factory=dict)  # action -> Node
    rewards: dict = field(default_factory=dict)  # action -> reward
    discounts: dict = field(default_factory=dict)  # action -> discount


@dataclass
class Config:
    num_simulations: int = 16
    max_num_considered_actions: int = 16
    c_visit: float = 50.0
    c_scale: float = 0.1
    use_mixed_value: bool = True
    rescale_values: bool = True
    gamma: float = 1.0


class GumbelSearch:
    """One search from ``root_state``.  ``game`` has ``n_actions``, ``legal(s) -> list[bool]``,
    ``mover(s)``, ``terminal(s)``, ``step(s, a) -> (s', reward of the mover)``;
    ``evaluate(s) -> (logits [A], value for the mover of s)``."""

    def __init__(self, game, evaluate, cfg: Config):
        self.game, self.evaluate, self.cfg = game, evaluate, cfg
        self.A = game.n_actions

    # -- tree --------------------------------------------------------------------------------------

    def _node(self, state) -> Node:
        g = self.game
        legal = list(g.legal(state))
        terminal = g.terminal(state)
        if terminal:
            logits, value = [0.0] * self.A, 0.0
        else:
            logits, value = self.evaluate(state)
            logits = list(logits)
        m = max(logits[a] for a in range(self.A) if legal[a]) if any(legal) else 0.0
        masked = [logits[a] - m if legal[a] else MASKED for a in range(self.A)]
        n = Node(state, g.mover(state) if not terminal else -1, masked, value, legal, terminal)
        n.value = value
        return n

    def qvalues(self, node: Node) -> list[float]:
        return [
            node.rewards[a] + node.discounts[a] * node.children[a].value if a in node.children else 0.0
            for a in range(self.A)
        ]

    def child_visits(self, node: Node) -> list[int]:
        return [node.children[a].visits if a in node.children else 0 for a in range(self.A)]

    # -- qtransform_completed_by_mix_value ----------------------------------------------------------

    def completed_sigma(self, node: Node) -> list[float]:
        c = self.cfg
        q = self.qvalues(node)
        n = self.child_visits(node)
        prior = softmax(node.logits)
        if c.use_mixed_value:
            total = sum(n)
            prior = [max(TINY, p) for p in prior]
            sum_p = sum(p for p, k in zip(prior, n, strict=True) if k > 0)
            wq = sum(p * qq / sum_p for p, qq, k in zip(prior, q, n, strict=True) if k > 0)
            value = (node.raw_value + total * wq) / (total + 1)
        else:
            value = node.raw_value
        completed = [qq if k > 0 else value for qq, k in zip(q, n, strict=True)]
        if c.rescale_values:
            lo, hi = min(completed), max(completed)
            completed = [(x - lo) / max(hi - lo, EPS) for x in completed]
        scale = (c.c_visit + max(n)) * c.c_scale
        return [scale * x for x in completed]

    # -- action selection ---------------------------------------------------------------------------

    def score_considered(self, considered: int, gumbel, node: Node, sigma) -> list[float]:
        m = max(node.logits)
        out = []
        for a in range(self.A):
            s = max(LOW_LOGIT, gumbel[a] + node.logits[a] - m + sigma[a])
            k = node.children[a].visits if a in node.children else 0
            out.append(s if k == considered else -math.inf)
        return out

    def root_action(self, root: Node, gumbel) -> int:
        c = self.cfg
        n_valid = sum(root.legal)
        k = min(c.max_num_considered_actions, n_valid)
        sim = sum(self.child_visits(root))
        considered = considered_visits(k, c.num_simulations)[sim]
        scores = self.score_considered(considered, gumbel, root, self.completed_sigma(root))
        scores = [s if root.legal[a] else -math.inf for a, s in enumerate(scores)]
        return argmax(scores)

    def interior_action(self, node: Node) -> int:
        n = self.child_visits(node)
        sigma = self.completed_sigma(node)
        probs = softmax([lg + s for lg, s in zip(node.logits, sigma, strict=True)])
        total = sum(n)
        return argmax([p - k / (1 + total) for p, k in zip(probs, n, strict=True)])

    # -- search -------------------------------------------------------------------------------------

    def run(self, root_state, gumbel=None) -> dict:
        """Returns ``action``, ``visits`` (root children, A-wide), ``target`` (A-wide action
        weights) and ``sigma`` of the finished search."""
        c = self.cfg
        gumbel = gumbel or [0.0] * self.A
        root = self._node(root_state)
        for _ in range(c.num_simulations):
            path = []
            node = root
            while True:
                a = self.root_action(root, gumbel) if node is root else self.interior_action(node)
                path.append((node, a))
                if a not in node.children:
                    child_state, reward = self.game.step(node.state, a)
                    child = self._node(child_state)
                    node.rewards[a] = reward
                    if child.terminal:
                        node.discounts[a] = 0.0
                    else:
                        node.discounts[a] = c.gamma if child.mover == node.mover else -c.gamma
                    node.children[a] = child
                    leaf_value = child.value
                    break
                node = node.children[a]
                if node.terminal:
                    # mctx expands a dummy child (reward 0, value 0, discount 0): the terminal
                    # node's value stays 0 and it counts one more visit
                    node.visits += 1
                    leaf_value = 0.0
                    break
            for p, act in reversed(path):
                leaf_value = p.rewards[act] + p.discounts[act] * leaf_value
                p.value = (p.value * p.visits + leaf_value) / (p.visits + 1)
                p.visits += 1
        visits = self.child_visits(root)
        sigma = self.completed_sigma(root)
        considered = max(visits)
        scores = self.score_considered(considered, gumbel, root, sigma)
        scores = [s if root.legal[a] else -math.inf for a, s in enumerate(scores)]
        action = argmax(scores)
        logits = [lg + s if root.legal[a] else MASKED for a, (lg, s) in enumerate(zip(root.logits, sigma, strict=True))]
        target = softmax(logits)
        return {"action": action, "visits": visits, "target": target, "sigma": sigma}
