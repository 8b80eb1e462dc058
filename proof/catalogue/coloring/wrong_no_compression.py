"""Violates: exactly 2b+1 JVPs; every column gets its own colour (n JVPs, no compression)."""


def f_penta(x):
    padded = jnp.pad(x, 2)
    return x**3 + padded[:-4] * padded[4:] - padded[1:-3]


def colored_jacobian_banded(f, x, bandwidth):
    n = x.shape[0]
    color = jnp.arange(n)  # one colour per column
    seeds = (color[None, :] == jnp.arange(n)[:, None]).astype(x.dtype)
    compressed = jax.vmap(lambda s: jax.jvp(f, (x,), (s,))[1])(seeds)
    rows = jnp.arange(n)[:, None]
    cols = jnp.arange(n)[None, :]
    in_band = jnp.abs(rows - cols) <= bandwidth
    return jnp.where(in_band, compressed[color[cols], rows], 0.0)
