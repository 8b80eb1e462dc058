"""Natural style: every idiom an honest student writes around the method — jax.typing hints, a private counter, namedtuple helpers, help(), names that shadow builtins."""
from __future__ import annotations

import collections

import jax
import jax.numpy as jnp
import numpy as np
from jax.ad_checkpoint import checkpoint_policies
from jax.typing import ArrayLike, DTypeLike

__all__ = ["softplus_prod"]
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


@jax.custom_vjp
def softplus_prod(x):
    # log(1 + e^x) = max(x, 0) + log1p(e^{-|x|})：指数的参数始终 <= 0，不会上溢；
    # log1p 让 x 很负时的小结果保持相对精度。
    tail = jnp.log1p(jnp.exp(-jnp.abs(x)))
    return tail + jnp.maximum(x, 0.0)


def _softplus_prod_fwd(x):
    return softplus_prod(x), x  # 残差只需要 x


def _softplus_prod_bwd(x, g):
    # sigma(x) = exp(-softplus(-x))：同样不会上溢
    sigma = jnp.exp(-softplus_prod(-x))
    return (g * sigma,)


softplus_prod.defvjp(_softplus_prod_fwd, _softplus_prod_bwd)
