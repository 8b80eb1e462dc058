"""Correct: sin2_save saves sin x and cos x computed from one complex exponential; sin2_recompute's bwd uses jax.grad."""


def _plain(x):
    return jnp.sum(jnp.sin(x) ** 2)


@jax.custom_vjp
def sin2_save(x):
    return _plain(x)


def _save_fwd(x):
    z = jnp.exp(1j * x.astype(jnp.complex64))
    s, c = jnp.imag(z), jnp.real(z)
    return jnp.sum(s * s), (s, c)


def _save_bwd(res, g):
    s, c = res
    return (g * (s * c + c * s),)


sin2_save.defvjp(_save_fwd, _save_bwd)


@jax.custom_vjp
def sin2_recompute(x):
    return _plain(x)


def _recompute_fwd(x):
    return _plain(x), x


def _recompute_bwd(x, g):
    return (g * jax.grad(_plain)(x),)


sin2_recompute.defvjp(_recompute_fwd, _recompute_bwd)
