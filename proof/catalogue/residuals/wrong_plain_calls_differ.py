"""Violates: both functions compute f(x) = Σ sin²xᵢ: the forward rules (what jax.vjp runs) are right, but the bodies, what a plain call sin2_save(x) / sin2_recompute(x) runs, return Σ sin xᵢ (the square forgotten)."""


@jax.custom_vjp
def sin2_save(x):
    return jnp.sum(jnp.sin(x))


def _save_fwd(x):
    s, c = jnp.sin(x), jnp.cos(x)
    return jnp.sum(s * s), (s, c)


def _save_bwd(res, g):
    s, c = res
    return (2.0 * g * s * c,)


sin2_save.defvjp(_save_fwd, _save_bwd)


@jax.custom_vjp
def sin2_recompute(x):
    return jnp.sum(jnp.sin(x))


def _recompute_fwd(x):
    return jnp.sum(jnp.sin(x) ** 2), x


def _recompute_bwd(x, g):
    return (g * jnp.sin(2.0 * x),)


sin2_recompute.defvjp(_recompute_fwd, _recompute_bwd)
