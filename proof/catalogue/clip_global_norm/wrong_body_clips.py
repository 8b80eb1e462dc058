"""Violates: the forward pass returns params unchanged when called plainly: the function body clips the parameters themselves, while the forward rule (what runs under jax.vjp) returns them unchanged."""


def _clipped(tree, max_norm):
    norm = jnp.sqrt(sum(jnp.sum(leaf**2) for leaf in jax.tree.leaves(tree)))
    factor = jnp.minimum(1.0, max_norm / norm)
    return jax.tree.map(lambda leaf: leaf * factor, tree)


@partial(jax.custom_vjp, nondiff_argnums=(1,))
def clip_grad_global_norm(params, max_norm):
    return _clipped(params, max_norm)


def _fwd(params, max_norm):
    return params, None


def _bwd(max_norm, _, g):
    return (_clipped(g, max_norm),)


clip_grad_global_norm.defvjp(_fwd, _bwd)
