"""Natural style: a frozen dataclass holding the zero-point convention, plus debug prints."""
import dataclasses

import jax
import jax.numpy as jnp


@dataclasses.dataclass(frozen=True)
class ZeroConvention:
    slope_at_zero: float = 0.0  # 题目约定零点的 JVP 为 0

    def __post_init__(self):
        if self.slope_at_zero != 0.0:
            raise ValueError("本题约定零点的导数为 0")


RULE = ZeroConvention()


@jax.custom_jvp
def safe_norm(x):
    return jnp.linalg.norm(x)


@safe_norm.defjvp
def _jvp(primals, tangents):
    x, = primals
    t, = tangents
    n = jnp.linalg.norm(x)
    ok = n > 0
    coeff = jnp.where(ok, x / jnp.where(ok, n, 1.0), RULE.slope_at_zero)
    return n, coeff @ t


print(safe_norm.__name__, RULE)
print("shape", jax.grad(safe_norm)(jnp.zeros(3)).shape, jax.grad(safe_norm)(jnp.zeros(3)))
