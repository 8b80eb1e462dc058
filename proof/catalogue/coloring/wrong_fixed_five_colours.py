"""Violates: the number of colours must be 2b+1; this always uses 5 colours (the pentadiagonal case)."""


def f_penta(x):
    padded = jnp.pad(x, 2)
    return x**3 + padded[:-4] * padded[4:] - padded[1:-3]


def colored_jacobian_banded(f, x, bandwidth):
    n = x.shape[0]
    color = jnp.arange(n) % 5
    seeds = (color[None, :] == jnp.arange(5)[:, None]).astype(x.dtype)
    compressed = jax.vmap(lambda s: jax.jvp(f, (x,), (s,))[1])(seeds)
    rows = jnp.arange(n)[:, None]
    cols = jnp.arange(n)[None, :]
    in_band = jnp.abs(rows - cols) <= bandwidth
    return jnp.where(in_band, compressed[color[cols], rows], 0.0)
