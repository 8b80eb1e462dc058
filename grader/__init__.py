"""Course tooling: notebook execution and hygiene, nbgrader release and grading."""

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# nbgrader shells out to `alembic` (gradebook migrations) and kernels are found through the
# environment's bin folder; make both resolve to this interpreter's environment even when the
# caller did not activate .venv.
_BIN = str(Path(sys.executable).parent)
if _BIN not in os.environ.get("PATH", "").split(os.pathsep):
    os.environ["PATH"] = _BIN + os.pathsep + os.environ.get("PATH", "")
