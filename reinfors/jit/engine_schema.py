"""The engine's state arrays: the one definition every other layout is derived from.

The collection runtime (``reinfors/_runtime/runtime.py``) allocates one NumPy array per row of
:data:`FIELDS` and hands the kernels an address table of them in this order
(``reinfors/jit/pointers.py``); the kernels read a row by its name (``E.t_ni``).  From this table
come:

* the table order (:data:`ORDER`, ``Runtime._ORDER``) and the kernels' layout (:data:`LAYOUT`,
  ``(name, dtype, ndim)`` per row, the argument of ``pointers.table_unpacker``);
* the arrays a snapshot carries, in the blob's order (:data:`SNAPSHOT_ARRAYS`), with their
  dtype, ndim and whether their first axis is the slot axis (``reinfors/snapshot.py``);
* the checks of ``Runtime._build_E`` (every array's dtype and ndim, ``reinfors/_runtime/schema.py``);
* the array table of ``docs/architecture.md`` (``reinfors._runtime.schema.markdown_table``).

Shape symbols: ``G`` slots (``n_games``), ``N`` players, ``A`` actions, ``O`` observation size,
``S`` state words, ``K`` reward keys, ``H`` Q heads, ``W`` prediction width, ``M`` record-pool
rows (grows), ``R`` routes, ``NA`` arenas per route, ``CAP`` rows per arena, ``ROWS`` rows one
request of a slot can hold, ``T`` tree nodes per slot, ``P`` selection-path length, ``L``
trajectory capacity (grows), ``M_EP`` episode-log rows (grows), ``CE`` inference-cache entries per
partition, ``LOG`` cache insert-log rows, ``CB`` start-buffer rows, ``A_E`` tree edges per node
(``N * A`` on simultaneous games), ``EF`` / ``NV`` tree float columns, ``CAP_MSG`` / ``CAP_RDY``
ring capacities, ``P_GAME`` game parameters, ``CHANCE`` the game's widest chance fan; ``*_SIZE``,
``*_BASE`` and ``MSG_W`` are ``reinfors/jit/engine_codes.py`` constants.  Rows a composition does
not use are tiny placeholders (a dimension noted "or 1" is 1 then; the inference cache's are 1
wide with the cache off).

This module is data only (no Numba): the runtime, the snapshot codec and the docs read it too.
"""

from __future__ import annotations

from typing import NamedTuple


class Field(NamedTuple):
    """One engine array."""

    name: str
    dtype: str  # numpy dtype name
    shape: str  # shape rule: one comma-separated expression per axis
    snapshot: int | None  # position in a snapshot blob (None: a snapshot never carries it)
    meaning: str  # one line

    @property
    def dims(self) -> tuple[str, ...]:
        """The shape rule's symbols, one per axis (commas inside parentheses do not split)."""
        out, depth, cur = [], 0, ""
        for ch in self.shape:
            depth += (ch == "(") - (ch == ")")
            if ch == "," and depth == 0:
                out.append(cur.strip())
                cur = ""
            else:
                cur += ch
        return (*out, cur.strip())

    @property
    def ndim(self) -> int:
        return len(self.dims)

    @property
    def per_slot(self) -> bool:
        """The first axis is the slot axis (``G``)."""
        return self.dims[0] == "G"


_F = Field
FIELDS: tuple[Field, ...] = (
    _F("params", "int64", "P_GAME", None, "the game's parameters (GameDef.params)"),
    _F("cfg", "int64", "CFG_SIZE", None, "immutable engine configuration (CFG_* words)"),
    _F("fcfg", "float64", "FCFG_SIZE", None, "immutable float configuration (F_* words)"),
    _F("weights", "float64", "K", None, "reward-key weights"),
    _F("learn", "int64", "N", None, "1 for each learning player"),
    _F("ctl", "int64", "CTL_BASE + 8 * N", None, "live control words (C_*, one cache line each; atomics)"),
    _F("states", "int64", "G, S", 0, "each slot's game state"),
    _F("srng", "uint64", "G, 1", 1, "each slot's random stream"),
    _F("sinfo", "int64", "G, SI_SIZE", 2, "per-slot int columns (SI_*: status, level, counters)"),
    _F("act_agents", "int64", "G, N", 3, "acting agents / tail players of the slot's request"),
    _F("root", "float32", "G, N, O", 4, "each slot's observation rows of its request"),
    _F("legal", "uint8", "G, N, A", 5, "each slot's legal masks (per agent)"),
    _F("preds", "float64", "G, ROWS, W", None, "routed predictions of each slot's request"),
    _F("iscr", "int64", "G, 3 * N + MSG_W", 6, "per-slot int scratch: joint action, latest records, message"),
    _F("ep_ret", "float64", "G, N", 9, "running episode returns"),
    _F("arena_rows", "float32", "R, NA, CAP, O", None, "the arenas' observation rows (lent to callbacks)"),
    _F("arena_ctl", "uint64", "R * NA", None, "arena control words (packed claim counters)"),
    _F("arena_done", "uint64", "R * NA", None, "arena settled-row counters"),
    _F("msg_seq", "int64", "CAP_MSG", None, "message ring: cell sequence numbers (reinfors/jit/rings.py)"),
    _F("msg_data", "int64", "CAP_MSG, MSG_W", None, "message ring: records (MSG_*)"),
    _F("msg_pos", "int64", "16", None, "message ring: enqueue / dequeue cursors"),
    _F("r_meta", "int64", "M, RM_SIZE", 10, "record pool: int columns (RM_*: level, slot, seq, player)"),
    _F("r_f", "float64", "M, RF_SIZE", 11, "record pool: float columns (RF_*: reward, value, returns)"),
    _F("r_obs", "float32", "M, O", 12, "record pool: observations"),
    _F("r_next_obs", "float32", "M or 0, O", 13, "record pool: next observations (DQN only; 0 rows otherwise)"),
    _F("r_mask", "float32", "M, H", 14, "record pool: head masks"),
    _F("r_legal", "uint8", "M, A", 15, "record pool: legal masks"),
    _F("r_next_legal", "uint8", "M or 0, A", 16, "record pool: next legal masks (DQN only; 0 rows otherwise)"),
    _F("traj_idx", "int64", "G, N, L", 18, "each open trajectory's / segment's records"),
    _F("traj_cnt", "int64", "G, N", 19, "records in each open trajectory"),
    _F("last_act", "int64", "G, N", 20, "1 where the agent acted in the slot's last tick"),
    _F("tele", "int64", "G, TL_SIZE", 21, "per-slot telemetry counters (TL_*)"),
    _F("pending", "int64", "G", 23, "rows each slot has outstanding"),
    _F("episodes", "float64", "M_EP, 4 + N", 24, "episode log: slot, length, end level, returns, seeded"),
    _F("rdy_seq", "int64", "CAP_RDY", None, "ready ring: cell sequence numbers"),
    _F("rdy_data", "int64", "CAP_RDY, 1", None, "ready ring: slot indices"),
    _F("rdy_pos", "int64", "16", None, "ready ring: enqueue / dequeue cursors"),
    _F("fscr", "float64", "G, A + N + 2 * CHANCE + max(A, N)", 7, "per-slot float scratch"),
    _F("amounts", "float64", "G, N, K", 8, "per-slot reward-key amounts of the last step"),
    _F("t_state", "int64", "G or 1, T, S", None, "search trees: node states"),
    _F("t_ni", "int64", "G or 1, T, TN_SIZE", None, "search trees: node int columns (TN_*: mover, depth, links)"),
    _F("t_child", "int64", "G or 1, T, A", None, "search trees: child per action (-1 none; sequential games)"),
    _F("t_visits", "int64", "G or 1, T, A_E", None, "search trees: edge visits (A_E = N * A when simultaneous)"),
    _F("t_ef", "float64", "G or 1, T, A_E, EF", None, "search trees: edge floats (EF_*: prior, value sum, rewards)"),
    _F("t_nv", "float64", "G or 1, T, NV", None, "search trees: node values, rewards, probability, sigma"),
    _F("t_legal", "uint8", "G or 1, T, A_E", None, "search trees: node legal masks (per agent when simultaneous)"),
    _F("t_path", "int64", "G or 1, P, 2", None, "search trees: selection path (node, action)"),
    _F("t_rng", "uint64", "G or 1, 1", None, "search trees: in-tree chance stream"),
    _F("t_list", "int64", "G or 1, 4, T", None, "search trees: frontier (x2), new-node and batch lists"),
    _F("rq", "int64", "G, ROWS, 2", None, "each requested row's source (node, or -1 - j for root j) and player"),
    _F("r_tgt", "float64", "M, H * A or 0", 17, "record pool: targets (a record holds its first RM_NTGT columns)"),
    _F("ftele", "float64", "G, FT_SIZE", 22, "per-slot float telemetry (FT_*)"),
    _F("cctl", "int64", "CC_BASE + 8 * N", None, "inference cache: control words (CC_*)"),
    _F("c_keys", "uint64", "2, R, CE, 2", None, "inference cache: 128-bit row keys of two views (0 = empty)"),
    _F("c_gen", "int64", "2, R, CE", None, "inference cache: generation each entry was computed under"),
    _F("c_vals", "float64", "2, R, CE, W", None, "inference cache: cached prediction rows"),
    _F("c_logk", "uint64", "LOG, 2", None, "inference cache: insert log keys"),
    _F("c_logi", "int64", "LOG, 2", None, "inference cache: insert log (partition, generation)"),
    _F("c_logv", "float64", "LOG, W", None, "inference cache: insert log values"),
    _F("a_keys", "uint64", "R * NA, CAP, 2", None, "inference cache: key of every arena row"),
    _F("a_index", "int64", "R * NA, 2 * CAP", None, "inference cache: per-arena key index (row + 1; 0 empty)"),
    _F("a_alias", "int64", "R * NA, CAP, 3", None, "inference cache: drained alias claims (slot, row, twin row)"),
    _F("a_alias_n", "int64", "R * NA", None, "inference cache: alias claims per arena"),
    _F("a_epoch", "int64", "R * NA", None, "inference cache: bumped whenever the arena is routed (ABA guard)"),
    _F("gated", "int64", "R, G * ROWS, 3", None, "inference cache: drained gated tickets (slot, row, generation)"),
    _F("gated_n", "int64", "R", None, "inference cache: gated tickets per route"),
    _F("rkeys", "uint64", "G, ROWS, 4", None, "inference cache: per request row: key (2 words), kind, aux"),
    _F("rdedup", "int64", "G, 2 * ROWS", None, "inference cache: request-local key index (row + 1; 0 empty)"),
    _F("sb_states", "int64", "G, CB, S", 25, "start buffer: reached states each slot keeps (CB <= CFG_SB)"),
    _F("sb_meta", "int64", "G, SB_SIZE", 26, "start buffer: stored, seen, current episode seeded"),
    _F("sb_rng", "uint64", "G, 1", 27, "start buffer: its own random stream (never the slot stream)"),
    _F("t_edges", "int32", "G or 1, T, A or 1", None, "search trees: each node's legal actions in order (sequential games)"),
)  # fmt: skip

# -- derived ------------------------------------------------------------------------------------

ORDER: tuple[str, ...] = tuple(f.name for f in FIELDS)  # the address table's rows
BY_NAME: dict[str, Field] = {f.name: f for f in FIELDS}
LAYOUT: tuple[tuple[str, str, int], ...] = tuple((f.name, f.dtype, f.ndim) for f in FIELDS)
# The arrays that carry a slot's state from one collect window to the next, in a snapshot
# blob's order.  Excluded: the engine constants (rebuilt from the composition), the arena /
# message / ready rings (empty between windows), per-request scratch (written before read), the
# search trees (a fresh tree per decision) and the inference cache (never captured).
SNAPSHOT_ARRAYS: tuple[str, ...] = tuple(
    f.name for f in sorted((f for f in FIELDS if f.snapshot is not None), key=lambda f: f.snapshot)
)
