"""Chess state-row and parameter-row word offsets (shared by the rules and the encoders)."""

from __future__ import annotations

from reinfors.jit.games._contract import HEADER

TURN = HEADER + 0
CASTLE = HEADER + 1
EP = HEADER + 2
HALF = HEADER + 3
FULL = HEADER + 4
RESULT = HEADER + 5
PLY = HEADER + 6
REP = HEADER + 7
BOARD = HEADER + 8
HIST = BOARD + 64
HIST_W = 6  # words per ring entry: 4 packed board words, key, repetition count

P_MAX_TICKS, P_RING, P_AZH = 0, 1, 2
