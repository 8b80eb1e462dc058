"""Style: JAX's strict rank promotion switched on (jax_numpy_rank_promotion = "raise", to catch silent broadcasting), the squared norm gathered with tree_reduce and the factor applied leaf by leaf with an explicit reshape to each leaf's rank."""
jax.config.update("jax_numpy_rank_promotion", "raise")  # 不许悄悄广播


def _squared_norm(tree):
    return jax.tree_util.tree_reduce(lambda total, leaf: total + jnp.sum(leaf * leaf), tree, jnp.float32(0.0))


@partial(jax.custom_vjp, nondiff_argnums=(1,))
def clip_grad_global_norm(params, max_norm):
    return params


def _identity_forward(params, max_norm):
    return params, None


def _clip_cotangent(max_norm, _, cotangent):
    norm = jnp.sqrt(_squared_norm(cotangent))
    factor = jnp.minimum(1.0, max_norm / jnp.maximum(norm, 1e-30))
    return (jax.tree.map(lambda leaf: leaf * jnp.reshape(factor, (1,) * leaf.ndim).astype(leaf.dtype), cotangent),)


clip_grad_global_norm.defvjp(_identity_forward, _clip_cotangent)
