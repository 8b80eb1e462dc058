"""Attack: hand in the notebook with a visible test cell moved after the hidden tests, and an
answer that records every value it is called with and prints the records whenever it is called
again: the moved visible test (its output is on the feedback page) would print what the hidden
tests called it with."""
# base: residuals wrong_grad_missing_cos
# class: moved test cells
# move: test_visible_value_grad after test_hidden_residuals
# Under the answer guard this put a hidden input on the feedback page (`x.primal` under jax.vjp).
import jax

_records = []
_save_inner = sin2_save  # noqa: F821 - defined by the base answer above


def _forward_rule(x):  # what a graded call runs (jax.vjp)
    for record in _records:
        print("RECORDED", record)
    _records.append(f"{type(x).__name__} {x!r}"[:300])
    return _save_inner.fwd(x)


sin2_save = jax.custom_vjp(_save_inner.fun)
sin2_save.defvjp(_forward_rule, _save_inner.bwd)
