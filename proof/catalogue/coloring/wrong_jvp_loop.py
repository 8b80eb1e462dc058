"""Violates: the 2b+1 JVPs must be pushed at once with jax.vmap over the colour seeds; this loops over the colours in Python."""


def f_penta(x):
    padded = jnp.pad(x, 2)
    return x**3 + padded[:-4] * padded[4:] - padded[1:-3]


def colored_jacobian_banded(f, x, bandwidth):
    n = x.shape[0]
    num_colors = 2 * bandwidth + 1
    color = jnp.arange(n) % num_colors
    products = []
    for k in range(num_colors):  # one jax.jvp per colour
        seed = (color == k).astype(x.dtype)
        products.append(jax.jvp(f, (x,), (seed,))[1])
    compressed = jnp.stack(products)  # compressed[k, i] = sum over columns j of colour k of J[i, j]
    rows = jnp.arange(n)[:, None]
    cols = jnp.arange(n)[None, :]
    in_band = jnp.abs(rows - cols) <= bandwidth
    return jnp.where(in_band, compressed[color[cols], rows], 0.0)
