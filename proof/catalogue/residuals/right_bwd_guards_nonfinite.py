"""Method: the asked custom_vjp rules; sin2_save's backward rule multiplies the saved sin x and cos x by g, guarding a non-finite cotangent (jnp.isfinite) so one bad upstream number gives a zero gradient instead of spreading nan; sin2_recompute keeps x."""


def _value(x):
    return jnp.sum(jnp.sin(x) ** 2)


@jax.custom_vjp
def sin2_save(x):
    return _value(x)


def _save_fwd(x):
    s, c = jnp.sin(x), jnp.cos(x)
    return jnp.sum(s * s), (s, c)


def _save_bwd(saved, g):
    s, c = saved
    g = jnp.where(jnp.isfinite(g), g, 0.0)  # 上游给了 inf/nan 时不把它传下去
    return (2.0 * g * s * c,)


sin2_save.defvjp(_save_fwd, _save_bwd)


@jax.custom_vjp
def sin2_recompute(x):
    return _value(x)


def _recompute_fwd(x):
    return _value(x), x


def _recompute_bwd(x, g):
    g = jnp.where(jnp.isfinite(g), g, 0.0)
    return (g * jnp.sin(2.0 * x),)


sin2_recompute.defvjp(_recompute_fwd, _recompute_bwd)
