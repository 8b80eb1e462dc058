"""Violates: gradient must be sin 2x = 2 sin x cos x; both bwd rules return 2 sin x (chain rule factor cos x missing)."""


@jax.custom_vjp
def sin2_save(x):
    return jnp.sum(jnp.sin(x) ** 2)


def _save_fwd(x):
    s, c = jnp.sin(x), jnp.cos(x)
    return jnp.sum(s**2), (s, c)


def _save_bwd(res, g):
    s, _ = res
    return (2.0 * g * s,)


sin2_save.defvjp(_save_fwd, _save_bwd)


@jax.custom_vjp
def sin2_recompute(x):
    return jnp.sum(jnp.sin(x) ** 2)


sin2_recompute.defvjp(lambda x: (jnp.sum(jnp.sin(x) ** 2), x), lambda x, g: (2.0 * g * jnp.sin(x),))
