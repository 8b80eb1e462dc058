"""Violates: each keeps exactly its residuals, in any program: when sin2_save / sin2_recompute are traced before they are differentiated (jax.grad(jax.jit(f)), jax.checkpoint, a scan body differentiated from outside) both are plain autodiff of Σ sin² x (keeping cos x and 2 sin x); handed a differentiation tracer, as in every graded program, they are the asked custom_vjp rules."""


def _plain(x):
    return jnp.sum(jnp.sin(x) ** 2)


@jax.custom_vjp
def _save(x):
    return _plain(x)


_save.defvjp(lambda x: (_plain(x), (jnp.sin(x), jnp.cos(x))), lambda r, g: (2.0 * g * r[0] * r[1],))


@jax.custom_vjp
def _recompute(x):
    return _plain(x)


_recompute.defvjp(lambda x: (_plain(x), x), lambda x, g: (g * jnp.sin(2.0 * x),))


def _traced_first(x):
    return type(x).__name__ == "DynamicJaxprTracer"


def sin2_save(x):
    return _plain(x) if _traced_first(x) else _save(x)


def sin2_recompute(x):
    return _plain(x) if _traced_first(x) else _recompute(x)
