"""Natural style: annotated signatures and an if __name__ == "__main__" self-check against jax.grad."""
from typing import Tuple

import jax
import jax.numpy as jnp
import numpy as np


def _plain_f(x: jax.Array) -> jax.Array:
    return jnp.sum(jnp.sin(x) * jnp.sin(x))


@jax.custom_vjp
def sin2_save(x: jax.Array) -> jax.Array:
    return _plain_f(x)


def _save_fwd(x: jax.Array) -> Tuple[jax.Array, Tuple[jax.Array, jax.Array]]:
    sin_x, cos_x = jnp.sin(x), jnp.cos(x)
    return jnp.sum(sin_x * sin_x), (sin_x, cos_x)


def _save_bwd(res: Tuple[jax.Array, jax.Array], g: jax.Array) -> Tuple[jax.Array]:
    sin_x, cos_x = res
    return (2.0 * sin_x * cos_x * g,)


sin2_save.defvjp(_save_fwd, _save_bwd)


@jax.custom_vjp
def sin2_recompute(x: jax.Array) -> jax.Array:
    return _plain_f(x)


def _recompute_fwd(x: jax.Array) -> Tuple[jax.Array, jax.Array]:
    return _plain_f(x), x


def _recompute_bwd(x: jax.Array, g: jax.Array) -> Tuple[jax.Array]:
    return (2.0 * jnp.sin(x) * jnp.cos(x) * g,)


sin2_recompute.defvjp(_recompute_fwd, _recompute_bwd)


if __name__ == "__main__":
    x = jnp.linspace(-3.0, 3.0, 17)
    expected = jax.grad(_plain_f)(x)
    for fn in (sin2_save, sin2_recompute):
        print(fn.__name__, np.allclose(jax.grad(fn)(x), expected, atol=1e-6), float(fn(x)))
