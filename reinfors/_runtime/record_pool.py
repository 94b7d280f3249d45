"""The record pool: records completed in the kernels, handed over per window in canonical order.

A window delivers the records below its cut (:meth:`RecordPool._cut_at`) ordered by (decision
level, slot, sequence); the others (open trajectories, records completed beyond the cut) stay.
"""

from __future__ import annotations

import numpy as np

from reinfors.jit import engine_codes as C
from reinfors.jit import records as _records


def _bytes(arr: np.ndarray) -> np.ndarray:
    """A C-contiguous ``[M, W]`` pool array as its ``[M, W * itemsize] uint8`` view: the row
    kernels compile once, not once per dtype."""
    return arr.view(np.uint8)


def _shrink_rows(arr: np.ndarray, m: int) -> np.ndarray:
    """The first ``m`` rows of ``arr`` as an array of their own: shrunk in place (the tail's
    memory is released, no copy) when ``arr`` owns its buffer, else copied."""
    if arr.flags.owndata and arr.base is None and arr.flags.c_contiguous:
        arr.resize((m,) + arr.shape[1:], refcheck=False)
        return arr
    return arr[:m].copy()


# A delivery of at most this many bytes is copied out of the pool rather than handed over as the
# pool's own arrays (see ``_split_pool_locked``): the copy costs less than a fresh pool.
COPY_OUT_BYTES = 16 << 20


class RecordPool:
    """The record pool's hand-over (a mixin of ``Runtime``)."""

    # Record-pool arrays: rows are records (their count may differ from engine to engine).
    POOL_ARRAYS = ("r_meta", "r_f", "r_obs", "r_next_obs", "r_mask", "r_legal", "r_next_legal", "r_tgt")

    def carried(self) -> int:
        """Records completed (emitted) but not yet delivered: a window cut below them."""
        n = int(self.ctl[C.C_REC])
        return int(np.count_nonzero(self._arrays["r_meta"][:n, C.RM_LEVEL] >= 0))

    def _keys(self, level: np.ndarray, slot: np.ndarray) -> np.ndarray:
        """Completion keys ``level * n_games + slot``: the order in which 0.4.0's scheduler meets
        completed records (decision level, then slot)."""
        return level * self.G + slot

    def _cut_at(self, floor: int) -> int:
        """The window's cut: the smallest completion key (:meth:`_keys`) such that the emitted
        records below it reach ``floor``.  Those are delivered; records completed later stay in
        the pool for the next window — a window overshoots its floor by at most the records one
        slot completed at one level, as 0.4.0 stops admitting decisions once the floor is reached."""
        n = int(self.ctl[C.C_REC])
        meta = self._arrays["r_meta"][:n]
        done = meta[:, C.RM_LEVEL] >= 0
        keys = self._keys(meta[done, C.RM_LEVEL], meta[done, C.RM_SLOT])
        return int(np.partition(keys, floor - 1)[floor - 1]) + 1

    def take_records(self) -> dict[str, np.ndarray]:
        """Hand the finished window's records over, in batch order, and keep the others.

        Returns ``{pool array name: [m, ...] array}`` holding the ``m`` emitted records below the
        window's cut (:meth:`_cut_at`) ordered by (decision level, slot, sequence) — the canonical
        order that makes batches identical at any ``n_threads``.  When the delivered records are
        most of the pool and more than :data:`COPY_OUT_BYTES`, every pool array is permuted in
        place (delivered records first, then the kept ones — open trajectories and records
        completed beyond the cut) and the delivered prefix is handed out without a copy (the
        array is shrunk to ``m`` rows) while the kept records move into fresh pool arrays;
        otherwise the delivered rows are copied out and the kept rows beyond the kept count fill
        their holes (the pool keeps its arrays).  The trajectory lists are rewritten
        either way.  So a large batch costs its own bytes once, not a pool copy beside it.
        ``r_tgt`` rows hold their leading ``RM_NTGT`` columns only (AlphaZero's compact targets:
        the batch scatters them); the rest of a row is stale.  Only between windows.
        """
        n = int(self.ctl[C.C_REC])
        meta = self._arrays["r_meta"][:n]
        lv = meta[:, C.RM_LEVEL]
        return self._split_pool((lv >= 0) & (self._keys(lv, meta[:, C.RM_SLOT]) < self.cut))

    def reset_pool(self) -> None:
        """Drop the records this window emitted (it failed or was aborted); open trajectories
        and the records an earlier window carried over stay."""
        n = int(self.ctl[C.C_REC])
        lv = self._arrays["r_meta"][:n, C.RM_LEVEL]
        self._split_pool(lv >= self.window_base)
        eps = self._arrays["episodes"]
        n = int(self.ctl[C.C_EPISODES])
        kept = eps[:n][eps[:n, 2] < self.window_base]
        eps[: len(kept)] = kept
        self.ctl[C.C_EPISODES] = len(kept)

    def take_episodes(self) -> np.ndarray:
        """The episode log rows (slot, length, end level, returns, seeded) of the episodes that
        ended below the window's cut; later ones stay logged for the next window."""
        eps = self._arrays["episodes"]
        n = int(self.ctl[C.C_EPISODES])
        early = self._keys(eps[:n, 2].astype(np.int64), eps[:n, 0].astype(np.int64)) < self.cut
        out, later = eps[:n][early], eps[:n][~early]
        eps[: len(later)] = later
        self.ctl[C.C_EPISODES] = len(later)
        return out

    def _split_pool(self, hand: np.ndarray) -> dict[str, np.ndarray]:
        """Move the records selected by ``hand`` (a mask over the pool) out, in (level, slot,
        sequence) order, keeping the others in pool order."""
        with self._helpers_out():
            return self._split_pool_locked(hand)

    def _split_pool_locked(self, hand: np.ndarray) -> dict[str, np.ndarray]:
        a = self._arrays
        n = int(self.ctl[C.C_REC])
        meta = a["r_meta"]
        out_idx = np.flatnonzero(hand)
        keep = np.flatnonzero(~hand)
        order = np.lexsort((meta[out_idx, C.RM_SEQ], meta[out_idx, C.RM_SLOT], meta[out_idx, C.RM_LEVEL]))
        m, k = len(out_idx), len(keep)
        # Whichever side is smaller moves: mostly delivered records (a large collect) leave as the
        # pool's own arrays and the kept ones move to fresh arrays; mostly kept records (long
        # open trajectories: chess games of hundreds of plies) stay where they are and the
        # delivered ones are copied out.  Either way at most half the pool is copied, never all
        # of it, except that a small delivery (at most COPY_OUT_BYTES) is copied out whatever its
        # share: the pool then keeps its arrays, their pages already mapped, and the next window
        # neither allocates nor regrows them (a 2,048-record window of a fast game spent ~40 % of
        # its wall there).
        # A pool kept in place keeps its capacity: at most 4x its records (it grows by
        # doubling and holds at least as many records as it delivered), or a few COPY_OUT_BYTES;
        # snapshots carry its records only.  Pool order carries no meaning (batches are sorted
        # by completion key and trajectories address records by index), so a kept pool fills
        # its holes from its tail.
        row_bytes = sum(a[name].strides[0] for name in self.POOL_ARRAYS if a[name].shape[0])
        keep_in_place = m <= k or m * row_bytes <= COPY_OUT_BYTES
        sel = out_idx[order]
        del order
        # A record's search targets are the leading RM_NTGT columns of its r_tgt row (AlphaZero:
        # one per legal action, 30 of chess's 4,672); only those move.  Read before r_meta moves.
        ntgt = meta[:n, C.RM_NTGT].copy()

        def width(name, rows):  # the leading bytes that rows (pool indices) hold
            if name == "r_tgt":
                return ntgt[rows] * a[name].itemsize
            return np.full(len(rows), a[name].shape[1] * a[name].itemsize, np.int64)

        every = np.arange(n, dtype=np.int64)
        out = {}
        if keep_in_place:
            holes = out_idx[out_idx < k]  # delivered rows inside the kept prefix ...
            movers = keep[keep >= k]  # ... receive the kept rows beyond it (as many)
            del out_idx
            for name in self.POOL_ARRAYS:
                arr = a[name]
                if arr.shape[0] == 0:  # DQN-only arrays of another learner
                    out[name] = arr
                    continue
                if name == "r_tgt":
                    out[name] = np.zeros((m, int(ntgt[sel].max(initial=0))), arr.dtype)
                    _records.copy_rows(_bytes(arr), sel, _bytes(out[name]), every[:m], width(name, sel))
                else:
                    out[name] = np.take(arr, sel, axis=0)  # 2-9x faster than arr[sel] on these rows
                if arr.shape[1]:
                    b = _bytes(arr)
                    _records.copy_rows(b, movers, b, holes, width(name, movers))
                    if name != "r_tgt" or not self.compact_targets:
                        arr[k:n] = 0  # rows past the pool's count read as fresh (zeroed) rows
            inv = np.arange(n, dtype=np.int64)
            inv[movers] = holes
            inv[sel] = -1
            del holes, movers
        else:
            perm = np.concatenate((sel, keep))
            del out_idx
            seen = np.zeros(n, np.uint8)
            for name in self.POOL_ARRAYS:
                if a[name].shape[0] and a[name].shape[1]:
                    _records.permute_rows(_bytes(a[name]), perm, n, seen, width(name, every))
            inv = np.empty(n, np.int64)
            inv[perm] = every - m
            del perm, seen
            cap = max(k, 64)
            for name in self.POOL_ARRAYS:
                old = a[name]
                if old.shape[0] == 0:
                    out[name] = old
                    continue
                fresh = np.zeros((cap,) + old.shape[1:], old.dtype)
                if name == "r_tgt":
                    _records.copy_rows(_bytes(old), every[m : m + k], _bytes(fresh), every[:k], width(name, keep))
                else:
                    fresh[:k] = old[m : m + k]
                a[name] = fresh
                out[name] = _shrink_rows(old, m)
            self.ctl[C.C_REC_CAP] = cap
            self._build_E()  # fresh pool arrays: new addresses
        # Open trajectories reference only kept records: old index -> new index in the kept pool.
        ti, tc = a["traj_idx"], a["traj_cnt"]
        live = np.arange(ti.shape[2])[None, None, :] < tc[:, :, None]
        ti[live] = np.maximum(inv[ti[live]], -1)
        del inv, live
        self.ctl[C.C_REC] = k
        self.ctl[C.C_EMITTED] = int(np.count_nonzero(a["r_meta"][:k, C.RM_LEVEL] >= 0))
        return out
