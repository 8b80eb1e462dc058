"""Violates: one factor for the whole pytree from the whole cotangent's norm; this rule leaves every leaf of rank 3 or more (conv kernels) out of the norm and passes its cotangent through unscaled: right on every tree whose leaves have at most 2 dimensions."""
from functools import partial


@partial(jax.custom_vjp, nondiff_argnums=(1,))
def clip_grad_global_norm(params, max_norm):
    return params


def _fwd(params, max_norm):
    return params, None


def _bwd(max_norm, _, g):
    leaves, tree = jax.tree.flatten(g)
    counted = [leaf for leaf in leaves if leaf.ndim < 3]
    norm = jnp.sqrt(sum(jnp.sum(leaf * leaf) for leaf in counted)) if counted else jnp.zeros(())
    scale = jnp.minimum(1.0, max_norm / jnp.where(norm > 0, norm, 1.0))
    return (jax.tree.unflatten(tree, [leaf * scale if leaf.ndim < 3 else leaf for leaf in leaves]),)


clip_grad_global_norm.defvjp(_fwd, _bwd)
