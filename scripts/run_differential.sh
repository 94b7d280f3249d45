#!/usr/bin/env bash
# Set up the reinfors==0.4.0 side venv and run the differential tests against it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_orig_venv.sh .venv-orig
REINFORS_ORIG_PYTHON="$PWD/.venv-orig/bin/python" "${PYTHON_PROJECT:-.venv/bin/python}" -m pytest -q -m differential "$@"
