"""Method: both rules as the statement asks (sin2_save keeps (sin x, cos x), sin2_recompute keeps x), each custom_vjp function then wrapped in jax.jit for speed, as library code usually is."""


@jax.custom_vjp
def _sin2_save(x):
    return jnp.sum(jnp.sin(x) ** 2)


def _save_fwd(x):
    s, c = jnp.sin(x), jnp.cos(x)
    return jnp.sum(s * s), (s, c)


def _save_bwd(res, g):
    s, c = res
    return (2.0 * g * s * c,)


_sin2_save.defvjp(_save_fwd, _save_bwd)
sin2_save = jax.jit(_sin2_save)


@jax.custom_vjp
def _sin2_recompute(x):
    return jnp.sum(jnp.sin(x) ** 2)


def _recompute_fwd(x):
    return jnp.sum(jnp.sin(x) ** 2), x


def _recompute_bwd(x, g):
    return (g * jnp.sin(2.0 * x),)


_sin2_recompute.defvjp(_recompute_fwd, _recompute_bwd)
sin2_recompute = jax.jit(_sin2_recompute)
