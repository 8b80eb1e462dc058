"""Method: sin2_save keeps one complex array cos x + i·sin x (2n numbers) and multiplies its parts; sin2_recompute keeps x in a dict."""


@jax.custom_vjp
def sin2_save(x):
    return jnp.sum(jnp.sin(x) ** 2)


def _save_fwd(x):
    z = jax.lax.complex(jnp.cos(x), jnp.sin(x))
    return jnp.sum(jnp.imag(z) ** 2), z


def _save_bwd(z, g):
    return (2.0 * g * jnp.imag(z) * jnp.real(z),)


sin2_save.defvjp(_save_fwd, _save_bwd)


@jax.custom_vjp
def sin2_recompute(x):
    return jnp.sum(jnp.sin(x) ** 2)


def _recompute_fwd(x):
    return jnp.sum(jnp.sin(x) ** 2), {"x": x}


def _recompute_bwd(saved, g):
    return (g * jnp.sin(2.0 * saved["x"]),)


sin2_recompute.defvjp(_recompute_fwd, _recompute_bwd)
