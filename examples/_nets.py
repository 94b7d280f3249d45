"""Small networks for the ``train_*`` examples: a NumPy MLP with Adam, or the same MLP in PyTorch.

The examples compute every loss in NumPy *on the network's outputs* and hand this module the
gradient of the loss with respect to those outputs (``d_out``); the backend back-propagates it
and takes one Adam step.  So one loss implementation serves both backends, and the NumPy path
(no PyTorch needed) trains the same model the PyTorch path does::

    net = make_mlp([84, 128, 128, 8], backend="auto", lr=1e-3, seed=0)
    out = net(obs)                         # float32 (rows, 8), inference only
    loss = net.train_step(x, loss_and_grad)  # loss_and_grad(out) -> (loss, d_out)
    frozen = net.copy()                    # the two-network pattern: a stable copy for a stream
    frozen.load_from(net)                  # sync it in place between batches
    path = net.save("ckpt/final", {"gamma": 0.97})  # "ckpt/final.npz" (NumPy) or ".pt" (PyTorch)
    net, meta = load_net(path)             # either backend's file; a .npz never imports torch

``backend="auto"`` picks PyTorch when ``import torch`` works (``pip install 'reinfors[train]'``)
and NumPy otherwise.  Import this module from an example with ``sys.path`` holding the
``examples/`` folder (a script run as ``python examples/x.py`` has it).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

LossFn = Callable[[np.ndarray], tuple[float, np.ndarray]]


def torch_available() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def _connect4_lines() -> np.ndarray:
    """``(42, 69)`` 0/1: cell ``r * 7 + c`` (row 0 at the bottom) belongs to each of the 69 four-cell lines."""
    lines = []
    for r in range(6):
        for c in range(7):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (-1, 1)):
                cells = [(r + k * dr, c + k * dc) for k in range(4)]
                if all(0 <= rr < 6 and 0 <= cc < 7 for rr, cc in cells):
                    lines.append([rr * 7 + cc for rr, cc in cells])
    m = np.zeros((42, len(lines)), np.float32)
    for j, cells in enumerate(lines):
        m[cells, j] = 1.0
    return m


C4_LINES = _connect4_lines()


def connect4_threats(obs: np.ndarray) -> np.ndarray:
    """Connect4 board ``(rows, 84)`` (plane 0 the mover's stones, plane 1 the opponent's, rows bottom
    first) -> ``(rows, 182)``: the board, then the cells that would complete a four for the mover (42)
    and for the opponent (42), then the columns where the mover wins at once (7) and where the
    opponent would (7).  A fixed first layer, as a convolution over the 69 lines would learn: the
    MLP above it sees threats without having to discover four-in-a-row from raw cells."""
    x = np.asarray(obs, np.float32)
    me, opp = x[:, :42], x[:, 42:84]
    empty = 1.0 - me - opp
    mine, theirs = me @ C4_LINES, opp @ C4_LINES  # stones of each side on each line
    my_cells = (((mine == 3) & (theirs == 0)).astype(np.float32) @ C4_LINES.T > 0) & (empty > 0)
    op_cells = (((theirs == 3) & (mine == 0)).astype(np.float32) @ C4_LINES.T > 0) & (empty > 0)
    support = np.concatenate([np.ones((len(x), 7), np.float32), (me + opp)[:, :35]], axis=1)  # the cell below is filled
    playable = (empty > 0) & (support > 0)
    wins = (my_cells & playable).reshape(-1, 6, 7).any(axis=1)
    blocks = (op_cells & playable).reshape(-1, 6, 7).any(axis=1)
    return np.concatenate([x, my_cells, op_cells, wins, blocks], axis=1, dtype=np.float32)


# input transforms a network can be built with (by name, so a checkpoint can name its own)
FEATURES = {None: None, "connect4_threats": connect4_threats}
FEATURE_SIZES = {None: 0, "connect4_threats": 98}


def make_mlp(
    sizes: Sequence[int], backend: str = "auto", lr: float = 1e-3, seed: int = 0, weight_decay: float = 0.0,
    features: str | None = None,
):  # fmt: skip
    """A ReLU MLP ``sizes[0] -> ... -> sizes[-1]`` (linear output) with an Adam optimiser.

    ``features`` names an input transform of :data:`FEATURES` applied to every input first (the
    layer sizes then start at the transformed width: ``sizes[0] + FEATURE_SIZES[features]``)."""
    if backend not in ("auto", "numpy", "torch"):
        raise ValueError(f"backend must be auto, numpy or torch; got {backend!r}")
    if features not in FEATURES:
        raise ValueError(f"features must be one of {sorted(k for k in FEATURES if k)} or None; got {features!r}")
    sizes = [sizes[0] + FEATURE_SIZES[features], *sizes[1:]]
    if backend == "torch" or (backend == "auto" and torch_available()):
        return TorchMlp(sizes, lr=lr, seed=seed, weight_decay=weight_decay, features=features)
    return NumpyMlp(sizes, lr=lr, seed=seed, weight_decay=weight_decay, features=features)


SUFFIXES = {"numpy": ".npz", "torch": ".pt"}


def load_net(path, lr: float = 1e-3):
    """``(net, meta)`` from a checkpoint written by ``save``: a ``.npz`` loads as a :class:`NumpyMlp`
    without importing torch, a ``.pt`` as a :class:`TorchMlp` (needs torch).  ``meta`` is the dict
    given to ``save`` (the training settings an evaluator needs, e.g. the discount ``gamma``)."""
    path = Path(path)
    if path.suffix == ".npz":
        with np.load(path, allow_pickle=False) as f:
            meta = json.loads(str(f["meta"]))
            sizes = [int(v) for v in f["sizes"]]
            params = [f[f"p{i}"] for i in range(2 * (len(sizes) - 1))]
        net = NumpyMlp(sizes, lr=lr, features=meta.get("features"))
        for p, q in zip(net.params, params, strict=True):
            if p.shape != q.shape:
                raise ValueError(f"{path}: parameter of shape {q.shape}, expected {p.shape}")
            p[...] = q
        return net, meta
    if path.suffix == ".pt":
        import torch

        blob = torch.load(path, map_location="cpu", weights_only=True)
        meta = json.loads(blob["meta"])
        net = TorchMlp([int(v) for v in blob["sizes"]], lr=lr, features=meta.get("features"))
        net.model.load_state_dict(blob["state_dict"])
        return net, meta
    raise ValueError(f"checkpoint must be a .npz (NumPy) or .pt (PyTorch) file; got {str(path)!r}")


class NumpyMlp:
    """float32 ReLU MLP, He-initialised, trained with Adam (bias-corrected, optional L2 decay)."""

    backend = "numpy"

    def __init__(self, sizes: Sequence[int], lr: float = 1e-3, seed: int = 0, weight_decay: float = 0.0, features=None):
        rs = np.random.default_rng(seed)
        self.sizes = list(sizes)
        self.features = features
        self.params: list[np.ndarray] = []
        for i, (a, b) in enumerate(zip(self.sizes[:-1], self.sizes[1:], strict=True)):
            scale = np.sqrt(2.0 / a) if i < len(self.sizes) - 2 else np.sqrt(1.0 / a) * 0.5
            self.params.append((rs.standard_normal((a, b)) * scale).astype(np.float32))
            self.params.append(np.zeros(b, np.float32))
        self.lr, self.weight_decay = lr, weight_decay
        self.m = [np.zeros_like(p) for p in self.params]
        self.v = [np.zeros_like(p) for p in self.params]
        self.t = 0

    def _input(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(x, np.float32) if self.features is None else FEATURES[self.features](x)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        h = self._input(x)
        n = len(self.params) // 2
        for i in range(n):
            h = h @ self.params[2 * i] + self.params[2 * i + 1]
            if i < n - 1:
                h = np.maximum(h, 0.0)
        return h

    def train_step(self, x: np.ndarray, loss_fn: LossFn) -> float:
        """Forward ``x``, ask ``loss_fn(out) -> (loss, d_loss/d_out)``, back-propagate, one Adam step."""
        loss, grads = self.gradients(x, loss_fn)
        self.t += 1
        b1, b2, eps = 0.9, 0.999, 1e-8
        c1, c2 = 1.0 - b1**self.t, 1.0 - b2**self.t
        for p, g, m, v in zip(self.params, grads, self.m, self.v, strict=True):
            if self.weight_decay and p.ndim == 2:
                g = g + self.weight_decay * p
            m *= b1
            m += (1.0 - b1) * g
            v *= b2
            v += (1.0 - b2) * (g * g)
            p -= (self.lr * (m / c1) / (np.sqrt(v / c2) + eps)).astype(p.dtype)
        return float(loss)

    def gradients(self, x: np.ndarray, loss_fn: LossFn) -> tuple[float, list[np.ndarray]]:
        """``(loss, d_loss/d_param for every parameter)`` by back-propagating ``loss_fn``'s ``d_out``."""
        dtype = self.params[0].dtype
        acts = [self._input(x).astype(dtype, copy=False)]
        n = len(self.params) // 2
        h = acts[0]
        for i in range(n):
            h = h @ self.params[2 * i] + self.params[2 * i + 1]
            if i < n - 1:
                h = np.maximum(h, 0.0)
            acts.append(h)
        loss, d = loss_fn(h)
        d = np.asarray(d, dtype)
        grads: list[np.ndarray] = [None] * len(self.params)  # type: ignore[list-item]
        for i in reversed(range(n)):
            grads[2 * i] = acts[i].T @ d
            grads[2 * i + 1] = d.sum(axis=0)
            if i > 0:
                d = (d @ self.params[2 * i].T) * (acts[i] > 0)
        return float(loss), grads

    def set_lr(self, lr: float) -> None:
        """The learning rate of the next Adam steps (a schedule calls this between steps)."""
        self.lr = float(lr)

    def copy(self) -> NumpyMlp:
        twin = NumpyMlp.__new__(NumpyMlp)
        twin.sizes, twin.lr, twin.weight_decay, twin.t = list(self.sizes), self.lr, self.weight_decay, 0
        twin.features = self.features
        twin.params = [p.copy() for p in self.params]
        twin.m = [np.zeros_like(p) for p in self.params]
        twin.v = [np.zeros_like(p) for p in self.params]
        return twin

    def load_from(self, other: NumpyMlp) -> None:
        """Copy ``other``'s weights into this network in place (optimiser state untouched)."""
        for p, q in zip(self.params, other.params, strict=True):
            p[...] = q

    def n_params(self) -> int:
        return int(sum(p.size for p in self.params))

    def save(self, stem, meta: dict | None = None) -> Path:
        """Write ``<stem>.npz`` (sizes, parameters, ``meta`` as JSON); returns the path."""
        path = Path(f"{stem}{SUFFIXES[self.backend]}")
        path.parent.mkdir(parents=True, exist_ok=True)
        arrays = {f"p{i}": p for i, p in enumerate(self.params)}
        meta = {**(meta or {}), "features": self.features}
        np.savez(path, sizes=np.array(self.sizes, np.int64), meta=np.array(json.dumps(meta)), **arrays)
        return path


class TorchMlp:
    """The same MLP in PyTorch (CPU, one thread); losses still come from NumPy as ``d_out``."""

    backend = "torch"

    def __init__(self, sizes: Sequence[int], lr: float = 1e-3, seed: int = 0, weight_decay: float = 0.0, features=None):
        import torch
        from torch import nn

        self.features = features
        torch.manual_seed(seed)
        torch.set_num_threads(1)  # small networks: leave the cores to the engine's workers
        layers: list = []
        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
            layers.append(nn.Linear(a, b))
            if i < len(sizes) - 2:
                layers.append(nn.ReLU())
        self.sizes = list(sizes)
        self.lr, self.weight_decay = lr, weight_decay
        self.model = nn.Sequential(*layers)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=lr, weight_decay=weight_decay)
        self._torch = torch

    def _input(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(x, np.float32) if self.features is None else FEATURES[self.features](x)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        torch = self._torch
        with torch.no_grad():
            return self.model(torch.tensor(self._input(x))).numpy()

    def train_step(self, x: np.ndarray, loss_fn: LossFn) -> float:
        torch = self._torch
        out = self.model(torch.tensor(self._input(x)))
        loss, d = loss_fn(out.detach().numpy().copy())
        self.opt.zero_grad()
        out.backward(torch.from_numpy(np.asarray(d, np.float32)))
        self.opt.step()
        return float(loss)

    def set_lr(self, lr: float) -> None:
        """The learning rate of the next Adam steps (a schedule calls this between steps)."""
        self.lr = float(lr)
        for group in self.opt.param_groups:
            group["lr"] = self.lr

    def copy(self) -> TorchMlp:
        import copy

        twin = TorchMlp.__new__(TorchMlp)
        twin.sizes, twin.lr, twin.weight_decay, twin._torch = list(self.sizes), self.lr, self.weight_decay, self._torch
        twin.features = self.features
        twin.model = copy.deepcopy(self.model)
        twin.opt = self._torch.optim.Adam(twin.model.parameters(), lr=self.lr, weight_decay=self.weight_decay)
        return twin

    def load_from(self, other: TorchMlp) -> None:
        self.model.load_state_dict(other.model.state_dict())

    def n_params(self) -> int:
        return int(sum(p.numel() for p in self.model.parameters()))

    def save(self, stem, meta: dict | None = None) -> Path:
        """Write ``<stem>.pt`` (sizes, state dict, ``meta`` as JSON); returns the path."""
        path = Path(f"{stem}{SUFFIXES[self.backend]}")
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = {**(meta or {}), "features": self.features}
        blob = {"sizes": list(self.sizes), "state_dict": self.model.state_dict(), "meta": json.dumps(meta)}
        self._torch.save(blob, path)
        return path


def softmax_masked(logits: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Row softmax over the entries where ``mask`` is true (float64 result)."""
    z = np.where(mask, logits.astype(np.float64), -np.inf)
    z -= z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def csr_mask(offsets: np.ndarray, ids: np.ndarray, n_actions: int) -> np.ndarray:
    """A ``(rows, n_actions)`` bool mask from a CSR of legal ids (``ids[offsets[i]:offsets[i+1]]``)."""
    rows = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    mask = np.zeros((len(offsets) - 1, n_actions), bool)
    mask[rows, ids] = True
    return mask

