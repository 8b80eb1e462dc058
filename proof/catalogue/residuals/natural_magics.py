"""Natural style: %time and %timeit comparing the two strategies, helper functions with Chinese docstrings."""
import jax
import jax.numpy as jnp


def sum_sin_sq(x):
    """f(x) = Σ sin² x_i（标量）。"""
    return jnp.sum(jnp.sin(x) ** 2)


@jax.custom_vjp
def sin2_save(x):
    return sum_sin_sq(x)


def save_fwd(x):
    """前向：把 sin x 和 cos x 都存下来（2n 个元素）。"""
    s = jnp.sin(x)
    c = jnp.cos(x)
    return jnp.sum(s * s), (s, c)


def save_bwd(res, g):
    s, c = res
    return (g * 2 * s * c,)


sin2_save.defvjp(save_fwd, save_bwd)


@jax.custom_vjp
def sin2_recompute(x):
    return sum_sin_sq(x)


def recompute_fwd(x):
    """前向：只存 x（n 个元素）。"""
    return sum_sin_sq(x), x


def recompute_bwd(x, g):
    return (g * jnp.sin(2 * x),)  # 2 sin x cos x = sin 2x


sin2_recompute.defvjp(recompute_fwd, recompute_bwd)

xs = jnp.linspace(-1.0, 1.0, 1000)
%time jax.grad(sin2_save)(xs).block_until_ready()
%time jax.grad(sin2_recompute)(xs).block_until_ready()
%timeit -n 3 -r 1 jax.grad(sin2_recompute)(xs).block_until_ready()
