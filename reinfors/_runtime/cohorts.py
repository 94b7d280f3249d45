"""Which rows go in which callback call: fixed cohorts of slots, each call one cohort's round.

The determinism contract (the original's, and ours at any ``n_threads``): two identically built
engines make the same calls — the same ``infer_calls``, ``infer_rows`` per call, ``padded_rows``
— whatever the machine's load or the threads' interleaving.  Wall time may decide how a call is
*overlapped* (inline on the collecting thread, or pipelined on it while a scheduler thread works,
``firing.py``), never which rows it holds.

An arena that closes at a row count is not enough: with two writers, which slots' rows reach the
count first is thread timing, and so is whether the rest later fills an arena or waits for a
partial fire (measured: Snake SelectiveExpectimax, 2 games, 25,097-25,112 calls for identical
engines).  So the slots are split into fixed **cohorts** of ``S`` consecutive slots (slot ``g`` is
in cohort ``g // S``), each with its own arena chain per route.  A cohort's **round** is every row
its slots request from the moment they are made ready until each of them blocks on its request or
parks; the worker whose slot leaves the cohort's active count last closes the cohort's open
arenas (``_close_cohort`` in the kernels).  A call is then exactly one cohort's round on one route
— a function of the slots' own progress, which depends only on the seed — split, when one slot's
request exceeds an arena (a single writer), into arena-sized chunks in request order.

Sizing (:func:`plan`), from counts only:

* ``S`` fills a call with the automatic batch: ``batch // typical`` slots, where ``typical`` is
  the rows a slot usually has in flight (one, or a search's bound times its share); with a
  ``batch_size`` from the user or ``pad`` (a hard cap on a call), ``batch // bound``.
* the arena capacity holds a cohort's largest round (``S * bound``), so a round never spills
  into a second arena — except a single slot's request past ``batch_size``, chunked by its one
  writer.

Two cohorts at the automatic batch (``S = n_games / 2`` for one row a slot) keep the CPU design's
overlap: one cohort's call is made while the workers run the other's round.  With the inference
cache on, cohorts are off (one cohort of every slot, arenas closing at the fire target): which row
a cached value or an in-flight twin serves depends on which call came first, and the cache's
telemetry is documented as timing (``reinfors.engine.TIMING_TELEMETRY_WITH_CACHE``).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

__all__ = ["Cohorts", "plan", "timed_fires", "TIMED_FIRES_ENV"]

# The opt-in to calls composed by timing: ``REINFORS_TIMED_FIRES=1`` turns cohorts off (as with
# the inference cache): arenas close at the fire target, and a pipelined engine measures which
# target routes more rows a second (``firing.FirePolicy``: one batch of every row in flight, or
# two alternating halves).  Records are unchanged; ``infer_calls``, ``padded_rows`` and the
# stall counters then depend on timing (``reinfors.engine.TIMING_TELEMETRY_WITH_CACHE``).
TIMED_FIRES_ENV = "REINFORS_TIMED_FIRES"


def timed_fires() -> bool:
    """Whether the user opted in to timing-composed calls (read when a runtime is built)."""
    return os.environ.get(TIMED_FIRES_ENV, "").strip() not in ("", "0")


@dataclass(frozen=True)
class Cohorts:
    """The cohort geometry of one runtime.

    Attributes:
        size: slots per cohort ``S``.
        count: cohorts ``K = ceil(n_games / S)``.
        capacity: rows per arena (every call holds at most this many).
        closing: cohorts close their arenas when their round ends (False: the cache's mode).
    """

    size: int
    count: int
    capacity: int
    closing: bool


def plan(n_games: int, batch: int, bound: int, typical: int, hard: bool, closing: bool) -> Cohorts:
    """The cohorts of ``n_games`` slots for calls of ``batch`` rows.

    Args:
        n_games: slots.
        batch: the rows of a full call (``batch_size``, or the automatic batch).
        bound: the most rows one slot can have in flight (one request).
        typical: the rows a slot's request usually holds (``bound`` divided by the search's
            ``rows_share``; one for a one-row search).
        hard: ``batch`` is a cap on a call (a user's ``batch_size``, or ``pad``).
        closing: cohorts close at the end of their round (False: one cohort, arenas close at
            ``batch`` rows — the inference cache's mode).
    """
    if not closing:
        return Cohorts(size=n_games, count=1, capacity=batch, closing=False)
    size = max(1, min(n_games, batch // max(1, bound if hard else typical)))
    count = math.ceil(n_games / size)
    if hard:
        capacity = batch
    elif size == 1:
        capacity = min(batch, bound)  # a request past the batch is chunked by its one writer
    else:
        capacity = size * bound
    return Cohorts(size=size, count=count, capacity=max(1, capacity), closing=True)
