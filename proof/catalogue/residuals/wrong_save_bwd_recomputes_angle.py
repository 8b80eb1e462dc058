"""Violates: sin2_save's bwd only multiplies the saved sin x and cos x; this one recovers x = atan2(sin, cos) and recomputes sin 2x."""


@jax.custom_vjp
def sin2_save(x):
    return jnp.sum(jnp.sin(x) ** 2)


def _save_fwd(x):
    return jnp.sum(jnp.sin(x) ** 2), (jnp.sin(x), jnp.cos(x))


def _save_bwd(res, g):
    s, c = res
    return (g * jnp.sin(2.0 * jnp.arctan2(s, c)),)


sin2_save.defvjp(_save_fwd, _save_bwd)


@jax.custom_vjp
def sin2_recompute(x):
    return jnp.sum(jnp.sin(x) ** 2)


def _recompute_fwd(x):
    return jnp.sum(jnp.sin(x) ** 2), x


def _recompute_bwd(x, g):
    return (g * jnp.sin(2.0 * x),)


sin2_recompute.defvjp(_recompute_fwd, _recompute_bwd)
