"""Violates: each keeps exactly what its method names: plain autodiff keeps what its linearization needs (cos x and 2·sin x; for sin2_recompute the same), not sin x and cos x, not x alone."""


def sin2_save(x):
    s, c = jnp.sin(x), jnp.cos(x)
    return jnp.sum(s * s) + 0.0 * jnp.sum(c)


def sin2_recompute(x):
    return jnp.sum(jnp.sin(x) ** 2)
