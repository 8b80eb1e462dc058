"""Violates: must work for any n; the colour pattern is built for the visible tests' n = 30."""


def f_penta(x):
    padded = jnp.pad(x, 2)
    return x**3 + padded[:-4] * padded[4:] - padded[1:-3]


def colored_jacobian_banded(f, x, bandwidth):
    num_colors = 2 * bandwidth + 1
    color = jnp.arange(30) % num_colors
    seeds = (color[None, :] == jnp.arange(num_colors)[:, None]).astype(x.dtype)
    compressed = jax.vmap(lambda s: jax.jvp(f, (x,), (s,))[1])(seeds)
    rows = jnp.arange(30)[:, None]
    cols = jnp.arange(30)[None, :]
    in_band = jnp.abs(rows - cols) <= bandwidth
    return jnp.where(in_band, compressed[color[cols], rows], 0.0)
