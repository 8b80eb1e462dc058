"""Violates: the gradient must be sin 2x for every x; sin2_recompute's backward rule computes sin of the angle 2X clipped to [-8.5, 8.5], so the gradient is wrong wherever |x| > 4.25."""


def _f(x):
    return jnp.sum(jnp.sin(x) ** 2)


@jax.custom_vjp
def sin2_save(x):
    return _f(x)


def _save_fwd(x):
    s, c = jnp.sin(x), jnp.cos(x)
    return jnp.sum(s * s), (s, c)


def _save_bwd(res, g):
    s, c = res
    return (2.0 * g * s * c,)


sin2_save.defvjp(_save_fwd, _save_bwd)


@jax.custom_vjp
def sin2_recompute(x):
    return _f(x)


def _re_fwd(x):
    return _f(x), x


def _re_bwd(x, g):
    return (g * jnp.sin(jnp.clip(2.0 * x, -8.5, 8.5)),)


sin2_recompute.defvjp(_re_fwd, _re_bwd)
