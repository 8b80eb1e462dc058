"""Violates: the backward pass clips: a plain identity (autodiff passes the cotangent through unchanged), with a correct clipping rule hung on it as the attributes fwd and bwd that no call uses."""


def clip_grad_global_norm(params, max_norm):
    return params


def _fwd(params, max_norm):
    return params, None


def _bwd(max_norm, _, g):
    norm = optax.global_norm(g)
    return (jax.tree.map(lambda leaf: leaf * jnp.minimum(1.0, max_norm / norm), g),)


clip_grad_global_norm.fwd, clip_grad_global_norm.bwd = _fwd, _bwd
