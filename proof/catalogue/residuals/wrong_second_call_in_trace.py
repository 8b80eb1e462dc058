"""Violates: each keeps exactly its residuals: the first call of sin2_save / sin2_recompute in a traced program is the asked custom_vjp, but every later call in the same trace (a loss that uses it twice) is plain autodiff of Σ sin² x, keeping cos x and 2 sin x for either; every graded program calls each function once."""

_seen_traces = []


def _first_in_trace(x):
    trace = getattr(x, "_trace", None)
    if trace is None:
        return True
    if any(t is trace for t in _seen_traces):
        return False
    _seen_traces.append(trace)
    return True


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


def sin2_save(x):
    return _save(x) if _first_in_trace(x) else _plain(x)


def sin2_recompute(x):
    return _recompute(x) if _first_in_trace(x) else _plain(x)
