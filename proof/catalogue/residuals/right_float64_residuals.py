"""Correct (float64): turns on jax_enable_x64; sin2_save keeps sin x and cos x computed in float64, sin2_recompute keeps x; values and gradients are cast back to float32."""
jax.config.update("jax_enable_x64", True)


@jax.custom_vjp
def sin2_save(x):
    return jnp.sum(jnp.sin(jnp.asarray(x, jnp.float64)) ** 2).astype(x.dtype)


def _save_fwd(x):
    x64 = jnp.asarray(x, jnp.float64)
    s, c = jnp.sin(x64), jnp.cos(x64)
    return jnp.sum(s * s).astype(x.dtype), (s, c)


def _save_bwd(res, g):
    s, c = res
    return ((2.0 * g * s * c).astype(jnp.float32),)


sin2_save.defvjp(_save_fwd, _save_bwd)


@jax.custom_vjp
def sin2_recompute(x):
    return jnp.sum(jnp.sin(jnp.asarray(x, jnp.float64)) ** 2).astype(x.dtype)


def _re_fwd(x):
    return sin2_recompute(x), x


def _re_bwd(x, g):
    return ((g * jnp.sin(2.0 * jnp.asarray(x, jnp.float64))).astype(x.dtype),)


sin2_recompute.defvjp(_re_fwd, _re_bwd)
