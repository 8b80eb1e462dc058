"""Correct: no nondiff_argnums: max_norm is an ordinary argument kept as a residual, bwd returns None for it."""


@jax.custom_vjp
def clip_grad_global_norm(params, max_norm):
    return params


def _fwd(params, max_norm):
    return params, max_norm


def _bwd(max_norm, g):
    sq = jax.tree.reduce(lambda acc, leaf: acc + jnp.sum(jnp.square(leaf)), g, 0.0)
    factor = jnp.minimum(1.0, max_norm * jax.lax.rsqrt(sq))
    return jax.tree.map(lambda leaf: leaf * factor, g), None


clip_grad_global_norm.defvjp(_fwd, _bwd)
