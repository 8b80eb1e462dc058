"""Method: jax.linearize once (f evaluated once), then vmap of the linear function over the 2b+1 colour seeds."""


def f_penta(x):
    padded = jnp.pad(x, 2)
    return x**3 + padded[:-4] * padded[4:] - padded[1:-3]


def colored_jacobian_banded(f, x, bandwidth):
    n = x.shape[0]
    num_colors = 2 * bandwidth + 1
    color = jnp.arange(n) % num_colors
    seeds = jax.nn.one_hot(jnp.arange(num_colors), num_colors, dtype=x.dtype)[:, color]  # seeds[k, j] = [color(j) == k]
    _, f_lin = jax.linearize(f, x)
    compressed = jax.vmap(f_lin)(seeds)
    i = jnp.arange(n)[:, None]
    j = jnp.arange(n)[None, :]
    return jnp.where(jnp.abs(i - j) <= bandwidth, compressed[color[j], i], 0.0)
