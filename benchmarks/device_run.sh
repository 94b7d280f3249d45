#!/usr/bin/env bash
# One device check (issues 18, 35): on a fresh 16-core + GPU machine, set up both builds, warm
# the compile cache, run the scaling sweep, the GPU ResNet sweep and the accelerator stand-in
# (benchmarks/compare.py --mode simgpu) at the same points — so the stand-in's figures can be
# checked against the real network's — and write JSON / logs under $OUT.
# Budgeted to ~10 minutes (the Ray leg, issue 47, adds ~2); every phase has its own timeout, and a failed phase does not stop
# the next (each writes what it measured).
#
#   usage: benchmarks/device_run.sh [--quick]
#     --quick   the CPU test of this script: 1-2 threads, 1 s points, the tiny ResNet sweep on
#               --device cpu (skips cleanly without torch) plus the zero-callback sweep
#   env:  OUT      where the JSON and the log go (default ./device_out)
#         PYTHON   the interpreter with numba / numpy / torch (default python3; on the device
#                  image that is the one holding PyTorch)
#         ORIG_PY  an existing 0.4.0 interpreter (default: create .venv-orig, see below)
#         WHEELS   a folder of wheels for pip when the machine has no network (default .whl if
#                  present): the 0.4.0 wheel for the device's Python, e.g. here
#                  `pip download --no-deps --only-binary=:all: --python-version 3.12
#                   --platform manylinux_2_17_x86_64 -d .whl reinfors==0.4.0`, carried along
#
# The project itself runs from this checkout (PYTHONPATH), so nothing is built; its test extras
# are not needed for the sweeps.  The 0.4.0 side venv sees the image's numpy and torch through a
# .pth file, then scripts/setup_orig_venv.sh installs the wheel.
set -uo pipefail
cd "$(dirname "$0")/.."
QUICK=0
[ "${1:-}" = "--quick" ] && QUICK=1
OUT=${OUT:-$PWD/device_out}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
LOG="$OUT/device_run.log"
T0=$(date +%s)
log() { echo "[device_run +$(($(date +%s) - T0))s] $*" | tee -a "$LOG"; }
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
WHEELS=${WHEELS:-.whl}
if [ -d "$WHEELS" ]; then
  export PIP_FIND_LINKS="$PWD/$WHEELS" PIP_NO_INDEX=1
fi

log "machine: $(nproc) cores; $("$PY" -c 'import sys, numba, numpy; print(sys.version.split()[0], "numba", numba.__version__, "numpy", numpy.__version__)' 2>&1)"
"$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())' 2>&1 | tee -a "$LOG"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee -a "$LOG"

# 1. the original 0.4.0 in a side venv
ORIG=${ORIG_PY:-}
if [ -z "$ORIG" ]; then
  if [ ! -x .venv-orig/bin/python ]; then
    "$PY" -m venv .venv-orig 2>&1 | tee -a "$LOG"
    # The image's python3 is itself a venv (/opt/torch/.venv): --system-site-packages would
    # expose the base interpreter, not it.  A .pth file puts its site-packages (numpy, torch) on
    # the side venv's path; .pth files are read in -I mode too.
    SP=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    OSP=$(.venv-orig/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    echo "$SP" >"$OSP/_device_site.pth"
  fi
  timeout 120 bash scripts/setup_orig_venv.sh .venv-orig 2>&1 | tee -a "$LOG"
  ORIG=$PWD/.venv-orig/bin/python
fi
log "0.4.0: $ORIG"

# 2. warm the compile cache: one Connect4 AlphaZero engine (leaf_batch is a runtime knob, so
#    one compile serves every k of the sweeps)
timeout 400 "$PY" - <<'EOF' 2>&1 | tee -a "$LOG"
import time
import numpy as np
import reinfors as rf
t = time.perf_counter()
eng = rf.Engine(rf.games.Connect4(), rf.Reward(win=1.0, loss=-1.0), rf.policies.AlphaZero(num_simulations=8, leaf_batch=4),
                rf.learners.AlphaZero(gamma=1.0), n_games=4, n_threads=2)
eng.collect(8, lambda o: (np.zeros((len(o), 7), np.float32), np.zeros(len(o), np.float32)))
print(f"compile cache warm in {time.perf_counter() - t:.1f} s")
EOF
log "warm done"

if [ "$QUICK" = 1 ]; then
  SCALE=(--threads 1 2 --seconds 1 --reps 1 --floor 256)
  GPU=(--device cpu --quick)
  ZERO=(--net zero --quick --n-threads 2)
  SIM=(--games 64 --leaf-batches 1 8 --reps 1 --seconds 2 --n-threads 2)
  RAY=(--actors 2 --threads 1 --games 16 --windows 512 --seconds 2 --reps 1)
  T_SCALE=240 T_GPU=240 T_SIM=120 T_RAY=120
else
  SCALE=(--threads 1 2 4 8 16 --seconds 3 --reps 1 --floor 1024)
  GPU=(--device cuda --games 64 256 1024 --batches 0 --leaf-batch 1 8 32 --seconds 5 --floor 1024 --timeout 60)
  ZERO=(--net zero --games 32 --batches 0 --leaf-batch 1 4 8 16 --n-threads 2 --seconds 3 --floor 512 --timeout 60)
  SIM=(--games 64 256 1024 --leaf-batches 1 8 --reps 1 --seconds 4 --floor 1024 --n-threads 16)
  RAY=(--actors 8 --threads 2 --games 64 --windows 4096 --seconds 8 --reps 2)
  T_SCALE=120 T_GPU=180 T_SIM=100 T_RAY=150
fi

# 3. 16-core scaling of c4_az_zero, ours vs 0.4.0 (capped at the cores)
timeout "$T_SCALE" "$PY" benchmarks/compare.py --mode scaling --workloads c4_az_zero --orig "$ORIG" "${SCALE[@]}" \
  --json "$OUT/scaling.json" 2>&1 | tee -a "$LOG"
log "scaling done (rc ${PIPESTATUS[0]})"

# 4. the ResNet sweep on the GPU (n_games x batch_size x leaf_batch; 0.4.0 at leaf_batch 1)
timeout "$T_GPU" "$PY" benchmarks/gpu_resnet.py --orig "$ORIG" "${GPU[@]}" --json "$OUT/gpu_resnet.json" 2>&1 | tee -a "$LOG"
log "gpu sweep done (rc ${PIPESTATUS[0]})"

# 5. the accelerator stand-in (sleep 1.3 ms + rows / 2.2 M s) at the GPU sweep's points: its
#    records/s and busy fraction next to the real ResNet's tell whether the stand-in is faithful
timeout "$T_SIM" "$PY" benchmarks/compare.py --mode simgpu --orig "$ORIG" "${SIM[@]}" 2>&1 | tee "$OUT/simgpu.txt" | tee -a "$LOG"
log "stand-in done (rc ${PIPESTATUS[0]})"

# 6. rows per call and records/s per leaf_batch with the zero callback (32 games, 2 threads)
timeout 60 "$PY" benchmarks/gpu_resnet.py --orig "$ORIG" "${ZERO[@]}" --json "$OUT/leaf_batch_zero.json" 2>&1 | tee -a "$LOG"
log "zero sweep done (rc ${PIPESTATUS[0]})"

# 7. Ray collectors (issue 47): 8 actors x 2 threads against one engine with 2 threads, the same
#    64 games each, 4,096-record windows, interleaved (goal >= 6x on 16 cores).  Ray must be
#    importable or installable (offline: a ray wheel for the device's Python in $WHEELS).
if "$PY" -c 'import ray' >/dev/null 2>&1 || { timeout 120 "$PY" -m pip install -q 'ray>=2.9' >/dev/null 2>&1 &&
  "$PY" -c 'import ray' >/dev/null 2>&1; }; then
  timeout "$T_RAY" "$PY" benchmarks/ray_overhead.py --mode scale "${RAY[@]}" 2>&1 | grep -v '^Token' |
    tee "$OUT/ray_scale.jsonl" | tee -a "$LOG"
  log "ray leg done (rc ${PIPESTATUS[0]})"
else
  log "ray leg skipped: ray is not importable and could not be installed (put a ray wheel in \$WHEELS)"
fi
log "files: $(ls "$OUT" | tr '\n' ' ')"
