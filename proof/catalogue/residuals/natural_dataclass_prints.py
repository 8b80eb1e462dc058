"""Natural style: a frozen dataclass describing each strategy (with __post_init__) and debug prints."""
import dataclasses

import jax
import jax.numpy as jnp


@dataclasses.dataclass(frozen=True)
class Strategy:
    name: str
    keep_sin_cos: bool

    def __post_init__(self):
        if not self.name:
            raise ValueError("strategy needs a name")


SAVE = Strategy("save", keep_sin_cos=True)
RECOMPUTE = Strategy("recompute", keep_sin_cos=False)


def _value(x):
    return jnp.sum(jnp.sin(x) ** 2)


def _build(strategy):
    @jax.custom_vjp
    def f(x):
        return _value(x)

    def fwd(x):
        if strategy.keep_sin_cos:
            s, c = jnp.sin(x), jnp.cos(x)
            return jnp.sum(s**2), (s, c)
        return _value(x), (x,)

    def bwd(res, g):
        if strategy.keep_sin_cos:
            s, c = res
        else:
            (x,) = res
            s, c = jnp.sin(x), jnp.cos(x)  # 重算
        return (2 * g * s * c,)

    f.defvjp(fwd, bwd)
    return f


sin2_save = _build(SAVE)
sin2_recompute = _build(RECOMPUTE)
print(SAVE, RECOMPUTE)
print(type(sin2_save).__name__, dataclasses.asdict(RECOMPUTE))
print("shape", jax.grad(sin2_save)(jnp.ones(4)).shape)
