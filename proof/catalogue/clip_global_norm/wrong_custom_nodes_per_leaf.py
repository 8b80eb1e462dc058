"""Violates: one factor for the whole pytree, for any pytree: the norm is global across dicts, lists, tuples and namedtuples (the containers the tests draw), but every subtree under any other pytree node (a registered dataclass, a flax/equinox-style module, an OrderedDict) is clipped on its own, as if it were a separate parameter group."""

from collections import OrderedDict


def _groups(tree):
    """Flatten dicts, lists and tuples by hand; anything else is one group."""
    if type(tree) is dict:
        return [leaf for key in sorted(tree) for leaf in _groups(tree[key])]
    if isinstance(tree, (list, tuple)) and not isinstance(tree, OrderedDict):
        return [leaf for child in tree for leaf in _groups(child)]
    return [tree]


def _sq(tree):
    return sum(jnp.sum(jnp.square(leaf)) for leaf in jax.tree.leaves(tree))


@partial(jax.custom_vjp, nondiff_argnums=(1,))
def clip_grad_global_norm(params, max_norm):
    return params


def _fwd(params, max_norm):
    return params, None


def _bwd(max_norm, _, g):
    groups = _groups(g)
    plain = [grp for grp in groups if isinstance(grp, jax.Array) or hasattr(grp, "shape")]
    norm = jnp.sqrt(sum((_sq(grp) for grp in plain), jnp.float32(0.0)))
    scale = max_norm / jnp.maximum(norm, max_norm)

    def clip(sub):
        if isinstance(sub, (dict, list, tuple)) and not isinstance(sub, OrderedDict):
            if type(sub) is dict:
                return {k: clip(v) for k, v in sub.items()}
            items = [clip(v) for v in sub]
            return type(sub)(*items) if hasattr(sub, "_fields") else type(sub)(items)
        if hasattr(sub, "shape"):
            return sub * scale.astype(sub.dtype)
        own = jnp.sqrt(_sq(sub))  # a node of another kind: clipped as a group of its own
        return jax.tree.map(lambda leaf: leaf * (max_norm / jnp.maximum(own, max_norm)).astype(leaf.dtype), sub)

    return (clip(g),)


clip_grad_global_norm.defvjp(_fwd, _bwd)
