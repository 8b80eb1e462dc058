"""Natural style: annotated signatures with typing.Callable, small helpers with Chinese docstrings."""
from typing import Callable

import jax
import jax.numpy as jnp

Array = jax.Array


def _shift(x: Array, k: int) -> Array:
    """y_i = x_{i+k}，下标越界的位置补 0。"""
    n = x.shape[0]
    zeros = jnp.zeros(min(abs(k), n), x.dtype)
    if k > 0:
        return jnp.concatenate([x[k:], zeros])
    if k < 0:
        return jnp.concatenate([zeros, x[:k]])
    return x


def f_penta(x: Array) -> Array:
    """f_i = x_i^3 + x_{i-2} x_{i+2} - x_{i-1}。"""
    return x**3 + _shift(x, -2) * _shift(x, 2) - _shift(x, -1)


def colored_jacobian_banded(f: Callable[[Array], Array], x: Array, bandwidth: int) -> Array:
    n = x.shape[0]
    num_colors = 2 * bandwidth + 1
    colors = jnp.arange(n) % num_colors
    # 第 k 行是颜色 k 的种子向量
    seeds = (colors[None, :] == jnp.arange(num_colors)[:, None]).astype(x.dtype)
    compressed = jax.vmap(lambda s: jax.jvp(f, (x,), (s,))[1])(seeds)  # (num_colors, n)
    i = jnp.arange(n)[:, None]
    j = jnp.arange(n)[None, :]
    # 解压：J[i, j] 就是颜色 c(j) 那次 JVP 的第 i 个分量
    return jnp.where(jnp.abs(i - j) <= bandwidth, compressed[colors[j], i], 0.0)
