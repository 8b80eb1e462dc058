"""Method: x64 switched on, the JVP taken at x in float64 with float64 seeds stored as columns (vmap in_axes=1, out_axes=1), result cast back to x's dtype."""
jax.config.update("jax_enable_x64", True)


def f_penta(x):
    padded = jnp.pad(x, 2)
    return x**3 + padded[:-4] * padded[4:] - padded[1:-3]


def colored_jacobian_banded(f, x, bandwidth):
    n = x.shape[0]
    m = 2 * bandwidth + 1
    color = np.arange(n) % m
    x64 = x.astype(jnp.float64)
    seeds = jnp.asarray(color[:, None] == np.arange(m)[None, :], jnp.float64)  # (n, m)
    compressed = jax.vmap(lambda s: jax.jvp(f, (x64,), (s,))[1], in_axes=1, out_axes=1)(seeds)  # (n, m)
    i, j = np.indices((n, n))
    dense = jnp.where(np.abs(i - j) <= bandwidth, jnp.take_along_axis(compressed, jnp.asarray(color[j]), axis=1), 0.0)
    return dense.astype(x.dtype)
