"""Natural style: value_and_grad packed into a collections.namedtuple, with a debug print."""
from collections import namedtuple

import jax
import jax.numpy as jnp

LossAndGrad = namedtuple("LossAndGrad", ["loss", "grad_w"])


def _loss(x, w):
    x = jax.lax.stop_gradient(x)  # x 只参与数值，不参与求导
    return jnp.sum((x * w) * (x * w))


def loss_and_grad(x, w):
    value, g = jax.value_and_grad(_loss, argnums=1)(x, w)
    return LossAndGrad(loss=value, grad_w=g)


def grad_through_stop(x, w):
    return loss_and_grad(x, w).grad_w


print(loss_and_grad(jnp.array([1.0, 2.0]), jnp.float32(0.5)))
