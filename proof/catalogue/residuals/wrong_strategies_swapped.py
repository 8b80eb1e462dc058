"""Violates: the residual policies are swapped (sin2_save keeps only x, sin2_recompute keeps sin x and cos x)."""


def _keep_x(x):
    return jnp.sum(jnp.sin(x) ** 2), x


def _from_x(x, g):
    return (g * jnp.sin(2.0 * x),)


def _keep_sin_cos(x):
    s, c = jnp.sin(x), jnp.cos(x)
    return jnp.sum(s**2), (s, c)


def _from_sin_cos(res, g):
    s, c = res
    return (2.0 * g * s * c,)


@jax.custom_vjp
def sin2_save(x):
    return jnp.sum(jnp.sin(x) ** 2)


sin2_save.defvjp(_keep_x, _from_x)


@jax.custom_vjp
def sin2_recompute(x):
    return jnp.sum(jnp.sin(x) ** 2)


sin2_recompute.defvjp(_keep_sin_cos, _from_sin_cos)
