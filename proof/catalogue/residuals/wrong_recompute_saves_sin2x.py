"""Wrong: sin2_recompute's forward rule saves sin 2x (n elements, the derivative itself) instead of x."""
# hint: test_visible_residuals: sin2_recompute 保存的残差不正好是 x 本身
# hint: test_hidden_residuals: sin2_recompute 保存的残差不正好是 x 本身


def _sum_sin_sq(x):
    return jnp.sum(jnp.sin(x) ** 2)


@jax.custom_vjp
def sin2_save(x):
    return _sum_sin_sq(x)


def _save_fwd(x):
    s, c = jnp.sin(x), jnp.cos(x)
    return jnp.sum(s * s), (s, c)


def _save_bwd(res, g):
    s, c = res
    return (2.0 * g * s * c,)


sin2_save.defvjp(_save_fwd, _save_bwd)


@jax.custom_vjp
def sin2_recompute(x):
    return _sum_sin_sq(x)


def _recompute_fwd(x):
    return _sum_sin_sq(x), jnp.sin(2.0 * x)  # n elements, but not x: the derivative computed ahead


def _recompute_bwd(d, g):
    return (g * d,)


sin2_recompute.defvjp(_recompute_fwd, _recompute_bwd)
