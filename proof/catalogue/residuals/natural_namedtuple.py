"""Natural style: residuals packed into a collections.namedtuple, with Chinese docstrings."""
from collections import namedtuple

import jax
import jax.numpy as jnp

# 保存策略的残差：sin x 和 cos x，各 n 个元素
SinCos = namedtuple("SinCos", ["sin", "cos"])


def _f(x):
    """f(x) = Σ sin² x_i"""
    return jnp.sum(jnp.sin(x) ** 2)


@jax.custom_vjp
def sin2_save(x):
    return _f(x)


def sin2_save_fwd(x):
    res = SinCos(sin=jnp.sin(x), cos=jnp.cos(x))
    return jnp.sum(res.sin ** 2), res


def sin2_save_bwd(res, g):
    return (2.0 * g * res.sin * res.cos,)


sin2_save.defvjp(sin2_save_fwd, sin2_save_bwd)


@jax.custom_vjp
def sin2_recompute(x):
    return _f(x)


def sin2_recompute_fwd(x):
    return _f(x), x  # 只存 x


def sin2_recompute_bwd(x, g):
    """反向时重新算 sin x、cos x。"""
    s, c = jnp.sin(x), jnp.cos(x)
    return (2.0 * g * s * c,)


sin2_recompute.defvjp(sin2_recompute_fwd, sin2_recompute_bwd)
