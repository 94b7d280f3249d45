"""``rf.EngineSnapshot`` — an engine's collection state, as bytes without pickle.

Envelope (the original's header, byte for byte; all integers little-endian)::

    magic "RFGS" · schema u8 (1) · fp-len u32 · fingerprint (fp-len bytes, utf-8)
    · weights generation u64 · policy_version presence u8 (0/1) [· len u32 · utf-8 bytes]

then this build's payload::

    digest (32 bytes: blake2b-256 of everything after it)
    · header-len u32 · JSON header (utf-8: the resolved config, window counters, ctl words)
    · n-arrays u32 · per array: name-len u8 · name (ascii) · dtype code u8 · ndim u8
      · ndim x u64 dims · raw little-endian bytes (exactly prod(dims) * itemsize)

``from_bytes`` validates every field (``ValueError("invalid EngineSnapshot: …")``) and never
allocates more than the input holds; the digest catches accidental corruption and the semantic
checks (here, and against the engine in ``Engine.restore``) catch forgeries with a recomputed
digest.  The snapshot fingerprint is SHA-256 over the canonical resolved config without
``engine.batch_size``/``n_threads``/``pad`` and ``reinfors_version`` (the original's), so a
snapshot restores across those knobs.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import struct

import numpy as np

from . import _canon
from ._validate import refuse_pickle
from .jit import engine_codes as C
from .jit.engine_schema import BY_NAME, SNAPSHOT_ARRAYS

__all__ = ["EngineSnapshot", "snapshot_fingerprint"]

MAGIC = b"RFGS"
SCHEMA = 1
DIGEST_SIZE = 32
MAX_HEADER = 1 << 26  # bytes of JSON header (a sanity bound; the bytes must be present anyway)
MAX_DIM = 1 << 40
_INVALID = "invalid EngineSnapshot: "

# dtype whitelist: code <-> little-endian dtype
_DTYPES = {1: np.dtype("<i8"), 2: np.dtype("<u8"), 3: np.dtype("<f8"), 4: np.dtype("<f4"), 5: np.dtype("u1")}
_CODES = {dt.newbyteorder("="): c for c, dt in _DTYPES.items()}
_CODES.update({dt: c for c, dt in _DTYPES.items()})

# Per snapshot array, in the blob's order: (dtype code, ndim, first axis is the slot axis), from
# the engine's array schema (reinfors/jit/engine_schema.py).
_LAYOUT = {
    n: (_CODES[np.dtype(BY_NAME[n].dtype)], BY_NAME[n].ndim, BY_NAME[n].per_slot) for n in SNAPSHOT_ARRAYS
}
_SCALARS = ("target", "rec", "episodes", "emitted", "levels_done", "records_done")


def snapshot_fingerprint(config: dict) -> str:
    """64 lowercase hex: SHA-256 of the canonical resolved config without the knobs a snapshot
    restores across (``engine.batch_size``, ``n_threads``, ``pad``) and ``reinfors_version``.

    Args:
        config: an ``Engine.resolved_config()``.

    Returns:
        64 lowercase hex characters.
    """
    cfg = dict(config)
    cfg.pop("reinfors_version", None)
    engine = dict(cfg.get("engine") or {})
    for key in ("batch_size", "n_threads", "pad"):
        engine.pop(key, None)
    cfg["engine"] = engine
    return _canon.fingerprint(cfg)


def _bad(reason: str) -> ValueError:
    return ValueError(_INVALID + reason)


def _is_fingerprint(s: str) -> bool:
    return len(s) == 64 and all(c in "0123456789abcdef" for c in s)


class _Reader:
    """Bounds-checked little-endian reader: every overrun is ``invalid EngineSnapshot: truncated``."""

    def __init__(self, data: bytes):
        self.mv = memoryview(data)
        self.pos = 0

    def take(self, n: int) -> memoryview:
        if n < 0 or self.pos + n > len(self.mv):
            raise _bad("truncated")
        out = self.mv[self.pos : self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt: str):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def text(self, n: int, what: str) -> str:
        try:
            return str(self.take(n), "utf-8")
        except UnicodeDecodeError:
            raise _bad(f"{what} not utf-8") from None

    def remaining(self) -> int:
        return len(self.mv) - self.pos


def _dump_header(header) -> str:
    """The one accepted spelling of a header (a forged blob cannot vary it)."""
    return json.dumps(header, sort_keys=True, allow_nan=False, ensure_ascii=True, separators=(",", ":"))


def _no_constant(name: str):
    raise ValueError(f"non-finite number {name}")


class EngineSnapshot:
    """An engine's collection state (opaque; from ``Engine.snapshot``, restored by
    ``Engine.restore``).  ``to_bytes()`` / ``EngineSnapshot.from_bytes(b)`` serialise it."""

    __slots__ = ("_fingerprint", "_generation", "_policy_version", "_header", "_arrays")

    def __init__(self, *args, **kwargs):
        raise TypeError("No constructor defined for EngineSnapshot")

    @classmethod
    def _make(cls, fingerprint, generation, policy_version, header, arrays) -> EngineSnapshot:
        self = object.__new__(cls)
        self._fingerprint = fingerprint
        self._generation = generation
        self._policy_version = policy_version
        self._header = header  # {"config", "fresh", "scalars": {...}, "rate"}
        self._arrays = arrays  # name -> read-only ndarray (empty when fresh)
        for a in arrays.values():
            a.setflags(write=False)
        return self

    @property
    def fingerprint(self) -> str:
        """64 lowercase hex chars: the composition (cache size included; batch_size, n_threads
        and pad excluded)."""
        return self._fingerprint

    @property
    def schema_version(self) -> int:
        """The byte format's version (``to_bytes`` writes it; ``from_bytes`` accepts only it)."""
        return SCHEMA

    @property
    def weights_generation(self) -> int:
        """The engine's weights generation when the snapshot was taken."""
        return self._generation

    @property
    def policy_version(self) -> str | None:
        """The caller's label given to ``Engine.snapshot(policy_version=...)``, or None."""
        return self._policy_version

    def __repr__(self) -> str:
        return (
            f"EngineSnapshot(fingerprint={self._fingerprint[:12]}…, weights_generation={self._generation}, "
            f"policy_version={self._policy_version!r})"
        )

    # -- bytes ------------------------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        """Serialise the snapshot (the envelope and payload described in the module docstring).

        Returns:
            The bytes; ``EngineSnapshot.from_bytes`` reads them back.
        """
        fp = self._fingerprint.encode("utf-8")
        head = [MAGIC, struct.pack("<BI", SCHEMA, len(fp)), fp, struct.pack("<Q", self._generation)]
        if self._policy_version is None:
            head.append(b"\x00")
        else:
            pv = self._policy_version.encode("utf-8")
            head.append(struct.pack("<BI", 1, len(pv)) + pv)
        text = _dump_header(self._header).encode("utf-8")
        body = [struct.pack("<I", len(text)), text, struct.pack("<I", len(self._arrays))]
        for name, a in self._arrays.items():
            raw = np.ascontiguousarray(a, dtype=_DTYPES[_CODES[a.dtype]])
            nm = name.encode("ascii")
            body.append(struct.pack("<B", len(nm)) + nm + struct.pack("<BB", _CODES[a.dtype], a.ndim))
            body.append(struct.pack(f"<{a.ndim}Q", *a.shape))
            body.append(raw.tobytes())
        payload = b"".join(body)
        return b"".join(head) + hashlib.blake2b(payload, digest_size=DIGEST_SIZE).digest() + payload

    @staticmethod
    def from_bytes(data: bytes) -> EngineSnapshot:
        """Parse and validate ``to_bytes`` output.

        Args:
            data: bytes written by :meth:`to_bytes`.

        Returns:
            The snapshot, for ``Engine.restore``.

        Raises:
            TypeError: ``data`` is not bytes.
            ValueError: ``"invalid EngineSnapshot: …"`` on anything malformed or corrupted.
        """
        if not isinstance(data, bytes):
            raise TypeError(f"argument 'data': '{type(data).__name__}' object cannot be converted to 'PyBytes'")
        r = _Reader(data)
        if bytes(r.take(4)) != MAGIC:
            raise _bad("bad magic")
        schema = r.unpack("<B")
        if schema != SCHEMA:
            raise _bad(f"unsupported schema version {schema}")
        fp = r.text(r.unpack("<I"), "fingerprint")
        generation = r.unpack("<Q")
        present = r.unpack("<B")
        if present not in (0, 1):
            raise _bad(f"policy_version presence byte {present} is not a bool")
        pv = r.text(r.unpack("<I"), "policy_version") if present else None
        if not _is_fingerprint(fp):
            raise _bad("fingerprint is not 64 lowercase hex chars")
        digest = bytes(r.take(DIGEST_SIZE))
        if r.remaining() and hashlib.blake2b(r.mv[r.pos :], digest_size=DIGEST_SIZE).digest() != digest:
            # Check the structure first when it is broken (truncation and trailing bytes read as
            # such), then the digest.
            _parse_body(r.mv[r.pos :])
            raise _bad("payload digest mismatch (corrupted)")
        header, arrays = _parse_body(r.mv[r.pos :])
        _check_header(header, fp, arrays)
        return EngineSnapshot._make(fp, generation, pv, header, arrays)


def _parse_body(mv: memoryview) -> tuple[dict, dict]:
    """The JSON header and the arrays (read-only views of ``mv``); structural checks only."""
    r = _Reader(mv)
    n = r.unpack("<I")
    if n > MAX_HEADER:
        raise _bad(f"header of {n} bytes exceeds {MAX_HEADER}")
    text = r.text(n, "header")
    try:
        header = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as e:
        raise _bad(f"header is not valid JSON ({type(e).__name__})") from None
    try:
        canonical = _dump_header(header) == text
    except (ValueError, RecursionError):
        canonical = False
    if not canonical:
        raise _bad("header is not in canonical form")
    count = r.unpack("<I")
    if count > len(_LAYOUT):
        raise _bad(f"{count} arrays (at most {len(_LAYOUT)})")
    arrays = {}
    for _ in range(count):
        name = r.text(r.unpack("<B"), "array name")
        code, ndim = r.unpack("<B"), r.unpack("<B")
        if name not in _LAYOUT:
            raise _bad(f"unknown array {name!r}")
        if name in arrays:
            raise _bad(f"array {name!r} appears twice")
        if code not in _DTYPES:
            raise _bad(f"unknown dtype code {code} of array {name!r}")
        want_code, want_ndim, _ = _LAYOUT[name]
        if code != want_code or ndim != want_ndim:
            raise _bad(f"array {name!r} must have dtype {_DTYPES[want_code]} and {want_ndim} dims")
        shape = tuple(r.unpack("<Q") for _ in range(ndim))
        if any(d > MAX_DIM for d in shape) or math.prod(max(d, 1) for d in shape) > MAX_DIM:
            raise _bad(f"array {name!r} dimensions out of range {shape}")
        nbytes = math.prod(shape) * _DTYPES[code].itemsize
        if nbytes > r.remaining():
            raise _bad("truncated")
        raw = r.take(nbytes)
        arrays[name] = np.frombuffer(raw, dtype=_DTYPES[code]).reshape(shape)
    if r.remaining():
        raise _bad("trailing bytes")
    return header, arrays


def _int(x, what: str, lo: int = 0, hi: int = 2**63 - 1) -> int:
    if isinstance(x, bool) or not isinstance(x, int) or not lo <= x <= hi:
        raise _bad(f"{what} must be an int in [{lo}, {hi}], got {x!r}")
    return x


def _check_header(header, fp: str, arrays: dict) -> None:
    """Header schema, config vs fingerprint, and the engine-independent array invariants."""
    if not isinstance(header, dict) or set(header) != {"config", "fresh", "scalars", "rate"}:
        raise _bad("header must hold exactly config, fresh, scalars and rate")
    cfg = header["config"]
    if not isinstance(cfg, dict) or not all(
        isinstance(cfg.get(k), dict) for k in ("game", "policy", "learner", "engine")
    ):
        raise _bad("config must be a resolved engine config (game, policy, learner and engine blocks)")
    try:
        embedded = snapshot_fingerprint(cfg)
    except (ValueError, TypeError, RecursionError):
        raise _bad("config cannot be canonicalised") from None
    if embedded != fp:
        raise _bad(f"fingerprint {fp} does not match the embedded config ({embedded})")
    G = _int(cfg["engine"].get("n_games"), "config engine.n_games", 1, 65536)
    fresh = header["fresh"]
    if not isinstance(fresh, bool):
        raise _bad("fresh must be a bool")
    if fresh:
        if header["scalars"] is not None or header["rate"] is not None or arrays:
            raise _bad("a fresh snapshot carries no state")
        return
    sc = header["scalars"]
    if not isinstance(sc, dict) or set(sc) != set(_SCALARS):
        raise _bad(f"scalars must be exactly {list(_SCALARS)}")
    for k in _SCALARS:
        _int(sc[k], k)
    rate = header["rate"]
    if isinstance(rate, bool) or not isinstance(rate, float) or not (math.isfinite(rate) and rate > 0.0):
        raise _bad(f"rate must be a finite float > 0, got {rate!r}")
    if set(arrays) != set(_LAYOUT):
        raise _bad(f"missing arrays {sorted(set(_LAYOUT) - set(arrays))}")
    for name, (_, _, per_slot) in _LAYOUT.items():
        if per_slot and arrays[name].shape[0] != G:
            raise _bad(f"array {name!r} has {arrays[name].shape[0]} slot rows, the config has {G} games")
    st = arrays["sinfo"]
    if st.shape[1] != C.SI_SIZE:
        raise _bad("sinfo width disagrees with this build")
    status = st[:, C.SI_STATUS]
    if ((status != C.ST_EMIT) & (status != C.ST_PARK)).any():
        raise _bad("slot status out of range (a snapshot is taken between windows)")
    for name in ("sinfo", "traj_cnt", "tele", "pending"):
        if (arrays[name] < 0).any():
            raise _bad(f"negative counters in {name}")
    if sc["rec"] > arrays["r_meta"].shape[0]:
        raise _bad("record cursor beyond the record pool")
    if sc["episodes"] > arrays["episodes"].shape[0]:
        raise _bad("episode cursor beyond the episode log")


def capture(engine_config: dict, generation: int, policy_version, runtime) -> EngineSnapshot:
    """An ``EngineSnapshot`` of a runtime (``None``: the engine has not collected yet, so the
    snapshot restores the seed state)."""
    fp = snapshot_fingerprint(engine_config)
    if runtime is None:
        header = {"config": copy.deepcopy(engine_config), "fresh": True, "scalars": None, "rate": None}
        return EngineSnapshot._make(fp, generation, policy_version, header, {})
    arrays, scalars = runtime.state_dict()
    rate = scalars.pop("rate")
    header = {"config": copy.deepcopy(engine_config), "fresh": False, "scalars": scalars, "rate": rate}
    return EngineSnapshot._make(fp, generation, policy_version, header, arrays)

# not picklable, as 0.4.0 (tests/reliability/test_no_pickle.py)
EngineSnapshot.__reduce_ex__ = refuse_pickle
