"""Violates: sin2_save keeps sin x and cos x; this one keeps sin 2x and x (2n elements too) and its bwd uses sin 2x."""


@jax.custom_vjp
def sin2_save(x):
    return jnp.sum(jnp.sin(x) ** 2)


def _save_fwd(x):
    return jnp.sum(jnp.sin(x) ** 2), (jnp.sin(2.0 * x), x)


def _save_bwd(res, g):
    sin_2x, _ = res
    return (g * sin_2x,)


sin2_save.defvjp(_save_fwd, _save_bwd)


@jax.custom_vjp
def sin2_recompute(x):
    return jnp.sum(jnp.sin(x) ** 2)


def _recompute_fwd(x):
    return jnp.sum(jnp.sin(x) ** 2), x


def _recompute_bwd(x, g):
    return (g * jnp.sin(2.0 * x),)


sin2_recompute.defvjp(_recompute_fwd, _recompute_bwd)
