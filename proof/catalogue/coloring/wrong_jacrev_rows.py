"""Violates: must use forward-mode JVPs; this compresses rows and uses 2b+1 VJPs (reverse mode)."""


def f_penta(x):
    padded = jnp.pad(x, 2)
    return x**3 + padded[:-4] * padded[4:] - padded[1:-3]


def colored_jacobian_banded(f, x, bandwidth):
    n = x.shape[0]
    num_colors = 2 * bandwidth + 1
    color = jnp.arange(n) % num_colors
    seeds = (color[None, :] == jnp.arange(num_colors)[:, None]).astype(x.dtype)
    _, pullback = jax.vjp(f, x)
    compressed = jax.vmap(lambda s: pullback(s)[0])(seeds)  # compressed[k, j] = sum_{c(i)=k} J[i, j]
    rows = jnp.arange(n)[:, None]
    cols = jnp.arange(n)[None, :]
    in_band = jnp.abs(rows - cols) <= bandwidth
    return jnp.where(in_band, compressed[color[rows], cols], 0.0)
