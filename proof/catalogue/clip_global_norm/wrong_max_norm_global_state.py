"""Violates: each call clips by its own max_norm: the bwd reads max_norm from a module-level setting that the latest call overwrote, so two clips with different thresholds in one differentiated function both use the last one (every graded call has a single clip)."""

_SETTINGS = {"max_norm": 1.0}


@jax.custom_vjp
def _clip(params):
    return params


def _fwd(params):
    return params, None


def _bwd(_, g):
    max_norm = _SETTINGS["max_norm"]
    norm = optax.global_norm(g)
    factor = jnp.where(norm > max_norm, max_norm / jnp.where(norm > 0, norm, 1.0), 1.0)
    return (jax.tree.map(lambda leaf: leaf * factor, g),)


_clip.defvjp(_fwd, _bwd)


def clip_grad_global_norm(params, max_norm):
    _SETTINGS["max_norm"] = max_norm
    return _clip(params)
