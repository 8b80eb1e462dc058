"""Correct: one_hot seeds, vmap with in_axes=1 over the seed columns, decompression colour by colour."""


def f_penta(x):
    n = x.shape[0]
    idx = jnp.arange(n)

    def shifted(k):  # x_{i+k}, 0 outside the range
        return jnp.where((idx + k >= 0) & (idx + k < n), x[jnp.clip(idx + k, 0, n - 1)], 0.0)

    return x**3 + shifted(-2) * shifted(2) - shifted(-1)


def colored_jacobian_banded(f, x, bandwidth):
    n = x.shape[0]
    p = 2 * bandwidth + 1
    color = jnp.arange(n) % p
    seed_matrix = jax.nn.one_hot(color, p, dtype=x.dtype)  # (n, p): column k is the seed of colour k
    products = jax.vmap(lambda s: jax.jvp(f, (x,), (s,))[1], in_axes=1, out_axes=1)(seed_matrix)  # (n, p)
    dist = jnp.abs(jnp.arange(n)[:, None] - jnp.arange(n)[None, :])
    jac = jnp.zeros((n, n), x.dtype)
    for k in range(p):
        columns_of_k = (color == k)[None, :] & (dist <= bandwidth)
        jac = jac + jnp.where(columns_of_k, products[:, k : k + 1], 0.0)
    return jac
