"""Violates: sin2_recompute keeps exactly x at every length: below length 37 (under every length a test used to take) it keeps sin 2x instead, the other method; the tests now take lengths 5 and 1–36 too."""


@jax.custom_vjp
def sin2_save(x):
    return jnp.sum(jnp.sin(x) ** 2)


def _save_fwd(x):
    s, c = jnp.sin(x), jnp.cos(x)
    return jnp.sum(s**2), (s, c)


def _save_bwd(saved, g):
    s, c = saved
    return (2.0 * g * s * c,)


sin2_save.defvjp(_save_fwd, _save_bwd)


@jax.custom_vjp
def sin2_recompute(x):
    return jnp.sum(jnp.sin(x) ** 2)


def _recompute_fwd(x):
    kept = jnp.sin(2.0 * x) if x.shape[0] < 37 else x
    return jnp.sum(jnp.sin(x) ** 2), kept


def _recompute_bwd(kept, g):
    return (g * (kept if kept.shape[0] < 37 else jnp.sin(2.0 * kept)),)


sin2_recompute.defvjp(_recompute_fwd, _recompute_bwd)
