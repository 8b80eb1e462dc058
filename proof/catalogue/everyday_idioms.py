"""Natural style (one per exercise, around its reference method): every idiom an honest student writes around the method — jax.typing hints, a private counter, namedtuple helpers, help(), names that shadow builtins."""

from __future__ import annotations

import collections

import jax
import jax.numpy as jnp
import numpy as np
from jax.ad_checkpoint import checkpoint_policies
from jax.typing import ArrayLike, DTypeLike

__all__ = INTERFACE_NAMES  # the exercise's names, filled in per exercise
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
