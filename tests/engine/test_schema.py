"""The engine's array schema (``reinfors/jit/engine_schema.py``) is the one definition of the
engine's state arrays: the runtime's table order, the kernels' layout, the snapshot lists and
the documentation table come from it, and the runtime refuses an array that does not match it."""

from __future__ import annotations

import re
import types
from pathlib import Path

import numpy as np
import pytest

from reinfors import snapshot
from reinfors._runtime import schema
from reinfors._runtime.runtime import Runtime
from reinfors.jit import engine_schema as S

ROOT = Path(__file__).resolve().parents[2]


def test_the_runtime_and_the_snapshot_codec_use_the_schema():
    assert Runtime._ORDER == S.ORDER and len(set(S.ORDER)) == len(S.ORDER)
    assert Runtime.SNAPSHOT_ARRAYS == S.SNAPSHOT_ARRAYS
    assert list(snapshot._LAYOUT) == list(S.SNAPSHOT_ARRAYS)  # the blob's order
    positions = sorted(f.snapshot for f in S.FIELDS if f.snapshot is not None)
    assert positions == list(range(len(S.SNAPSHOT_ARRAYS)))  # no gap, no duplicate
    for name, (code, ndim, per_slot) in snapshot._LAYOUT.items():
        f = S.BY_NAME[name]
        assert snapshot._DTYPES[code] == np.dtype(f.dtype).newbyteorder("<") and ndim == f.ndim
        assert per_slot == f.per_slot
    assert not any(n.startswith("c_") for n in S.SNAPSHOT_ARRAYS)  # the cache is never captured


def test_shape_rules_split_at_top_level_commas_only():
    assert S.BY_NAME["fscr"].dims == ("G", "A + N + 2 * CHANCE + max(A, N)")
    assert S.BY_NAME["arena_rows"].ndim == 4 and S.BY_NAME["pending"].ndim == 1
    assert all(1 <= f.ndim <= 4 for f in S.FIELDS)  # the address table holds 4 dims


def _fake(arrays):
    return types.SimpleNamespace(_arrays=arrays, _ORDER=S.ORDER)


def _arrays():
    return {f.name: np.zeros((1,) * f.ndim, f.dtype) for f in S.FIELDS}


def test_build_E_addresses_every_array_in_schema_order():
    arrays = _arrays()
    arrays["t_ni"] = np.zeros((2, 3, 4), np.int64)
    rt = _fake(arrays)
    Runtime._build_E(rt)
    i = S.ORDER.index("t_ni")
    assert rt.E.shape == (len(S.ORDER), 5)
    assert tuple(rt.E[i]) == (arrays["t_ni"].ctypes.data, 2, 3, 4, 0)


@pytest.mark.parametrize(
    "name,bad,what",
    [
        ("t_ni", np.zeros((1, 1, 1), np.int32), "int32 with 3 dims"),  # right ndim, wrong dtype
        ("root", np.zeros((1, 1), np.float32), "float32 with 2 dims"),  # right dtype, wrong ndim
        ("t_edges", np.zeros((1, 1, 1), np.int64), "int64 with 3 dims"),  # a neighbour row's dtype
    ],
)
def test_build_E_refuses_an_array_that_does_not_match_the_schema(name, bad, what):
    arrays = _arrays()
    arrays[name] = bad
    with pytest.raises(TypeError, match=rf"engine array '{name}' is {what}; the schema"):
        Runtime._build_E(_fake(arrays))


def test_build_E_refuses_a_non_contiguous_array():
    arrays = _arrays()
    arrays["states"] = np.zeros((2, 4), np.int64)[:, ::2]
    with pytest.raises(TypeError, match="'states' must be C-contiguous"):
        Runtime._build_E(_fake(arrays))


def test_the_architecture_doc_holds_the_generated_array_table():
    text = (ROOT / "docs" / "architecture.md").read_text()
    assert schema.doc_section(text) == schema.markdown_table(), (
        "docs/architecture.md's engine-array table is stale: regenerate it with "
        "reinfors._runtime.schema.markdown_table()"
    )


def test_no_kernel_reads_the_engine_table_by_number():
    hits = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in sorted((ROOT / "reinfors").rglob("*"))
        if p.suffix in (".py", ".tmpl") and "__jitcache__" not in p.parts
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if re.search(r"E\[[0-9]", line)
    ]
    assert not hits, f"numeric engine-table reads (use E.<name>): {hits}"
