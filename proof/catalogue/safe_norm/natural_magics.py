"""Natural style: defjvps with a small helper, Chinese comments and cheap %time / %timeit magics."""
import jax
import jax.numpy as jnp


def _unit_or_zero(x, norm):
    """x / ‖x‖，零向量时返回零向量。"""
    positive = norm > 0
    return jnp.where(positive, x, 0.0) / jnp.where(positive, norm, 1.0)


@jax.custom_jvp
def safe_norm(x):
    return jnp.sqrt(jnp.sum(jnp.square(x)))


# defjvps：给出 (切向量, 原始输出, 原始输入) -> 输出切向量
safe_norm.defjvps(lambda t, ans, x: jnp.sum(_unit_or_zero(x, ans) * t))

%time jax.grad(safe_norm)(jnp.zeros(4)).block_until_ready()
%timeit -n 3 -r 1 jax.jit(jax.grad(safe_norm))(jnp.arange(4.0)).block_until_ready()
