"""Violates: decompression must read rows j-b..j+b of column j; this window is shifted down by one row."""


def f_penta(x):
    padded = jnp.pad(x, 2)
    return x**3 + padded[:-4] * padded[4:] - padded[1:-3]


def colored_jacobian_banded(f, x, bandwidth):
    n = x.shape[0]
    num_colors = 2 * bandwidth + 1
    color = jnp.arange(n) % num_colors
    seeds = (color[None, :] == jnp.arange(num_colors)[:, None]).astype(x.dtype)
    compressed = jax.vmap(lambda s: jax.jvp(f, (x,), (s,))[1])(seeds)
    rows = jnp.arange(n)[:, None]
    cols = jnp.arange(n)[None, :]
    in_window = (rows - cols >= 1 - bandwidth) & (rows - cols <= bandwidth + 1)
    return jnp.where(in_window, compressed[color[cols], rows], 0.0)
