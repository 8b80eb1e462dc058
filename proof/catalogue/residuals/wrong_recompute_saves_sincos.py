"""Violates: sin2_recompute must keep only x, but it also saves sin x and cos x."""


@jax.custom_vjp
def sin2_save(x):
    return jnp.sum(jnp.sin(x) ** 2)


def _keep_sin_cos(x):
    s, c = jnp.sin(x), jnp.cos(x)
    return jnp.sum(s**2), (s, c)


def _use_sin_cos(res, g):
    s, c = res
    return (2.0 * g * s * c,)


sin2_save.defvjp(_keep_sin_cos, _use_sin_cos)


@jax.custom_vjp
def sin2_recompute(x):
    return jnp.sum(jnp.sin(x) ** 2)


sin2_recompute.defvjp(_keep_sin_cos, _use_sin_cos)
