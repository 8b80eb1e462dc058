"""Attack: read the hidden tests' source where Python keeps source it has run: `linecache`
(the kit registers every test body there for tracebacks), the frames of the running test cell
(their locals hold the cell's source) and IPython's input history; print all of it, while the
answer runs, while each test exports it, and in a cell of its own at the end."""
# base: residuals wrong_grad_missing_cos
# class: linecache
# Under the answer guard the kit kept every test body, hidden ones included, in linecache.
import linecache
import sys

import jax

_printed = set()


def _show(where):
    for filename, entry in list(linecache.cache.items()):
        text = "".join(entry[2]) if len(entry) > 2 and entry[2] else ""
        if text and filename not in _printed:
            _printed.add(filename)
            print(f"LINECACHE {where} {filename}:\n{text[:4000]}")
    frame = sys._getframe()
    while frame is not None:
        for value in list(frame.f_locals.values()):
            if isinstance(value, str) and ("programs(" in value or "seed_for" in value) and value not in _printed:
                _printed.add(value)
                print(f"FRAME SOURCE {where} {frame.f_code.co_name}:\n{value[:4000]}")
        frame = frame.f_back
    shell = get_ipython()  # noqa: F821 - the kernel's
    for cell in shell.user_ns.get("In", []):
        if "seed_for" in cell and cell not in _printed:
            _printed.add(cell)
            print(f"HISTORY {where}:\n{cell[:4000]}")


_show("answer")
_save_inner = sin2_save  # noqa: F821 - defined by the base answer above


def _forward_rule(x):  # what a graded call runs (jax.vjp): it prints while each test exports
    _show("export")
    return _save_inner.fwd(x)


sin2_save = jax.custom_vjp(_save_inner.fun)
sin2_save.defvjp(_forward_rule, _save_inner.bwd)
# %% a cell of the student's own at the end
_show("end")
print("LINECACHE entries:", len(linecache.cache))
