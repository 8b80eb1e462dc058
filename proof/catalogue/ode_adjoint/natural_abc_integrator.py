"""Natural style: an abc.ABC integrator base class with an RK4 subclass (__init__ fields, __call__)."""
import abc

import jax
import jax.numpy as jnp

N_STEPS = 100
T_END = 1.0


class Integrator(abc.ABC):
    """固定步长积分器：状态可以是任意 pytree。"""

    def __init__(self, n_steps, t_end):
        self.n_steps = n_steps
        self.h = t_end / n_steps

    @abc.abstractmethod
    def step(self, field, state):
        """走一步。"""

    def __call__(self, field, state):
        return jax.lax.fori_loop(0, self.n_steps, lambda _, s: self.step(field, s), state)


class RK4(Integrator):
    def step(self, field, state):
        h = self.h

        def axpy(c, k, s):
            return jax.tree.map(lambda si, ki: si + c * ki, s, k)

        k1 = field(state)
        k2 = field(axpy(h / 2, k1, state))
        k3 = field(axpy(h / 2, k2, state))
        k4 = field(axpy(h, k3, state))
        return jax.tree.map(lambda s, a, b, c, d: s + h / 6 * (a + 2 * b + 2 * c + d), state, k1, k2, k3, k4)


def rk4(field, state):
    """按调用时的 N_STEPS、T_END 积分。"""
    return RK4(N_STEPS, T_END)(field, state)


def dynamics(z, W):
    return jnp.tanh(W @ z)


def odeint_unrolled(z0, W):
    return rk4(lambda z: dynamics(z, W), z0)


@jax.custom_vjp
def odeint_adjoint(z0, W):
    return rk4(lambda z: dynamics(z, W), z0)


def _adjoint_fwd(z0, W):
    zT = odeint_adjoint(z0, W)
    return zT, (zT, W)  # 只存终点和 W，不存轨迹


def _adjoint_bwd(res, g):
    zT, W = res

    def backward_field(state):
        # 反向时间 s = T - t：dz/ds = -f，da/ds = aᵀ ∂f/∂z，dW̄/ds = aᵀ ∂f/∂W
        z, a, _ = state
        f, vjp = jax.vjp(dynamics, z, W)
        a_z, a_W = vjp(a)
        return (-f, a_z, a_W)

    _, a0, W_bar = rk4(backward_field, (zT, g, jnp.zeros_like(W)))
    return a0, W_bar


odeint_adjoint.defvjp(_adjoint_fwd, _adjoint_bwd)
