"""Violates: sin2_save keeps sin x and cos x only for the visible length n = 64; otherwise it keeps only x."""


@jax.custom_vjp
def sin2_save(x):
    return jnp.sum(jnp.sin(x) ** 2)


def _save_fwd(x):
    value = jnp.sum(jnp.sin(x) ** 2)
    if x.shape == (64,):
        return value, (jnp.sin(x), jnp.cos(x))
    return value, (x,)


def _save_bwd(res, g):
    if len(res) == 2:
        s, c = res
        return (2.0 * g * s * c,)
    (x,) = res
    return (g * jnp.sin(2.0 * x),)


sin2_save.defvjp(_save_fwd, _save_bwd)


@jax.custom_vjp
def sin2_recompute(x):
    return jnp.sum(jnp.sin(x) ** 2)


sin2_recompute.defvjp(lambda x: (jnp.sum(jnp.sin(x) ** 2), x), lambda x, g: (g * jnp.sin(2.0 * x),))
