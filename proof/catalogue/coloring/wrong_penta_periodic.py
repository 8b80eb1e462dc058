"""Violates: out-of-range terms must be 0; jnp.roll wraps around the ends instead."""


def f_penta(x):
    return x**3 + jnp.roll(x, 2) * jnp.roll(x, -2) - jnp.roll(x, 1)


def colored_jacobian_banded(f, x, bandwidth):
    n = x.shape[0]
    num_colors = 2 * bandwidth + 1
    color = jnp.arange(n) % num_colors
    seeds = (color[None, :] == jnp.arange(num_colors)[:, None]).astype(x.dtype)
    compressed = jax.vmap(lambda s: jax.jvp(f, (x,), (s,))[1])(seeds)
    rows = jnp.arange(n)[:, None]
    cols = jnp.arange(n)[None, :]
    in_band = jnp.abs(rows - cols) <= bandwidth
    return jnp.where(in_band, compressed[color[cols], rows], 0.0)
