"""Method: the loss Σ(sg(xᵢ)·w)² accumulated element by element with lax.scan (a running sum, as a loop over features would write it), differentiated with jax.grad in w."""
import jax
import jax.numpy as jnp
from jax import lax


def loss(x, w):
    xs = lax.stop_gradient(x)

    def add(total, xi):
        return total + (xi * w) ** 2, None

    total, _ = lax.scan(add, jnp.zeros((), w.dtype), xs)
    return total


def grad_through_stop(x, w):
    return jax.grad(loss, argnums=1)(x, w)
