"""Natural style: a frozen dataclass for the band (validated in __post_init__) and a __main__ self-check."""
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np


@dataclass(frozen=True)
class Band:
    bandwidth: int

    def __post_init__(self):
        if self.bandwidth < 0:
            raise ValueError("半带宽不能为负")

    @property
    def num_colors(self):
        return 2 * self.bandwidth + 1


def f_penta(x):
    n = x.shape[0]
    idx = jnp.arange(n)

    def at(offset):
        # x_{i+offset}，越界时为 0
        ok = (idx + offset >= 0) & (idx + offset < n)
        return jnp.where(ok, x[jnp.clip(idx + offset, 0, n - 1)], 0.0)

    return x**3 + at(-2) * at(2) - at(-1)


def colored_jacobian_banded(f, x, bandwidth):
    band = Band(bandwidth)
    n = x.shape[0]
    color = jnp.arange(n) % band.num_colors
    seeds = jax.nn.one_hot(color, band.num_colors, dtype=x.dtype).T
    compressed = jax.vmap(lambda s: jax.jvp(f, (x,), (s,))[1])(seeds)
    rows, cols = jnp.meshgrid(jnp.arange(n), jnp.arange(n), indexing="ij")
    values = compressed[color[cols], rows]
    return jnp.where(jnp.abs(rows - cols) <= band.bandwidth, values, 0.0)


if __name__ == "__main__":
    x_demo = jnp.asarray(np.random.default_rng(0).normal(size=11), jnp.float32)
    dense = jax.jacfwd(f_penta)(x_demo)
    print("与 jacfwd 一致:", np.allclose(colored_jacobian_banded(f_penta, x_demo, 2), dense, atol=1e-5))
    print(Band(2))
