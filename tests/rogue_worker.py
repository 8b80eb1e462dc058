"""A rogue grading worker for tests/test_cluster_security.py (not a test module).

Loaded into a `dask worker` that holds a course certificate (`--preload tests/rogue_worker.py`):
a grading machine taken over. Dask calls `grader.pipeline.worker.grade_task` by name, so replacing it
here makes this worker return a forged result for the student `mallory` (700 points on every
test) while it grades everyone else honestly.

It also stands for the rare fault a test cannot wait for: the student `zed`'s task kills the
worker process that runs it, every time (as the system's OOM killer would), so Dask's nanny
starts a new one and the scheduler tries the task again until it gives up.
"""

import os
import signal

from grader.pipeline import store, worker

FORGED_FOR = "mallory"
FORGED_SCORE = 700.0
DIES_FOR = "zed"
honest = worker.grade_task


def forged(task: worker.Task) -> worker.Graded:
    if task.student == DIES_FOR:
        os.kill(os.getpid(), signal.SIGKILL)
    if task.student != FORGED_FOR:
        return honest(task)
    scores = dict.fromkeys(store.test_points(task.assignment), FORGED_SCORE)
    return worker.Graded(worker.Result(True), scores, b"{}", {})


def dask_setup(dask_worker) -> None:
    worker.grade_task = forged
