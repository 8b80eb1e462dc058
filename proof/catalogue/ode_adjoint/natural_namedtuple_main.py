"""Natural style: the augmented state as a collections.namedtuple pytree, with a __main__ comparison."""
from collections import namedtuple

import jax
import jax.numpy as jnp
import numpy as np

N_STEPS = 100
T_END = 1.0

# 增广状态 (z, a, W̄)；namedtuple 本身就是 pytree，可以直接 tree.map
Augmented = namedtuple("Augmented", ["z", "a", "W_bar"])


def rk4(field, y0):
    h = T_END / N_STEPS

    def body(y, _):
        k1 = field(y)
        k2 = field(jax.tree.map(lambda u, k: u + h / 2 * k, y, k1))
        k3 = field(jax.tree.map(lambda u, k: u + h / 2 * k, y, k2))
        k4 = field(jax.tree.map(lambda u, k: u + h * k, y, k3))
        y_next = jax.tree.map(lambda u, p, q, r, s: u + h / 6 * (p + 2 * q + 2 * r + s), y, k1, k2, k3, k4)
        return y_next, None

    y_end, _ = jax.lax.scan(body, y0, None, length=N_STEPS)
    return y_end


def vector_field(z, W):
    return jnp.tanh(W @ z)


def odeint_unrolled(z0, W):
    return rk4(lambda z: vector_field(z, W), z0)


@jax.custom_vjp
def odeint_adjoint(z0, W):
    return odeint_unrolled(z0, W)


def adjoint_fwd(z0, W):
    zT = odeint_unrolled(z0, W)
    return zT, (zT, W)


def adjoint_bwd(res, g):
    zT, W = res

    def reversed_field(s):
        f, pullback = jax.vjp(vector_field, s.z, W)
        a_dfdz, a_dfdW = pullback(s.a)
        return Augmented(z=-f, a=a_dfdz, W_bar=a_dfdW)

    end = rk4(reversed_field, Augmented(z=zT, a=g, W_bar=jnp.zeros_like(W)))
    return end.a, end.W_bar


odeint_adjoint.defvjp(adjoint_fwd, adjoint_bwd)


if __name__ == "__main__":
    rng = np.random.default_rng(1)
    z0 = jnp.asarray(rng.normal(size=4), jnp.float32)
    W = jnp.asarray(0.7 * rng.normal(size=(4, 4)), jnp.float32)
    loss = lambda solver: (lambda z, w: jnp.sum(solver(z, w) ** 2))
    g_adj = jax.grad(loss(odeint_adjoint), argnums=(0, 1))(z0, W)
    g_unr = jax.grad(loss(odeint_unrolled), argnums=(0, 1))(z0, W)
    print("dz0 一致:", np.allclose(g_adj[0], g_unr[0], atol=1e-4), " dW 一致:", np.allclose(g_adj[1], g_unr[1], atol=1e-4))
