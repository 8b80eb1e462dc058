"""Violates: must work under jit: bwd branches with a Python `if` on the traced norm."""


@partial(jax.custom_vjp, nondiff_argnums=(1,))
def clip_grad_global_norm(params, max_norm):
    return params


def _fwd(params, max_norm):
    return params, None


def _bwd(max_norm, _, g):
    norm = jnp.sqrt(sum(jnp.sum(leaf**2) for leaf in jax.tree.leaves(g)))
    if norm > max_norm:
        return (jax.tree.map(lambda leaf: leaf * (max_norm / norm), g),)
    return (g,)


clip_grad_global_norm.defvjp(_fwd, _bwd)
