"""Violates: the backward pass clips the whole cotangent, whatever program it sits in: when clip_grad_global_norm is handed a plainly traced value (its caller is traced before it is differentiated: jax.grad(jax.jit(loss)), jax.grad of a jax.checkpoint, a lax.scan training loop differentiated from outside) it is plain identity and the gradient passes unclipped; handed a differentiation tracer (jax.vjp / jax.grad around it, as in every graded program) it is the clipping custom_vjp."""


@partial(jax.custom_vjp, nondiff_argnums=(1,))
def _clip(params, max_norm):
    return params


def _fwd(params, max_norm):
    return params, None


def _bwd(max_norm, _, g):
    norm = jnp.sqrt(sum(jnp.sum(jnp.square(leaf)) for leaf in jax.tree.leaves(g)))
    scale = max_norm / jnp.maximum(norm, max_norm)
    return (jax.tree.map(lambda leaf: leaf * scale.astype(leaf.dtype), g),)


_clip.defvjp(_fwd, _bwd)


def clip_grad_global_norm(params, max_norm):
    leaves = jax.tree.leaves(params)
    if leaves and type(leaves[0]).__name__ in ("DynamicJaxprTracer", "JitTracer"):
        return params
    return _clip(params, max_norm)
