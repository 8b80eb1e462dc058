"""Natural style: every idiom an honest student writes around the method — jax.typing hints, a private counter, namedtuple helpers, help(), names that shadow builtins."""
from __future__ import annotations

import collections

import jax
import jax.numpy as jnp
import numpy as np
from jax.ad_checkpoint import checkpoint_policies
from jax.typing import ArrayLike, DTypeLike

__all__ = ["clip_grad_global_norm"]
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


# max_norm 是 Python float、不求导：放进 nondiff_argnums，它会作为第一个参数传给反向规则。
@partial(jax.custom_vjp, nondiff_argnums=(1,))
def clip_grad_global_norm(params, max_norm):
    return params


def _clip_fwd(params, max_norm):
    return params, None  # 反向只需要余切本身，不需要残差


def _clip_bwd(max_norm, _residuals, cotangent):
    leaves = jax.tree.leaves(cotangent)
    total = jnp.sqrt(sum(jnp.vdot(leaf, leaf).real for leaf in leaves))
    # 余切为零时 max_norm / 0 = inf，min 之后系数是 1，不会出现 nan
    factor = jnp.minimum(1.0, max_norm / total)
    return (jax.tree.map(lambda leaf: leaf * factor.astype(leaf.dtype), cotangent),)


clip_grad_global_norm.defvjp(_clip_fwd, _clip_bwd)
