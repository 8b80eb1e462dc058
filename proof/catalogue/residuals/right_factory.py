"""Correct: one factory builds both custom_vjp functions from a residual policy (dict residuals vs bare x)."""


def _make_sin2(keep_sin_cos):
    @jax.custom_vjp
    def f(x):
        return jnp.sum(jnp.square(jnp.sin(x)))

    def fwd(x):
        s = jnp.sin(x)
        if keep_sin_cos:
            return jnp.sum(jnp.square(s)), {"sin": s, "cos": jnp.cos(x)}
        return jnp.sum(jnp.square(s)), x

    def bwd(res, g):
        if keep_sin_cos:
            return (g * 2.0 * res["sin"] * res["cos"],)
        return (g * 2.0 * jnp.sin(res) * jnp.cos(res),)

    f.defvjp(fwd, bwd)
    return f


sin2_save = _make_sin2(keep_sin_cos=True)
sin2_recompute = _make_sin2(keep_sin_cos=False)
