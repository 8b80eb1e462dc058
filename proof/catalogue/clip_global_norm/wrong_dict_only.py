"""Violates: must work for any pytree; bwd walks g.items(), so only a flat dict of arrays works."""


@partial(jax.custom_vjp, nondiff_argnums=(1,))
def clip_grad_global_norm(params, max_norm):
    return params


def _fwd(params, max_norm):
    return params, None


def _bwd(max_norm, _, g):
    norm = jnp.sqrt(sum(jnp.sum(v**2) for v in g.values()))
    factor = jnp.minimum(1.0, max_norm / norm)
    return ({k: v * factor for k, v in g.items()},)


clip_grad_global_norm.defvjp(_fwd, _bwd)
