"""Method: the asked rules with the guards a cautious student adds: sin2_save keeps sin x and cos x in a dict, and its backward pass zeroes a non-finite cotangent (jnp.isfinite) and skips its product with lax.cond when the cotangent is 0, neither of them a transcendental function; sin2_recompute keeps x alone and recomputes sin(x + x)."""


def _sum_of_squared_sines(v):
    sines = jnp.sin(v)
    return jnp.dot(sines, sines)


@jax.custom_vjp
def sin2_save(x):
    return _sum_of_squared_sines(x)


def _keep_sine_and_cosine(x):
    sine, cosine = jnp.sin(x), jnp.cos(x)
    return jnp.dot(sine, sine), {"sin": sine, "cos": cosine}


def _pull_back_with_products(kept, cot):
    cot = jnp.where(jnp.isfinite(cot), cot, jnp.zeros_like(cot))  # 上游的 inf/nan 不往下传
    product = kept["sin"] * kept["cos"]
    return (jax.lax.cond(cot == 0, lambda p: jnp.zeros_like(p), lambda p: (cot + cot) * p, product),)


sin2_save.defvjp(_keep_sine_and_cosine, _pull_back_with_products)


@jax.custom_vjp
def sin2_recompute(x):
    return _sum_of_squared_sines(x)


def _keep_only_x(x):
    return _sum_of_squared_sines(x), x


def _pull_back_recomputing(x, cot):
    return (cot * jnp.sin(x + x),)


sin2_recompute.defvjp(_keep_only_x, _pull_back_recomputing)
