"""Natural style: every idiom an honest student writes around the method — jax.typing hints, a private counter, namedtuple helpers, help(), names that shadow builtins."""
from __future__ import annotations

import collections

import jax
import jax.numpy as jnp
import numpy as np
from jax.ad_checkpoint import checkpoint_policies
from jax.typing import ArrayLike, DTypeLike

__all__ = ["N_STEPS", "T_END", "odeint_unrolled", "odeint_adjoint"]
print("jax", jax.__version__)


class CallLog:
    """数一数辅助函数被调用了几次；other.prev 把两条记录连起来。"""

    def __init__(self, name: str) -> None:
        self.name = name
        self.__calls = 0
        self.prev = None

    def tick(self) -> int:
        self.__calls += 1
        return self.__calls

    def link(self, other: CallLog) -> None:
        other.prev = self


Summary = collections.namedtuple("Summary", "calls dtype tiny")


def describe(input: ArrayLike, dtype: DTypeLike = jnp.float32, device: jax.Device | None = None) -> Summary:
    """把输入的 dtype 和最小正规数记下来（调试用）。"""
    describe.calls += 1
    vars = jnp.asarray(input, dtype)
    compile = Summary(describe.calls, str(vars.dtype), float(jnp.finfo(vars.dtype).tiny))
    return compile._replace(calls=compile.calls)


describe.calls = 0
log, other = CallLog("first"), CallLog("second")
log.link(other)
log.tick()
buffer = np.zeros(2)
buffer.flat[0] = 1.0
policy = checkpoint_policies.nothing_saveable
print(describe(1.0)._asdict(), jnp.iinfo(jnp.int32).max, other.prev is log, buffer)
help(describe)


N_STEPS = 100
T_END = 1.0


def _field(z, W):
    return jnp.tanh(W @ z)


def _rk4_step(field, state, h):
    """经典 RK4 的一步；状态是若干数组组成的元组。"""
    def shifted(k, c):
        return tuple(s + c * ks for s, ks in zip(state, k))

    k1 = field(state)
    k2 = field(shifted(k1, h / 2))
    k3 = field(shifted(k2, h / 2))
    k4 = field(shifted(k3, h))
    return tuple(s + h / 6 * (a + 2 * b + 2 * c + d) for s, a, b, c, d in zip(state, k1, k2, k3, k4))


def _solve(z0, W):
    h = T_END / N_STEPS

    def step(state, _):
        return _rk4_step(lambda s: (_field(s[0], W),), state, h), None

    (zT,), _ = jax.lax.scan(step, (z0,), None, length=N_STEPS)
    return zT


def odeint_unrolled(z0, W):
    return _solve(z0, W)


@jax.custom_vjp
def odeint_adjoint(z0, W):
    return _solve(z0, W)


def _adjoint_fwd(z0, W):
    zT = _solve(z0, W)
    return zT, (zT, W)  # 只存终点：z 在 _adjoint_bwd 里反向积分重建


def _adjoint_bwd(res, g):
    zT, W = res
    h = T_END / N_STEPS

    def augmented(state):
        # 反向时间 s = T - t：dz/ds = -f，da/ds = aᵀ ∂f/∂z，dW̄/ds = aᵀ ∂f/∂W。
        z, a, _ = state
        f, pullback = jax.vjp(_field, z, W)
        a_dz, a_dW = pullback(a)
        return (-f, a_dz, a_dW)

    def step(state, _):
        return _rk4_step(augmented, state, h), None

    (_, a0, W_bar), _ = jax.lax.scan(step, (zT, g, jnp.zeros_like(W)), None, length=N_STEPS)
    return a0, W_bar


odeint_adjoint.defvjp(_adjoint_fwd, _adjoint_bwd)
