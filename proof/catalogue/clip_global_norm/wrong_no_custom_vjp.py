"""Violates: no custom_vjp: a plain identity, leaving the clipping to 'someone outside' (gradients pass unclipped)."""


def clip_grad_global_norm(params, max_norm):
    # The caller is expected to clip with optax afterwards.
    return jax.tree.map(lambda leaf: leaf, params)
