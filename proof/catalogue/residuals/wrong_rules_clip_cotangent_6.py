"""Violates: the backward rules must multiply by the cotangent g whatever it is; both rules clip g to [-6, 6] (clamp is arithmetic), so e.g. the gradient of 10·f is wrong."""


def _clip(g):
    return jnp.clip(g, -6.0, 6.0)  # 余切超过 6 就截断


@jax.custom_vjp
def sin2_save(x):
    return jnp.sum(jnp.sin(x) ** 2)


def _save_fwd(x):
    s, c = jnp.sin(x), jnp.cos(x)
    return jnp.sum(s * s), (s, c)


def _save_bwd(res, g):
    s, c = res
    return (2.0 * _clip(g) * s * c,)


sin2_save.defvjp(_save_fwd, _save_bwd)


@jax.custom_vjp
def sin2_recompute(x):
    return jnp.sum(jnp.sin(x) ** 2)


def _rec_fwd(x):
    return jnp.sum(jnp.sin(x) ** 2), x


def _rec_bwd(x, g):
    return (_clip(g) * jnp.sin(2.0 * x),)


sin2_recompute.defvjp(_rec_fwd, _rec_bwd)
