"""Source identity of the running reinfors build (git checkout when there is one)."""

from __future__ import annotations

import subprocess
from pathlib import Path


def _git(*args: str) -> str | None:
    root = Path(__file__).resolve().parent.parent
    if not (root / ".git").exists():
        return None
    try:
        out = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


_CACHE: dict | None = None


def build_info(version: str) -> dict:
    """``{git_sha, git_dirty, git_tag, profile, version}``; "unknown" outside a checkout."""
    global _CACHE
    if _CACHE is None:
        sha = _git("rev-parse", "HEAD")
        status = _git("status", "--porcelain", "--untracked-files=no")
        tag = _git("describe", "--tags", "--exact-match")
        _CACHE = {
            "git_sha": sha or "unknown",
            "git_dirty": "unknown" if status is None else bool(status),
            "git_tag": tag or None,
            "profile": "release",
            "version": version,
        }
    return dict(_CACHE)
