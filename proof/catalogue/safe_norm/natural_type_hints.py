"""Natural style: annotated signatures (typing.Tuple, Sequence) and Chinese docstrings."""
from typing import Sequence, Tuple

import jax
import jax.numpy as jnp

Array = jax.Array


@jax.custom_jvp
def safe_norm(x: Array) -> Array:
    """一维数组的 L2 范数；零点的导数约定为 0。"""
    return jnp.sqrt(jnp.sum(x**2))


@safe_norm.defjvp
def safe_norm_jvp(primals: Sequence[Array], tangents: Sequence[Array]) -> Tuple[Array, Array]:
    (x,) = primals
    (t,) = tangents
    norm = safe_norm(x)
    is_zero = norm == 0.0
    denom = jnp.where(is_zero, 1.0, norm)  # 先把分母换掉，避免 0/0
    direction = jnp.where(is_zero, 0.0, x / denom)
    return norm, jnp.dot(direction, t)  # 对 t 线性
