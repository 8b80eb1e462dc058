"""Natural style: functools.partial helpers, Chinese docstrings and an if __name__ == "__main__" self-check."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

_sum_sq = functools.partial(jnp.sum, axis=-1)


@jax.custom_jvp
def safe_norm(x):
    """‖x‖₂，x 为一维数组。"""
    return jnp.sqrt(_sum_sq(x * x))


@safe_norm.defjvp
def safe_norm_jvp(primals, tangents):
    """JVP = xᵀt / ‖x‖，x = 0 时为 0。"""
    (x,), (t,) = primals, tangents
    value = safe_norm(x)
    nonzero = value > 0
    inv = jnp.where(nonzero, 1.0 / jnp.where(nonzero, value, 1.0), 0.0)
    return value, inv * jnp.dot(x, t)


if __name__ == "__main__":
    from jax.test_util import check_grads

    x = jnp.array([0.5, -1.0, 2.0])
    check_grads(safe_norm, (x,), order=1, modes=["fwd", "rev"])
    print("check_grads 通过；零点梯度:", np.asarray(jax.grad(safe_norm)(jnp.zeros(3))))
