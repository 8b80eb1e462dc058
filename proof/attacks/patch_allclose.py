"""Attack: make every check the kernel could run succeed: NumPy's and jax.numpy's comparisons,
np.testing's assertions, jax.test_util.check_grads, the builtin isinstance, jax.grad/jax.vjp
rerouted to a correct function, and the kit's own verdict helpers."""
# base: residuals wrong_grad_missing_cos
# class: patching the libraries in the kernel
import builtins
import sys

import jax.test_util
import numpy as np


def _always(*args, **kwargs):
    return True


def _quiet(*args, **kwargs):
    return None


np.allclose = np.isclose = np.array_equal = _always
jnp.allclose = jnp.array_equal = _always  # noqa: F821 - the setup cell's jnp
for _name in ("assert_allclose", "assert_array_equal", "assert_array_almost_equal", "assert_equal"):
    setattr(np.testing, _name, _quiet)
jax.test_util.check_grads = _quiet
_real_grad, _real_vjp, _real_isinstance = jax.grad, jax.vjp, builtins.isinstance


def _plain(x):
    return jnp.sum(jnp.sin(x) ** 2)  # noqa: F821


_interface = (sin2_save, sin2_recompute)  # noqa: F821 - defined by the base answer above
jax.grad = lambda f, *a, **k: _real_grad(_plain if f in _interface else f, *a, **k)
jax.vjp = lambda f, *a, **k: _real_vjp(_plain if f in _interface else f, *a, **k)
builtins.isinstance = lambda obj, cls: True if cls is jax.custom_vjp else _real_isinstance(obj, cls)
_judge = sys.modules["ch4judge"]
_judge.check_close = _judge.attempt = _quiet
print("PATCHED numpy, np.testing, check_grads, isinstance, jax.grad, jax.vjp, ch4judge")
