"""Natural style: functools.partial(jax.grad, argnums=1) and debug prints of __name__ / __doc__."""
import functools

import jax
import jax.numpy as jnp

grad_wrt_w = functools.partial(jax.grad, argnums=1)


def loss(x, w):
    """损失 L = Σ (sg(x) · w)²。"""
    return ((jax.lax.stop_gradient(x) * w) ** 2).sum()


def grad_through_stop(x, w):
    """返回 ∂L/∂w（标量）。"""
    return grad_wrt_w(loss)(x, w)


print(grad_through_stop.__name__)
print(grad_through_stop.__doc__)
print(loss.__qualname__, "shape", grad_through_stop(jnp.ones(3), jnp.float32(2.0)).shape)
