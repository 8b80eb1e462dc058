"""Attack: record what the answer is called with (the value, its primal, its aval, NumPy's view
of it, a float of its first element) in every rule, and print the records in a cell of its own
after the hidden tests."""
# base: residuals wrong_grad_missing_cos
# class: recorded tracer values
import jax
import numpy as np

_records = []


def _record(where, x):
    seen = [f"{where}: {type(x).__name__} {x!r}"[:200]]
    for attempt in (lambda: x.primal, lambda: x.val, lambda: np.asarray(x), lambda: float(x.ravel()[0]), lambda: x.tolist()):
        try:
            seen.append(f"CONCRETE {attempt()!r}"[:200])
        except Exception as refused:
            seen.append(f"refused {type(refused).__name__}")
    _records.append(" | ".join(seen))


def _recording(inner):
    def forward(x):
        _record("primal", x)
        return inner.fun(x)

    def fwd(x):
        _record("fwd", x)
        return inner.fwd(x)

    def bwd(residuals, g):
        _record("bwd cotangent", g)
        return inner.bwd(residuals, g)

    recorded = jax.custom_vjp(forward)
    recorded.defvjp(fwd, bwd)
    return recorded


sin2_save = _recording(sin2_save)  # noqa: F821 - defined by the base answer above
sin2_recompute = _recording(sin2_recompute)  # noqa: F821
# %% a cell of the student's own at the end
for _line in _records:
    print("RECORDED", _line)
print("RECORDS", len(_records))
