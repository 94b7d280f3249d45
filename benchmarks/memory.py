"""Peak memory of one large collect against the size of the batch it returns (issue: memory).

    python benchmarks/memory.py [--records 1500000] [--workload c4_ppo]

Builds the workload (``benchmarks/workloads.py``), warms the kernels with a small collect, resets
the kernel's peak-RSS mark (``/proc/self/clear_refs``), runs ``collect(records)`` and prints one
JSON line: the batch's bytes, the RSS growth at peak (``VmHWM`` − RSS before), their ratio, and
the wall time.  Linux only (reads ``/proc/self``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import workloads  # noqa: E402

import reinfors as rf  # noqa: E402


def _status_kib(key: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def batch_bytes(batch) -> int:
    total = 0
    for name in dir(batch):
        if name.startswith("_") or name == "telemetry":
            continue
        v = getattr(batch, name, None)
        if isinstance(v, np.ndarray):
            total += v.nbytes
    return total


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=1_500_000)
    ap.add_argument("--workload", default="c4_ppo")
    ap.add_argument("--n-threads", type=int, default=2)
    a = ap.parse_args()
    eng, infer = workloads.build(a.workload, rf, a.n_threads)
    eng.collect(256, infer)  # compile / load kernels, size the runtime
    Path("/proc/self/clear_refs").write_text("5")
    before = _status_kib("VmRSS")
    t0 = time.perf_counter()
    batch = eng.collect(a.records, infer)
    wall = time.perf_counter() - t0
    peak = _status_kib("VmHWM")
    nb = batch_bytes(batch)
    growth = (peak - before) * 1024
    print(json.dumps({
        "workload": a.workload,
        "records": len(batch.obs),
        "batch_mib": round(nb / 2**20, 1),
        "peak_growth_mib": round(growth / 2**20, 1),
        "ratio": round(growth / nb, 3),
        "seconds": round(wall, 2),
    }))


if __name__ == "__main__":
    main()
