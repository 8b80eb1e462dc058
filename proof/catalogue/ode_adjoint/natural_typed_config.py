"""Natural style: type hints plus a frozen dataclass SolverConfig holding the step count and end time."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Tuple

import jax
import jax.numpy as jnp

N_STEPS = 100
T_END = 1.0

Array = jax.Array
State = Tuple[Array, ...]


@dataclass(frozen=True)
class SolverConfig:
    n_steps: int
    t_end: float

    @property
    def h(self) -> float:
        return self.t_end / self.n_steps


def rk4_solve(field: Callable[[State], State], state: State, cfg: SolverConfig | None = None) -> State:
    """用经典 RK4 把元组状态积分 cfg.n_steps 步（步长 cfg.h）；默认用调用时的 N_STEPS、T_END。"""
    cfg = cfg or SolverConfig(N_STEPS, T_END)
    h = cfg.h

    def plus(s: State, k: State, c: float) -> State:
        return tuple(si + c * ki for si, ki in zip(s, k))

    def one_step(s: State, _) -> tuple[State, None]:
        k1 = field(s)
        k2 = field(plus(s, k1, h / 2))
        k3 = field(plus(s, k2, h / 2))
        k4 = field(plus(s, k3, h))
        new = tuple(si + h / 6 * (a + 2 * b + 2 * c + d) for si, a, b, c, d in zip(s, k1, k2, k3, k4))
        return new, None

    final, _ = jax.lax.scan(one_step, state, None, length=cfg.n_steps)
    return final


def rhs(z: Array, W: Array) -> Array:
    return jnp.tanh(W @ z)


def odeint_unrolled(z0: Array, W: Array) -> Array:
    (zT,) = rk4_solve(lambda s: (rhs(s[0], W),), (z0,))
    return zT


@jax.custom_vjp
def odeint_adjoint(z0: Array, W: Array) -> Array:
    return odeint_unrolled(z0, W)


def odeint_adjoint_fwd(z0: Array, W: Array) -> tuple[Array, tuple[Array, Array]]:
    zT = odeint_unrolled(z0, W)
    return zT, (zT, W)


def odeint_adjoint_bwd(res: tuple[Array, Array], g: Array) -> tuple[Array, Array]:
    zT, W = res

    def aug(s: State) -> State:
        z, a, _ = s
        f, pullback = jax.vjp(rhs, z, W)
        dz, dW = pullback(a)
        return (-f, dz, dW)  # 时间倒着走，所以 z 的方程带负号

    _, a0, w_bar = rk4_solve(aug, (zT, g, jnp.zeros_like(W)))
    return a0, w_bar


odeint_adjoint.defvjp(odeint_adjoint_fwd, odeint_adjoint_bwd)
