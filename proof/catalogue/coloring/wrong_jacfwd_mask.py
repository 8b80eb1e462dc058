"""Violates: must be a true compression with 2b+1 JVPs; this is jacfwd (n JVPs) with a band mask."""


def f_penta(x):
    padded = jnp.pad(x, 2)
    return x**3 + padded[:-4] * padded[4:] - padded[1:-3]


def colored_jacobian_banded(f, x, bandwidth):
    n = x.shape[0]
    full = jax.jacfwd(f)(x)
    offsets = jnp.arange(n)[:, None] - jnp.arange(n)[None, :]
    return jnp.where(jnp.abs(offsets) <= bandwidth, full, 0.0)
