"""Natural style: itertools.starmap over the leaves and an if __name__ == "__main__" check against optax."""
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import optax


def _global_norm(tree):
    """全局 L2 范数：所有叶子的元素平方和再开方。"""
    leaves = jax.tree.leaves(tree)
    return jnp.sqrt(sum(itertools.starmap(jnp.vdot, zip(leaves, leaves))))


@jax.custom_vjp
def clip_grad_global_norm(params, max_norm):
    return params


def _fwd(params, max_norm):
    return params, max_norm


def _bwd(max_norm, cotangent):
    norm = _global_norm(cotangent)
    factor = jnp.where(norm > max_norm, max_norm / norm, 1.0)
    return jax.tree.map(lambda c: c * factor, cotangent), None


clip_grad_global_norm.defvjp(_fwd, _bwd)


if __name__ == "__main__":
    params = {"a": jnp.ones((2, 3)), "b": [jnp.arange(3.0), jnp.float32(2.0)]}
    ct = jax.tree.map(lambda p: 5.0 * jnp.ones_like(p), params)
    _, pull = jax.vjp(lambda p: clip_grad_global_norm(p, 1.5), params)
    (mine,) = pull(ct)
    ref, _ = optax.clip_by_global_norm(1.5).update(ct, optax.EmptyState())
    for x, y in zip(jax.tree.leaves(mine), jax.tree.leaves(ref)):
        print(np.allclose(x, y, rtol=1e-6), end=" ")
    print()
