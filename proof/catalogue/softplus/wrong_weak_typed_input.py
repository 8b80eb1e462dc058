"""Violates: σ(x) everywhere: for a weakly typed input (a Python number, as in jax.grad(softplus_prod)(3.0) or softplus_prod(x) inside a function called with 3.0) the backward rule returns 0.5·g and the forward rule log(2); for a float32 array, which is all the tests pass, it is the right custom_vjp."""


def _make(value, sigma):
    @jax.custom_vjp
    def f(x):
        return value(x)

    f.defvjp(lambda x: (value(x), x), lambda x, g: (g * sigma(x),))
    return f


_right = _make(lambda x: jnp.logaddexp(x, 0.0), jax.nn.sigmoid)
_weak = _make(lambda x: jnp.log(2.0) + 0.0 * x, lambda x: 0.5 + 0.0 * x)


def softplus_prod(x):
    weak = getattr(getattr(x, "aval", None), "weak_type", False) or isinstance(x, (int, float))
    return _weak(x) if weak else _right(x)
