#!/usr/bin/env bash
# Create (or reuse) a side venv holding the original reinfors==0.4.0 for differential tests
# and benchmarks.  Never install it into the project's venv: both import as `reinfors`.
#   usage: scripts/setup_orig_venv.sh [VENV_DIR]      (default: .venv-orig)
set -euo pipefail
DIR=${1:-.venv-orig}
PY=${PYTHON:-python3}
if [ ! -x "$DIR/bin/python" ]; then
  "$PY" -m venv "$DIR"
fi
if ! "$DIR/bin/python" -I -c "import reinfors._reinfors, sys; sys.exit(0 if reinfors.core_version() == '0.4.0' else 1)" 2>/dev/null; then
  "$DIR/bin/python" -m pip install -q "reinfors==0.4.0" numpy
fi
"$DIR/bin/python" -I -c "import reinfors; print('original reinfors', reinfors.core_version(), 'in', '$DIR')"
