"""Violates: each keeps exactly its residuals: when the input is batched (jax.vmap around jax.grad, per-example gradients) sin2_save keeps only x and recomputes sin and cos in its backward rule, and sin2_recompute keeps sin x and cos x; unbatched, each does what it says. The values are right either way."""


def _batched(x):
    t = x
    for _ in range(6):
        if type(t).__name__ == "BatchTracer":
            return True
        t = getattr(t, "primal", None) if hasattr(t, "primal") else getattr(t, "val", None)
        if t is None:
            return False
    return False


def _plain(x):
    return jnp.sum(jnp.sin(x) ** 2)


@jax.custom_vjp
def _keeps_sin_cos(x):
    return _plain(x)


_keeps_sin_cos.defvjp(lambda x: (_plain(x), (jnp.sin(x), jnp.cos(x))), lambda r, g: (2.0 * g * r[0] * r[1],))


@jax.custom_vjp
def _keeps_x(x):
    return _plain(x)


_keeps_x.defvjp(lambda x: (_plain(x), x), lambda x, g: (g * jnp.sin(2.0 * x),))


def sin2_save(x):
    return _keeps_x(x) if _batched(x) else _keeps_sin_cos(x)


def sin2_recompute(x):
    return _keeps_sin_cos(x) if _batched(x) else _keeps_x(x)
