"""Violates: the backward pass clips: a plain identity (no rule of its own), so autodiff passes the cotangent through unclipped."""


def clip_grad_global_norm(params, max_norm):
    # The caller is expected to clip with optax afterwards.
    return jax.tree.map(lambda leaf: leaf, params)
