"""Natural style: from __future__ annotations, annotated loss and gradient functions, Chinese docstrings."""
from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax


def stopped_loss(x: jax.Array, w: jax.Array) -> jax.Array:
    """L(x, w) = Σ (sg(x_i) w)²，x 在求导时被当成常数。"""
    x_const = lax.stop_gradient(x)
    return jnp.sum(jnp.square(x_const * w))


def grad_through_stop(x: jax.Array, w: jax.Array) -> jax.Array:
    """∂L/∂w，用 jax.grad 对第二个参数求导。"""
    return jax.grad(stopped_loss, argnums=1)(x, w)
