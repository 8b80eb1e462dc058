"""Natural style: a frozen dataclass holding the switch-over threshold, checked in __post_init__."""
from dataclasses import dataclass

import jax
import jax.numpy as jnp


@dataclass(frozen=True)
class SoftplusConfig:
    # x 超过这个阈值时 log(1 + e^x) 与 x 的差（约 e^-x）已经远小于 float32 的精度
    threshold: float = 20.0

    def __post_init__(self):
        if not self.threshold > 0:
            raise ValueError(f"threshold 必须为正，得到 {self.threshold}")


CONFIG = SoftplusConfig()


def _forward_value(x):
    big = x > CONFIG.threshold
    safe_x = jnp.where(big, 0.0, x)  # 大 x 的分支不再算 exp，免得出现 inf
    return jnp.where(big, x, jnp.log1p(jnp.exp(safe_x)))


def _sigmoid(x):
    # 按符号分两种写法，exp 的参数总是 <= 0
    e = jnp.exp(-jnp.abs(x))
    return jnp.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


@jax.custom_vjp
def softplus_prod(x):
    return _forward_value(x)


def softplus_fwd(x):
    return _forward_value(x), x


def softplus_bwd(x, g):
    return (g * _sigmoid(x),)


softplus_prod.defvjp(softplus_fwd, softplus_bwd)
