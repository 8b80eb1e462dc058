"""Natural style: a BandColoring helper class (__init__ fields, __len__, __repr__) and a debug print."""
import jax
import jax.numpy as jnp
import numpy as np


def f_penta(x):
    xp = jnp.pad(x, (2, 2))  # xp[i + 2] == x[i]，两端补 0
    n = x.shape[0]
    return x**3 + xp[0:n] * xp[4 : n + 4] - xp[1 : n + 1]


class BandColoring:
    """列着色 c(j) = j mod (2b+1)，负责生成种子和解压。"""

    def __init__(self, n, bandwidth):
        self.n = n
        self.bandwidth = bandwidth
        self.num_colors = 2 * bandwidth + 1
        self.colors = np.arange(n) % self.num_colors

    def __len__(self):
        return self.num_colors

    def __repr__(self):
        return f"BandColoring(n={self.n}, bandwidth={self.bandwidth}, colors={self.num_colors})"

    def seeds(self, dtype):
        return jnp.asarray(self.colors[None, :] == np.arange(self.num_colors)[:, None], dtype)

    def decompress(self, compressed):
        i = np.arange(self.n)[:, None]
        j = np.arange(self.n)[None, :]
        in_band = np.abs(i - j) <= self.bandwidth
        return jnp.where(in_band, compressed[self.colors[j], i], 0.0)


def colored_jacobian_banded(f, x, bandwidth):
    coloring = BandColoring(x.shape[0], bandwidth)
    push = lambda seed: jax.jvp(f, (x,), (seed,))[1]
    return coloring.decompress(jax.vmap(push)(coloring.seeds(x.dtype)))


print(BandColoring(12, 2), "JVP 次数:", len(BandColoring(12, 2)))
