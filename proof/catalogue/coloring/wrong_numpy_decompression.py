"""Violates: must work under jax.jit (issue #35); the JVPs are right, but the decompression converts the traced result with np.asarray and reads it back in NumPy."""
# hint: test_jacobian_penta: 函数要能在 jax.jit 下运行，colored_jacobian_banded(f_penta(v) + J v, x, 2) 却在 jax.jit 下导出失败
# hint: test_jacobian_tridiag: 却在 jax.jit 下导出失败：对追踪中的数组（比如 JVP 的结果）只能用 jnp 运算
# hint: test_jvp_count: TracerArrayConversionError
# hint: test_too_few_colors: TracerArrayConversionError
# hint: test_hidden_penta_random: 导出 colored_jacobian_banded(f_penta(v) + J v, x, 2) 时出错
# hint: test_hidden_other_bands: 导出 colored_jacobian_banded(tri(v) + J v, x, 1) 时出错
# hint: test_hidden_compression: 导出 colored_jacobian_banded(wide(v) + J v, x, 1) 时出错


def f_penta(x):
    padded = jnp.pad(x, 2)
    return x**3 + padded[:-4] * padded[4:] - padded[1:-3]


def colored_jacobian_banded(f, x, bandwidth):
    n = x.shape[0]
    num_colors = 2 * bandwidth + 1
    color = np.arange(n) % num_colors
    seeds = jnp.asarray(color[None, :] == np.arange(num_colors)[:, None], x.dtype)
    compressed = np.asarray(jax.vmap(lambda s: jax.jvp(f, (x,), (s,))[1])(seeds))  # 在 jit 下是追踪中的数组
    jac = np.zeros((n, n), np.float32)
    for j in range(n):
        for i in range(max(0, j - bandwidth), min(n, j + bandwidth + 1)):
            jac[i, j] = compressed[color[j], i]
    return jnp.asarray(jac)
