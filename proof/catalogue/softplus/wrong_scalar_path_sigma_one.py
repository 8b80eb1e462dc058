"""Violates: gradient σ(x) on the whole interval: unless softplus_prod itself receives a batch tracer (jax.vmap(softplus_prod)), e.g. jax.grad(softplus_prod)(8.0) or under lax.map, its backward rule takes σ(x) = 1 for x > 6 (off by about e^(−x): 2.5e-3 at x = 6, beyond the tolerance up to x ≈ 13); on a batch tracer it uses σ(x) itself."""

from jax._src.interpreters.batching import BatchTracer


def _make(sigma):
    @jax.custom_vjp
    def f(x):
        return jnp.logaddexp(x, 0.0)

    f.defvjp(lambda x: (jnp.logaddexp(x, 0.0), x), lambda x, g: (g * sigma(x),))
    return f


_batched = _make(jax.nn.sigmoid)
_scalar = _make(lambda x: jnp.where(x > 6.0, 1.0, jax.nn.sigmoid(x)))


def softplus_prod(x):
    return _batched(x) if isinstance(x, BatchTracer) else _scalar(x)
