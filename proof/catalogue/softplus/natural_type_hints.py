"""Natural style: type hints with __future__ annotations, typing aliases and Chinese docstrings."""
from __future__ import annotations

from typing import Any, Tuple

import jax
import jax.numpy as jnp

Array = Any  # jax.Array 或能转成数组的东西


def _stable_softplus(x: Array) -> Array:
    """数值稳定的 softplus：max(x, 0) + log1p(exp(-|x|))，指数的参数永远 <= 0。"""
    return jnp.log1p(jnp.exp(-jnp.abs(x))) + jnp.maximum(x, 0.0)


@jax.custom_vjp
def softplus_prod(x: Array) -> Array:
    """log(1 + e^x)，大 x 不上溢，小 x 保留相对精度。"""
    return _stable_softplus(x)


def _softplus_fwd(x: Array) -> Tuple[Array, Array]:
    return _stable_softplus(x), x


def _softplus_bwd(x: Array, g: Array) -> Tuple[Array]:
    # jax.nn.sigmoid 在整个区间上都是有限的
    return (g * jax.nn.sigmoid(x),)


softplus_prod.defvjp(_softplus_fwd, _softplus_bwd)
