"""Natural style: numbers.Real argument check in a typed wrapper around the custom_vjp."""
from __future__ import annotations

import numbers
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp

PyTree = Any


@partial(jax.custom_vjp, nondiff_argnums=(1,))
def _identity_with_clipped_grad(params: PyTree, max_norm: float) -> PyTree:
    return params


def _fwd(params: PyTree, max_norm: float) -> tuple[PyTree, None]:
    return params, None


def _bwd(max_norm: float, _res: None, cotangent: PyTree) -> tuple[PyTree]:
    leaves = jax.tree.leaves(cotangent)
    norm = jnp.sqrt(sum(jnp.sum(jnp.square(leaf)) for leaf in leaves))
    # max_norm / max(norm, max_norm) == min(1, max_norm / norm)，而且 norm == 0 时也不会除以 0
    scale = max_norm / jnp.maximum(norm, max_norm)
    return (jax.tree.map(lambda leaf: leaf * scale, cotangent),)


_identity_with_clipped_grad.defvjp(_fwd, _bwd)


def clip_grad_global_norm(params: PyTree, max_norm: float) -> PyTree:
    """前向恒等；反向把余切按全局 L2 范数裁剪到 max_norm 以内。"""
    if not isinstance(max_norm, numbers.Real) or max_norm <= 0:
        raise ValueError(f"max_norm 应是正的实数，得到 {max_norm!r}")
    return _identity_with_clipped_grad(params, float(max_norm))
