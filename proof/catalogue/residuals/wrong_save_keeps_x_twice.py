"""Violates: sin2_save must keep sin x and cos x as residuals; this one saves two copies of x (2n elements) and recomputes sin and cos in bwd."""


@jax.custom_vjp
def sin2_save(x):
    return jnp.sum(jnp.sin(x) ** 2)


def _save_fwd(x):
    return jnp.sum(jnp.sin(x) ** 2), (x * 1.0, x + 0.0)


def _save_bwd(res, g):
    x, _ = res
    return (g * 2.0 * jnp.sin(x) * jnp.cos(x),)


sin2_save.defvjp(_save_fwd, _save_bwd)


@jax.custom_vjp
def sin2_recompute(x):
    return jnp.sum(jnp.sin(x) ** 2)


def _recompute_fwd(x):
    return jnp.sum(jnp.sin(x) ** 2), x


def _recompute_bwd(x, g):
    return (g * jnp.sin(2.0 * x),)


sin2_recompute.defvjp(_recompute_fwd, _recompute_bwd)
