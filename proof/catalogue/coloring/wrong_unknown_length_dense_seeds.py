"""Violates: exactly 2b+1 JVPs (colouring); this one pushes all n one-hot seeds (jacfwd's n JVPs), passed through a custom primitive that gives the seed matrix an unknown number of columns (tensor<nx?xf32>, which the product count reads as -2**63 tangents, like a function evaluation), plus one coloured product of 2b+1 seeds that it multiplies by 0; it then compresses the dense Jacobian by the colouring itself and decompresses, so its output is the colouring's everywhere (aliasing included)."""

import numpy as np
from jax._src.lib.mlir import ir as _ir
from jax.extend.core import Primitive as _Primitive
from jax.extend.mlir.dialects import stablehlo as _hlo
from jax.interpreters import mlir as _mlir

_unknown = _Primitive("unknown_columns")  # identity on a matrix; its lowering forgets the column count
_unknown.def_abstract_eval(lambda x: x)


def _unknown_lowering(ctx, x):
    shape = ctx.avals_in[0].shape
    kind = _mlir.dtype_to_ir_type(ctx.avals_in[0].dtype)
    dims = _hlo.constant(_ir.DenseElementsAttr.get(np.array(shape, np.int64)))
    dynamic = _ir.RankedTensorType.get([shape[0], _ir.ShapedType.get_dynamic_size()], kind)
    return [_hlo.DynamicBroadcastInDimOp(dynamic, x, dims, _ir.DenseI64ArrayAttr.get([0, 1])).result]


_mlir.register_lowering(_unknown, _unknown_lowering)
_unknown.def_impl(lambda x: x)


def f_penta(x):
    padded = jnp.pad(x, 2)
    return x**3 + padded[:-4] * padded[4:] - padded[1:-3]


def colored_jacobian_banded(f, x, bandwidth):
    n = x.shape[0]
    p = 2 * bandwidth + 1
    color = jnp.arange(n) % p
    coloured = jax.vmap(lambda s: jax.jvp(f, (x,), (s,))[1], in_axes=1, out_axes=1)(
        jax.nn.one_hot(color, p, dtype=x.dtype)
    )
    seeds = _unknown.bind(jnp.eye(n, dtype=x.dtype))  # (n, n): column j seeds column j
    with jax.disable_jit():  # inner jitted helpers (jnp.pad) traced inline: no typed func.call in the way
        dense = jax.vmap(lambda s: jax.jvp(f, (x,), (s,))[1], in_axes=1, out_axes=1)(seeds)
    seed_matrix = jax.nn.one_hot(color, p, dtype=x.dtype)
    compressed = dense @ seed_matrix + 0.0 * coloured  # what the 2b+1 coloured JVPs would give, from the n dense ones
    rows, cols = jnp.arange(n)[:, None], jnp.arange(n)[None, :]
    return jnp.where(jnp.abs(rows - cols) <= bandwidth, compressed[:, color][rows * 0 + rows, cols], 0.0)
