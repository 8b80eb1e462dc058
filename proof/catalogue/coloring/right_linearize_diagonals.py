"""Correct: linearize once, vmap the linear map over the seeds, decompress diagonal by diagonal."""


def f_penta(x):
    n = x.shape[0]
    zeros = jnp.zeros(2, x.dtype)
    ext = jnp.concatenate([zeros, x, zeros])
    x_m2 = ext[0:n]
    x_m1 = ext[1 : n + 1]
    x_p2 = ext[4 : n + 4]
    return x * x * x + x_m2 * x_p2 - x_m1


def colored_jacobian_banded(f, x, bandwidth):
    n = x.shape[0]
    p = 2 * bandwidth + 1
    seeds = jnp.stack([(jnp.arange(n) % p == k).astype(x.dtype) for k in range(p)])
    _, f_lin = jax.linearize(f, x)
    compressed = jax.vmap(f_lin)(seeds)  # (p, n)
    jac = jnp.zeros((n, n), x.dtype)
    for offset in range(-bandwidth, bandwidth + 1):
        i = jnp.arange(max(0, -offset), min(n, n - offset))
        j = i + offset
        jac = jac.at[i, j].set(compressed[j % p, i])
    return jac
