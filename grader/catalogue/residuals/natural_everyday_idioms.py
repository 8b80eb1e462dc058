"""Natural style: every idiom an honest student writes around the method — jax.typing hints, a private counter, namedtuple helpers, help(), names that shadow builtins."""
from __future__ import annotations

import collections

import jax
import jax.numpy as jnp
import numpy as np
from jax.ad_checkpoint import checkpoint_policies
from jax.typing import ArrayLike, DTypeLike

__all__ = ["sin2_save", "sin2_recompute"]
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


def _sum_sin_sq(x):
    return jnp.sum(jnp.sin(x) ** 2)


@jax.custom_vjp
def sin2_save(x):
    return _sum_sin_sq(x)


def _save_fwd(x):
    s, c = jnp.sin(x), jnp.cos(x)
    return jnp.sum(s * s), (s, c)  # 残差：sin x 和 cos x，共 2n 个元素


def _save_bwd(residuals, g):
    s, c = residuals
    return (2.0 * g * s * c,)


sin2_save.defvjp(_save_fwd, _save_bwd)


@jax.custom_vjp
def sin2_recompute(x):
    return _sum_sin_sq(x)


def _recompute_fwd(x):
    return _sum_sin_sq(x), x  # 残差只有 x 本身，n 个元素


def _recompute_bwd(x, g):
    return (g * jnp.sin(2.0 * x),)  # 反向时重新计算


sin2_recompute.defvjp(_recompute_fwd, _recompute_bwd)
