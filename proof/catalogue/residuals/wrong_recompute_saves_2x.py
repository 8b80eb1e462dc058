"""Violates: sin2_recompute must keep exactly x; it keeps 2x (n elements, computed from x, so a count of residuals cannot tell) and takes sin of it in bwd."""
# hint: test_visible_residuals: sin2_recompute 保存的残差不正好是 x 本身
# hint: test_hidden_residuals: sin2_recompute 保存的残差不正好是 x 本身


@jax.custom_vjp
def sin2_save(x):
    return jnp.sum(jnp.sin(x) ** 2)


def _save_fwd(x):
    s, c = jnp.sin(x), jnp.cos(x)
    return jnp.sum(s * s), (s, c)


def _save_bwd(res, g):
    s, c = res
    return (2.0 * g * s * c,)


sin2_save.defvjp(_save_fwd, _save_bwd)


@jax.custom_vjp
def sin2_recompute(x):
    return jnp.sum(jnp.sin(x) ** 2)


def _recompute_fwd(x):
    return jnp.sum(jnp.sin(x) ** 2), 2.0 * x


def _recompute_bwd(twice_x, g):
    return (g * jnp.sin(twice_x),)


sin2_recompute.defvjp(_recompute_fwd, _recompute_bwd)
