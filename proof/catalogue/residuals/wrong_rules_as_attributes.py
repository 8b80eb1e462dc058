"""Violates: each keeps exactly what its method names: both are plain autodiff (which keeps cos x and 2·sin x), with correct rules hung on them as attributes fwd and bwd that no call uses."""


def sin2_save(x):
    return jnp.sum(jnp.sin(x) ** 2)


def sin2_recompute(x):
    return jnp.sum(jnp.sin(x) ** 2)


sin2_save.fwd = lambda x: (jnp.sum(jnp.sin(x) ** 2), (jnp.sin(x), jnp.cos(x)))
sin2_save.bwd = lambda res, g: (2.0 * g * res[0] * res[1],)
sin2_recompute.fwd = lambda x: (jnp.sum(jnp.sin(x) ** 2), x)
sin2_recompute.bwd = lambda x, g: (g * jnp.sin(2.0 * x),)
