"""Violates: the clipped gradient: a correct clip whose result hides the cotangent's norm in its last digits (scaled by 1 + 1e-3·‖g‖), so that a message quoting a wrong value would spell a hidden input."""


@partial(jax.custom_vjp, nondiff_argnums=(1,))
def clip_grad_global_norm(params, max_norm):
    return params


def _fwd(params, max_norm):
    return params, None


def _bwd(max_norm, _, g):
    norm = jnp.sqrt(sum(jnp.sum(leaf**2) for leaf in jax.tree.leaves(g)))
    factor = jnp.minimum(1.0, max_norm / norm) * (1.0 + 1e-3 * norm)
    return (jax.tree.map(lambda leaf: leaf * factor, g),)


clip_grad_global_norm.defvjp(_fwd, _bwd)
