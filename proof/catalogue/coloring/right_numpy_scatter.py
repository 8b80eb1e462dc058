"""Correct: seeds and decompression indices built in NumPy, scatter of each colour's rows."""


def f_penta(x):
    n = x.shape[0]
    left2 = jnp.zeros_like(x).at[2:].set(x[: n - 2])
    right2 = jnp.zeros_like(x).at[: n - 2].set(x[2:])
    left1 = jnp.zeros_like(x).at[1:].set(x[: n - 1])
    return jnp.power(x, 3) + left2 * right2 - left1


def colored_jacobian_banded(f, x, bandwidth):
    n = int(x.shape[0])
    b = int(bandwidth)
    p = 2 * b + 1
    seeds = np.zeros((p, n), dtype=np.float32)
    seeds[np.arange(n) % p, np.arange(n)] = 1.0
    compressed = jax.vmap(lambda s: jax.jvp(f, (x,), (s,))[1])(jnp.asarray(seeds, x.dtype))
    rows, cols = [], []
    for j in range(n):
        for i in range(max(0, j - b), min(n, j + b + 1)):
            rows.append(i)
            cols.append(j)
    rows, cols = np.array(rows), np.array(cols)
    return jnp.zeros((n, n), x.dtype).at[rows, cols].set(compressed[cols % p, rows])
