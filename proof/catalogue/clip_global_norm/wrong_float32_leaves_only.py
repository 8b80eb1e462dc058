"""Violates: one factor for the whole pytree, from the whole cotangent's norm, for floating leaves of any dtype: only float32 leaves enter the norm and get scaled; bfloat16/float16/float64 leaves (mixed-precision parameters) pass unclipped and are left out of ‖g‖. The tests' parameters are all float32."""


@partial(jax.custom_vjp, nondiff_argnums=(1,))
def clip_grad_global_norm(params, max_norm):
    return params


def _fwd(params, max_norm):
    return params, None


def _bwd(max_norm, _, g):
    wide = [leaf for leaf in jax.tree.leaves(g) if leaf.dtype == jnp.float32]
    norm = jnp.sqrt(sum((jnp.sum(jnp.square(leaf)) for leaf in wide), jnp.float32(0.0)))
    scale = max_norm / jnp.maximum(norm, max_norm)
    return (jax.tree.map(lambda leaf: leaf * scale if leaf.dtype == jnp.float32 else leaf, g),)


clip_grad_global_norm.defvjp(_fwd, _bwd)
