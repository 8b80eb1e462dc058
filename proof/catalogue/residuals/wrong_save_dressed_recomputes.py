"""Violates: sin2_save keeps exactly sin x and cos x; this one also keeps x and its bwd ignores sin and cos, recomputing from x."""


@jax.custom_vjp
def sin2_save(x):
    return jnp.sum(jnp.sin(x) ** 2)


def _save_fwd(x):
    s, c = jnp.sin(x), jnp.cos(x)
    return jnp.sum(s * s), (s, c, x)  # sin x and cos x are there for any check that looks


def _save_bwd(res, g):
    _, _, x = res
    return (g * jnp.sin(2.0 * x),)


sin2_save.defvjp(_save_fwd, _save_bwd)


@jax.custom_vjp
def sin2_recompute(x):
    return jnp.sum(jnp.sin(x) ** 2)


def _recompute_fwd(x):
    return jnp.sum(jnp.sin(x) ** 2), x


def _recompute_bwd(x, g):
    return (g * jnp.sin(2.0 * x),)


sin2_recompute.defvjp(_recompute_fwd, _recompute_bwd)
