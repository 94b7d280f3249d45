"""A runtime's state for ``Engine.snapshot`` / ``Engine.restore``: export, validation, adoption.

:meth:`SnapshotState.check_state` bounds every index a restored array holds before any kernel
reads it (the kernels index unchecked).
"""

from __future__ import annotations

import math

import numpy as np

from reinfors.jit import engine_codes as C

from . import schema as _schema


class SnapshotState:
    """Snapshot export, validation and restore (a mixin of ``Runtime``)."""

    # The arrays that carry a slot's state from one collect window to the next, in a snapshot
    # blob's order (reinfors/jit/engine_schema.py says which and why).
    SNAPSHOT_ARRAYS = _schema.SNAPSHOT_ARRAYS

    # ctl words that carry across windows (the others are per-window, or route geometry).
    SNAPSHOT_CTL = {"target": C.C_TARGET, "rec": C.C_REC, "episodes": C.C_EPISODES, "emitted": C.C_EMITTED}

    def state_dict(self) -> tuple[dict, dict]:
        """``(arrays, scalars)``: copies of the :attr:`SNAPSHOT_ARRAYS`, and the ctl words of
        :attr:`SNAPSHOT_CTL` plus the window counters (``rate``, ``levels_done``,
        ``records_done``).  Only between windows (no worker inside a kernel)."""
        # Of the record pool only its records (at least 64 rows, as a window's split leaves a
        # fresh pool): a pool kept in place by _split_pool has spare capacity, which a snapshot
        # need not carry.  The arrays keep SNAPSHOT_ARRAYS' order (the blob's layout).
        rows = max(int(self.ctl[C.C_REC]), 64)
        arrays = {
            n: (self._arrays[n][:rows] if n in self.POOL_ARRAYS else self._arrays[n]).copy()
            for n in self.SNAPSHOT_ARRAYS
            if not n.startswith("c_")
        }
        scalars = {k: int(self.ctl[i]) for k, i in self.SNAPSHOT_CTL.items()}
        scalars.update(rate=float(self.rate), levels_done=int(self.levels_done), records_done=int(self.records_done))
        self._canonical(arrays, int(self.ctl[C.C_REC]), scalars["episodes"])
        return arrays, scalars

    def _canonical(self, arrays: dict, n: int, n_eps: int) -> None:
        """Put the copied pool and episode log in canonical order, in place, so a snapshot's
        bytes depend only on the seed (workers append records and episodes in the order they
        happen to finish them).  Records: the completed ones by (level, slot, sequence), then the
        open ones in the order the trajectory lists reach them (slot, player, position), then any
        other; ``traj_idx`` follows (its stale entries past a list's count read 0).  Rows past the records, and the stale columns of a compact
        target row past its ``RM_NTGT``, read as zeros.  Episodes: by (end level, slot)."""
        meta = arrays["r_meta"]
        lv = meta[:n, C.RM_LEVEL]
        done = np.flatnonzero(lv >= 0)
        done = done[np.lexsort((meta[done, C.RM_SEQ], meta[done, C.RM_SLOT], lv[done]))]
        ti, tc = arrays["traj_idx"], arrays["traj_cnt"]
        live = np.arange(ti.shape[2])[None, None, :] < tc[:, :, None]
        placed = np.zeros(n, bool)
        placed[done] = True
        refs = ti[live]
        refs = refs[(refs >= 0) & (refs < n)]
        _, first = np.unique(refs, return_index=True)
        opened = refs[np.sort(first)]
        opened = opened[~placed[opened]]
        placed[opened] = True
        perm = np.concatenate((done, opened, np.flatnonzero(~placed))).astype(np.int64)
        inv = np.empty(n, np.int64)
        inv[perm] = np.arange(n, dtype=np.int64)
        for name in self.POOL_ARRAYS:
            a = arrays[name]
            if a.shape[0] == 0:
                continue
            a[:n] = a[perm]
            a[n:] = 0
        if self.compact_targets and arrays["r_tgt"].shape[0]:
            tgt, ntgt = arrays["r_tgt"], arrays["r_meta"][:n, C.RM_NTGT]
            tgt[:n][np.arange(tgt.shape[1])[None, :] >= ntgt[:, None]] = 0.0
        idx = ti[live]
        ok = (idx >= 0) & (idx < n)
        idx[ok] = inv[idx[ok]]
        ti[live] = idx
        ti[~live] = 0  # stale entries past a list's count
        eps = arrays["episodes"]
        head = eps[:n_eps]
        eps[:n_eps] = head[np.lexsort((head[:, 0], head[:, 2]))]

    def check_state(self, arrays: dict, scalars: dict) -> str | None:
        """``None`` when ``(arrays, scalars)`` (as :meth:`state_dict` returns them) fit this
        runtime — names, dtypes, shapes, index ranges, statuses, counters — else the reason.
        Reads only; the kernels index with these values unchecked, so every index is bounded."""
        if set(arrays) != set(self.SNAPSHOT_ARRAYS):
            return f"arrays {sorted(set(arrays) ^ set(self.SNAPSHOT_ARRAYS))} missing or unexpected"
        for name in self.SNAPSHOT_ARRAYS:
            a, mine = arrays[name], self._arrays[name]
            if a.dtype != mine.dtype or a.ndim != mine.ndim:
                return f"array {name} has dtype {a.dtype} / {a.ndim} dims, expected {mine.dtype} / {mine.ndim}"
            if name in self.POOL_ARRAYS or name == "episodes":
                fixed = a.shape[1:] == mine.shape[1:]
            elif name == "traj_idx":
                fixed = a.shape[:2] == mine.shape[:2]
            elif name == "sb_states":  # rows: the states held so far, at most the capacity
                fixed = a.shape[::2] == mine.shape[::2] and 1 <= a.shape[1] <= max(1, int(self.cfg[C.CFG_SB]))
            else:
                fixed = a.shape == mine.shape
            if not fixed:
                return f"array {name} has shape {a.shape}, which does not fit this engine ({mine.shape})"
        G, N, A = self.G, self.N, self.A
        pool = arrays["r_meta"].shape[0]
        dqn = self.learner_kind == C.LEARNER_DQN
        for name in self.POOL_ARRAYS:
            rows = arrays[name].shape[0]
            want = 0 if name in ("r_next_obs", "r_next_legal") and not dqn else pool
            if rows != want:
                return f"record pool array {name} has {rows} rows, expected {want}"
        rec, eps = scalars["rec"], scalars["episodes"]
        if not 0 <= rec <= pool:
            return f"record cursor {rec} outside the pool of {pool} records"
        if not 0 <= eps <= arrays["episodes"].shape[0]:
            return f"episode cursor {eps} outside the episode log"
        sinfo = arrays["sinfo"]
        st = sinfo[:, C.SI_STATUS]
        if not np.isin(st, (C.ST_EMIT, C.ST_PARK)).all():
            return f"slot status {int(st[~np.isin(st, (C.ST_EMIT, C.ST_PARK))][0])} out of range between windows"
        level = sinfo[:, C.SI_LEVEL]
        if (level < 0).any() or (sinfo[:, C.SI_SEQ] < 0).any() or (sinfo[:, C.SI_EPLEN] < 0).any():
            return "negative slot counters"
        if scalars["target"] < 0:
            return "negative window target"
        quiet = (C.SI_OBSERVED, C.SI_NTAIL, C.SI_TAILKIND, C.SI_WINREC, C.SI_SEARCH, C.SI_SXJ)
        if (sinfo[:, quiet] != 0).any():
            return "a slot is in the middle of a decision (observation, tail or search under way)"
        # Per-decision columns hold the last decision's values; keep them within the geometry
        # anyway (a forged one must never become an out-of-range index).
        nodes = int(self.cfg[C.CFG_NODES])
        path = self.search["path"] if self.search is not None else 0
        rows = self.max_rows
        for cols, hi in (((C.SI_NACT,), N), ((C.SI_ROWS, C.SI_NNEW, C.SI_NOPP, C.SI_NBATCH), rows),
                         ((C.SI_NNODES, C.SI_LEAF, C.SI_NFRONT, C.SI_FAN0, C.SI_FANN), nodes),
                         ((C.SI_PLEN,), path), ((C.SI_FBUF,), 1)):  # fmt: skip
            if ((sinfo[:, cols] < 0) | (sinfo[:, cols] > hi)).any():
                return f"per-decision slot columns {cols} outside [0, {hi}]"
        if (sinfo[:, C.SI_FAN0] + sinfo[:, C.SI_FANN] > nodes).any():
            return "outcome fan outside the tree"
        heads = int(self.cfg[C.CFG_HEADS])
        if ((sinfo[:, C.SI_HEAD] < 0) | (sinfo[:, C.SI_HEAD] >= max(1, heads))).any():
            return "Q head index out of range"
        if (arrays["pending"] != 0).any():
            return "rows still outstanding"
        if (arrays["tele"] < 0).any():
            return "negative telemetry counters"
        cnt, idx = arrays["traj_cnt"], arrays["traj_idx"]
        if ((cnt < 0) | (cnt > idx.shape[2])).any():
            return "trajectory length out of range"
        used = np.arange(idx.shape[2])[None, None, :] < cnt[:, :, None]
        refs = idx[used]
        if ((refs < 0) | (refs >= rec)).any():
            return "trajectory entry outside the record pool"
        if len(np.unique(refs)) != len(refs):
            return "a record belongs to two trajectories"
        meta = arrays["r_meta"][:rec]
        # Between windows the pool holds open records (level -1) and records completed beyond
        # the last window's cut (a level below every slot's), counted by the emitted word; the
        # episode log holds only the episodes of those.
        lv = meta[:, C.RM_LEVEL]
        low = int(level.min()) if G else 0
        if ((lv < -1) | (lv >= low)).any():
            return "a pool record's level is not below every slot's level"
        if scalars["emitted"] != int(np.count_nonzero(lv >= 0)):
            return "the snapshot was not taken between windows (emitted records pending)"
        if ((arrays["episodes"][:eps, 2] < 0) | (arrays["episodes"][:eps, 2] >= low)).any():
            return "an episode log entry is not below every slot's level"
        if (lv[refs] != -1).any():
            return "a trajectory holds a completed record"
        if ((meta[:, C.RM_SLOT] < 0) | (meta[:, C.RM_SLOT] >= G)).any():
            return "record slot out of range"
        if ((meta[:, C.RM_PLAYER] < 0) | (meta[:, C.RM_PLAYER] >= N)).any():
            return "record player out of range"
        # maxn trees record a value-only row (action -1) for every agent that did not move
        lo = -1 if self.cfg[C.CFG_MAXN] != 0 else 0
        if ((meta[:, C.RM_ACTION] < lo) | (meta[:, C.RM_ACTION] >= A)).any():
            return "record action out of range"
        if ((meta[:, C.RM_NTGT] < 0) | (meta[:, C.RM_NTGT] > arrays["r_tgt"].shape[1])).any():
            return "record target width out of range"
        if self.compact_targets and (meta[:, C.RM_NTGT] != np.count_nonzero(arrays["r_legal"][:rec], axis=1)).any():
            return "a record's compact targets do not match its legal set"
        if ((arrays["act_agents"] < 0) | (arrays["act_agents"] >= N)).any():
            return "acting agent out of range"
        if ((arrays["last_act"] != 0) & (arrays["last_act"] != 1)).any():
            return "last-acted flags are not 0/1"
        for name in ("r_f", "r_obs", "r_next_obs", "r_mask", "r_tgt", "ep_ret", "episodes", "root", "ftele"):
            if not np.isfinite(arrays[name]).all():
                return f"non-finite values in {name}"
        if not (math.isfinite(scalars["rate"]) and scalars["rate"] > 0.0):
            return "window rate must be finite and > 0"
        if scalars["levels_done"] < 0 or scalars["records_done"] < 0:
            return "negative window counters"
        states = arrays["states"]
        if (states[:, 1] != 0).any():
            return "a slot's game is over but was not reset"
        for g in range(G):  # restore-time only: the game's own validator (O(n_games) calls)
            reason = self.gdef.validate_state(states[g])
            if reason is not None:
                return f"slot {g} state: {reason}"
        return self._check_start_buffer(arrays)

    def _check_start_buffer(self, arrays: dict) -> str | None:
        """The start-buffer part of :meth:`check_state`: counters in range, every held state
        one the game accepts (restore-time only: one validator call per held state)."""
        meta, held = arrays["sb_meta"], arrays["sb_states"]
        cap = int(self.cfg[C.CFG_SB])
        stored, seen, seeded = meta[:, C.SB_STORED], meta[:, C.SB_SEEN], meta[:, C.SB_SEEDED]
        if ((stored < 0) | (stored > min(cap, held.shape[1])) | (seen < stored)).any():
            return f"start buffer counters outside [0, {cap}]"
        if ((seeded != 0) & (seeded != 1)).any():
            return "start buffer seeded flags are not 0/1"
        if cap == 0 and (meta != 0).any():
            return "start buffer state in a snapshot of an engine without start_buffer"
        for g in np.flatnonzero(stored):
            for j in range(int(stored[g])):
                reason = self.gdef.validate_state(held[g, j])
                if reason is None and held[g, j, 1] != 0:
                    reason = "a finished game"
                if reason is not None:
                    return f"slot {g} start buffer state {j}: {reason}"
        return None

    def load_state(self, arrays: dict, scalars: dict) -> None:
        """Adopt a state that passed :meth:`check_state`: copy the arrays in, set the ctl words
        and window counters, keep this runtime's route geometry.  Only between windows."""
        with self._helpers_out():
            self._load_state_locked(arrays, scalars)

    def _load_state_locked(self, arrays: dict, scalars: dict) -> None:
        for name in self.SNAPSHOT_ARRAYS:
            self._arrays[name] = np.array(arrays[name], dtype=self._arrays[name].dtype, order="C", copy=True)
        for k, i in self.SNAPSHOT_CTL.items():
            self.ctl[i] = scalars[k]
        self.ctl[C.C_REC_CAP] = self._arrays["r_meta"].shape[0]
        self.ctl[C.C_PARKED] = 0
        self.ctl[C.C_ERROR] = 0
        self.rate = float(scalars["rate"])
        self.levels_done = int(scalars["levels_done"])
        self.records_done = int(scalars["records_done"])
        self.window_acc[:] = 0
        self.error = None
        self._build_E()
        if self.infer_cache:
            self.k.cache_clear(self.E)  # snapshots never carry the cache: start it empty
