"""Method: sin2_save keeps z = e^{ix} = cos x + i·sin x (one complex64 array, made by jnp.exp(1j·x)) and its backward pass takes g·Im(z²) = 2g·sin x·cos x (a complex product, no function); sin2_recompute keeps x and recomputes sin 2x."""


@jax.custom_vjp
def sin2_save(x):
    return jnp.sum(jnp.sin(x) ** 2)


def _save_fwd(x):
    z = jnp.exp(1j * x)  # 欧拉公式：实部 cos x，虚部 sin x
    return jnp.sum(jnp.imag(z) ** 2), z


def _save_bwd(z, g):
    return (g * jnp.imag(z * z),)  # Im(z²) = 2 sin x cos x


sin2_save.defvjp(_save_fwd, _save_bwd)


@jax.custom_vjp
def sin2_recompute(x):
    return jnp.sum(jnp.sin(x) ** 2)


def _recompute_fwd(x):
    return jnp.sum(jnp.sin(x) ** 2), x


def _recompute_bwd(x, g):
    return (g * jnp.sin(2.0 * x),)


sin2_recompute.defvjp(_recompute_fwd, _recompute_bwd)
