"""Violates: clipping must use the global norm of the whole pytree; this clips every leaf by its own norm."""


@partial(jax.custom_vjp, nondiff_argnums=(1,))
def clip_grad_global_norm(params, max_norm):
    return params


def _fwd(params, max_norm):
    return params, None


def _clip_leaf(leaf, max_norm):
    return leaf * jnp.minimum(1.0, max_norm / jnp.sqrt(jnp.sum(leaf**2)))


def _bwd(max_norm, _, g):
    return (jax.tree.map(lambda leaf: _clip_leaf(leaf, max_norm), g),)


clip_grad_global_norm.defvjp(_fwd, _bwd)
