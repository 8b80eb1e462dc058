"""How the chapter notebooks time programs against each other, in one place.

A notebook's timing claim must hold on a busy laptop (a browser open, another notebook running).
Load only ever adds time, and it comes in bursts, so the programs take turns (a burst slows all of
them, not the one that happened to run during it) and each keeps its least time over the repeats:
the run that was disturbed least. Ratios of these minima are what the notebooks compare, with
bounds wide enough for what load still does to them; counts of operations (XLA's cost analysis)
carry the claims that need a tight bound.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable


def min_seconds(runs: dict[str, Callable[[], object]], repeats: int = 15) -> dict[str, float]:
    """The least wall time of each of `runs` (thunks, e.g. `lambda: f(x)`) over `repeats` rounds
    in which they take turns, after one warm-up call each (compiling is not timed). Each call is
    waited for with `jax.block_until_ready`, since JAX returns before it has computed."""
    import jax

    for run in runs.values():
        jax.block_until_ready(run())
    best = dict.fromkeys(runs, math.inf)
    for _ in range(repeats):
        for name, run in runs.items():
            start = time.perf_counter()
            jax.block_until_ready(run())
            best[name] = min(best[name], time.perf_counter() - start)
    return best
