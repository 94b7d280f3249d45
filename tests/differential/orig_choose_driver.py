"""Driver run under reinfors==0.4.0 (the original, in its own venv) by test_choose_vs_original.

Usage: python -I orig_choose_driver.py '<json list of parts>' ; prints the JSON document of
``choose_cases.run_all(parts)``.  Stand-alone: ``choose_cases`` imports only numpy and reinfors.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # -I drops the script's directory

import choose_cases  # noqa: E402


def main():
    parts = json.loads(sys.argv[1]) if len(sys.argv) > 1 else ["decisions", "validation"]
    json.dump(choose_cases.run_all(tuple(parts)), sys.stdout)


if __name__ == "__main__":
    main()
