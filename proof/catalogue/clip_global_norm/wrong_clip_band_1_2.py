"""Violates: min(1, max_norm/‖g‖)·g: the rule only clips once ‖g‖ exceeds 1.2·max_norm (a "tolerance band"), so a cotangent of norm between max_norm and 1.2·max_norm passes unclipped, up to 20% above max_norm."""


@partial(jax.custom_vjp, nondiff_argnums=(1,))
def clip_grad_global_norm(params, max_norm):
    return params


def _fwd(params, max_norm):
    return params, None


def _bwd(max_norm, _, g):
    norm = jnp.sqrt(sum(jnp.sum(jnp.square(leaf)) for leaf in jax.tree.leaves(g)))
    scale = jnp.where(norm > 1.2 * max_norm, max_norm / jnp.maximum(norm, 1e-30), 1.0)
    return (jax.tree.map(lambda leaf: leaf * scale.astype(leaf.dtype), g),)


clip_grad_global_norm.defvjp(_fwd, _bwd)
