"""Correct: flatten the cotangent pytree to one vector with ravel_pytree, clip it, unravel."""

from jax.flatten_util import ravel_pytree


@partial(jax.custom_vjp, nondiff_argnums=(1,))
def clip_grad_global_norm(params, max_norm):
    return params


def _fwd(params, max_norm):
    return params, None


def _bwd(max_norm, _, g):
    flat, unravel = ravel_pytree(g)
    norm = jnp.linalg.norm(flat)
    return (unravel(flat * max_norm / jnp.maximum(norm, max_norm)),)


clip_grad_global_norm.defvjp(_fwd, _bwd)
