"""What a program may be, and what it does: the allow-policy every exported program meets before
anything runs it (`load`), a checked program (`Program`: its outputs, the numbers it holds, its
work as it runs) and a graded call's two programs (`Split`). The judge (kit/ch4judge.py) and a
student's kernel (kit/ch4check.py) load programs only through here.

So the grade is a function of the programs, and this module decides what a program may be:

- ``load`` deserializes it and checks it against an allow-policy before anything runs it:
  CPU only, one device, no effects, no safety check switched off, and every operation, in the
  program and in its serialized derivative, taken from ``ALLOWED_OPS`` (StableHLO's pure array
  operations, control flow and the functions around them) with ``custom_call`` only to
  ``ALLOWED_CUSTOM_CALLS`` (LAPACK and sharding annotations). A host callback cannot be
  exported at all, so no program can call back into the student's process.
- A verdict runs a program like a function (``p(x)``, ``split.vjp(args, g)``) and checks what
  comes out against references. A program that passes is a correct answer, however it was made.
"""

from __future__ import annotations

import functools

import ch4dataflow
import jax
import numpy as np

# ---------------------------------------------------------------------------------------------
# What a program may hold

_PURE_STABLEHLO = """
    abs add and atan2 batch_norm_grad batch_norm_inference batch_norm_training bitcast_convert
    broadcast broadcast_in_dim case cbrt ceil cholesky clamp compare complex composite concatenate
    constant convert convolution cosine count_leading_zeros divide dot dot_general
    dynamic_broadcast_in_dim dynamic_gather dynamic_iota dynamic_pad dynamic_reshape
    dynamic_slice dynamic_update_slice exponential exponential_minus_one fft floor gather
    get_dimension_size get_tuple_element if imag iota is_finite log log_plus_one logistic map
    maximum minimum multiply negate not optimization_barrier or pad popcnt power real
    real_dynamic_slice reduce reduce_precision reduce_window remainder reshape return reverse
    rng_bit_generator round_nearest_afz round_nearest_even rsqrt scatter select select_and_scatter
    shift_left shift_right_arithmetic shift_right_logical sign sine slice sort sqrt subtract tan
    tanh transpose triangular_solve tuple while xor
"""
_PURE_CHLO = """
    acos acosh asin asinh atan atanh bessel_i1e conj constant constant_like cosh digamma erf
    erf_inv erfc is_inf is_neg_inf is_pos_inf lgamma next_after polygamma sinh square tan top_k zeta
"""
# Pure array operations, control flow, and the functions that hold them. Left out: what talks to
# the outside (infeed, outfeed, send, recv, tokens), to other devices (collectives, replica and
# partition ids) or runs foreign code (custom_call, allowed only to the targets below).
ALLOWED_OPS = frozenset(
    {f"stablehlo.{name}" for name in _PURE_STABLEHLO.split()}
    | {f"chlo.{name}" for name in _PURE_CHLO.split()}
    | {"func.func", "func.return", "func.call", "builtin.module", "sdy.mesh", "stablehlo.custom_call"}
)
# custom_call targets CPU JAX emits for linear algebra (LAPACK through XLA's FFI) and sharding
# annotations (no-ops on one device). Callbacks into Python are not among them.
_LAPACK = "getrf geqrf orgqr ungqr potrf syevd heevd gesdd geev gees gehrd sytrd hetrd gtsv trsm"
ALLOWED_CUSTOM_CALLS = frozenset(
    {f"lapack_{t}{name}_ffi" for t in "sdcz" for name in _LAPACK.split()}
    | {"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "ApproxTopK"}
)
MAX_PROGRAM_BYTES = 8 * 2**20  # one serialized program (a few thousand operations at most)


class Refused(Exception):
    """A program outside the allow-policy: it is not run."""


Unmeasurable = ch4dataflow.Unmeasurable  # a program whose work cannot be counted


def _operations(exported) -> list[tuple[str, dict]]:
    """Every operation of the program's StableHLO module: (name, {attribute: text})."""
    from jax._src.interpreters import mlir
    from jax._src.lib.mlir import ir

    found = []
    with mlir.make_ir_context():

        def visit(op):
            # Only what the policy reads: reading every attribute would make the bindings
            # convert constants of every element type.
            wanted = ("call_target_name",) if op.name == "stablehlo.custom_call" else ()
            attributes = {name: str(op.attributes[name]) for name in wanted if name in op.attributes}
            values = [*op.results, *(a for region in op.regions for block in region.blocks for a in block.arguments)]
            odd = [str(v.type) for v in values if not _counted_type(v.type)]
            found.append((op.name, {**attributes, **({"odd type": odd[0]} if odd else {})}))
            return ir.WalkResult.ADVANCE

        ch4dataflow.parsed(exported).operation.walk(visit)
    return found


def _counted_type(kind) -> bool:
    """A value the measures can count: an array of a fixed shape (or a token, which holds nothing).
    JAX exports nothing else at fixed shapes; a tuple or a dimension known only at run time is
    what a hand-written lowering makes to hide numbers from the counts (attack round 11)."""
    from jax._src.lib.mlir import ir

    try:
        return ir.RankedTensorType(kind).has_static_shape
    except ValueError:
        return str(kind) == "!stablehlo.token"


def _check(exported) -> list[tuple[str, dict]]:
    if tuple(exported.platforms) != ("cpu",):
        raise Refused(f"程序是为 {exported.platforms} 导出的，评分只运行 CPU 程序")
    if exported.nr_devices != 1:
        raise Refused("程序要用多个设备")
    if exported.disabled_safety_checks:
        raise Refused("程序关掉了导出时的安全检查")
    if exported.ordered_effects or exported.unordered_effects:
        raise Refused("程序有副作用（effects）")
    operations = _operations(exported)
    for name, attributes in operations:
        if name not in ALLOWED_OPS:
            raise Refused(f"程序里有评分程序不运行的操作 {name}")
        if "odd type" in attributes:
            raise Refused(f"程序里有形状不固定的值或元组（{attributes['odd type'][:80]}）：评分只运行形状固定的数组")
        if name == "stablehlo.custom_call":
            target = attributes.get("call_target_name", "").strip('"')
            if target not in ALLOWED_CUSTOM_CALLS:
                raise Refused(f"程序调用了不允许的外部函数 {target[:80]!r}")
    return operations


class Program:
    """One exported function, checked. Call it like the function (``p(x)``); ``jax.grad``,
    ``jax.vjp`` work on it when it was exported with its derivative (``vjp=True``)."""

    def __init__(self, exported) -> None:
        self.exported = exported
        self.operations = _check(exported)
        level = exported
        while level.has_vjp():  # the serialized derivatives run too: the same policy
            level = level.vjp()
            _check(level)
        self._jitted = jax.jit(exported.call)

    def __call__(self, *args):
        """The program's outputs on `args`. A program with loops or branches and no serialized
        derivative runs as its counting version (``counted``), so that measuring its work later
        compiles nothing more. Arrays arrive as NumPy arrays: one compilation per program, whether
        a verdict passes what another program returned or values of its own."""
        args = _host(args, self.exported.in_avals)
        if not self.exported.has_vjp():
            _, counting, why = self._counting
            if counting is not None:
                return self.counted(*args)[0]
        return self._jitted(*args)

    @property
    def in_shapes(self) -> list[tuple[int, ...]]:
        return [tuple(a.shape) for a in self.exported.in_avals]

    @property
    def out_shapes(self) -> list[tuple[int, ...]]:
        return [tuple(a.shape) for a in self.exported.out_avals]

    @functools.cached_property
    def held(self) -> int:
        """The most numbers the program holds at once, run op by op in its written order
        (kit/ch4dataflow.py), whatever their dtype; a program that calls itself holds without bound."""
        try:
            return ch4dataflow.peak_live_elements(self.exported)
        except ValueError:
            return 2**62

    @functools.cached_property
    def _counting(self):
        """(work known without running, or None; the program that also returns its work, or None;
        why it cannot be measured, or "")."""
        try:
            known, counting = ch4dataflow.counting(self.exported)
        except ValueError as err:
            return None, None, str(err)
        if counting is not None:
            _check(counting)  # the rewritten program meets the same policy
        return known, (jax.jit(counting.call) if counting is not None else None), ""

    @property
    def known_work(self) -> float | None:
        """The work of any call, when the program holds no loop or branch (else None)."""
        known, _, why = self._counting
        if why:
            raise Unmeasurable(why)
        return known

    def counted(self, *args):
        """(outputs, work): the outputs of ``p(*args)`` and the work that call did: the numbers
        each executed operation handled, each loop body counted once per iteration it ran
        (kit/ch4dataflow.py). Raises Unmeasurable for a program whose work cannot be counted."""
        known, counting, why = self._counting
        if why:
            raise Unmeasurable(why)
        args = _host(args, self.exported.in_avals)
        if counting is None:
            return self._jitted(*args), known
        *outputs, work = counting(*args)
        return jax.tree_util.tree_unflatten(self.exported.out_tree, jax.tree_util.tree_leaves(outputs)), float(work)

    def jvp_products(self, arg: int) -> tuple[list[int], list[str]]:
        """How the program uses its input number `arg`, a Jacobian J a test function pushes
        tangents through (kit/ch4dataflow.py): (tangents per product, every other use)."""
        return ch4dataflow.jvp_products(self.exported, arg)


def _host(args, avals):
    """`args` with JAX arrays as NumPy arrays (tracers, under a transformation, stay as they are),
    each floating (complex) one in the precision the program takes: an answer computed in float64
    takes its residuals and cotangents in float64, and a verdict passes float32 ones."""
    leaves, tree = jax.tree_util.tree_flatten(args)
    if len(leaves) != len(avals):
        return args  # the call itself says what does not match

    def as_taken(a, aval):
        if isinstance(a, jax.Array) and not isinstance(a, jax.core.Tracer):
            a = np.asarray(a)
        given, taken = np.dtype(a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype), np.dtype(aval.dtype)
        if given == taken or given.kind not in "fc" or given.kind != taken.kind:  # floats to floats only
            return a
        return jax.numpy.asarray(a, taken) if isinstance(a, jax.core.Tracer) else np.asarray(a, taken)

    return jax.tree_util.tree_unflatten(tree, [as_taken(a, v) for a, v in zip(leaves, avals, strict=True)])


class Split:
    """A graded call as ``export_split`` exported it (kit/ch4check.py): ``fwd``, ``(*args) ->
    (value, residuals)``, and ``bwd``, ``(residuals, cotangent) -> cotangents of args``, made by
    ``jax.vjp`` in one trace. The value and the VJP a verdict grades come from these two programs,
    and so does every measure of the method."""

    def __init__(self, fwd: Program, bwd: Program) -> None:
        self.fwd, self.bwd = fwd, bwd

    def value(self, *args):
        return self.fwd(*args)[0]

    def vjp(self, args, cotangent):
        """(value, cotangents of args): the backward pass run on the residuals the forward pass kept."""
        value, residuals = self.fwd(*args)
        return value, self.bwd(residuals, cotangent)

    def counted_vjp(self, args, cotangent):
        """(value, cotangents, forward work, backward work) of one graded call (``Program.counted``)."""
        (value, residuals), forward = self.fwd.counted(*args)
        cotangents, backward = self.bwd.counted(residuals, cotangent)
        return value, cotangents, forward, backward

    def work(self, args, cotangent) -> tuple[float, float]:
        """(forward work, backward work) of the call on `args`, without its values: a program whose
        work is known without running it is not run (an unrolled solver of 400 steps takes minutes
        to compile)."""
        forward, backward = self.fwd.known_work, self.bwd.known_work
        if forward is not None and backward is not None:
            return forward, backward
        _, _, forward, backward = self.counted_vjp(args, cotangent)
        return forward, backward

    @functools.cached_property
    def residual_shapes(self) -> list[tuple[int, ...]]:
        """The shapes of what the forward pass keeps for the backward one (its residuals)."""
        outputs = self.fwd.exported.out_avals
        numbered = jax.tree_util.tree_unflatten(self.fwd.exported.out_tree, list(range(len(outputs))))
        if not (isinstance(numbered, tuple) and len(numbered) == 2):
            return []
        return [tuple(outputs[i].shape) for i in jax.tree_util.tree_leaves(numbered[1])]

    @property
    def kept(self) -> int:
        """How many numbers the residuals hold, whatever their dtype."""
        return sum(int(np.prod(shape)) for shape in self.residual_shapes)


_loaded: dict[bytes, Program] = {}  # one Program per distinct program, so one compilation per shape
_KEEP = 64  # programs kept: a student's kernel re-runs its tests with new programs all day


def load(data: bytes) -> Program:
    """A serialized program, deserialized and checked (raises Refused). Tests that export the
    same function share its Program and what it compiled: a Program is a function of its bytes."""
    if not isinstance(data, bytes) or len(data) > MAX_PROGRAM_BYTES:
        raise Refused("程序不是字节串，或者过大")
    program = _loaded.pop(data, None) or _deserialize(data)
    _loaded[data] = program  # the newest last; the oldest goes first
    while len(_loaded) > _KEEP:
        del _loaded[next(iter(_loaded))]
    return program


def _deserialize(data: bytes) -> Program:
    from jax import export

    try:
        exported = export.deserialize(bytearray(data))
    except Exception as err:  # noqa: BLE001 - whatever arrived, it is not a program
        raise Refused(f"程序无法反序列化（{type(err).__name__}）") from None
    return Program(exported)


# ---------------------------------------------------------------------------------------------
# The numbers a forward pass keeps, found by value (kit/ch4verdicts.py, check_sin2_rules)


def residual_numbers(leaves) -> list[np.ndarray]:
    """Every number the residuals hold, leaf by leaf, flat (a complex number is two)."""
    out = []
    for leaf in leaves:
        flat = np.asarray(leaf).reshape(-1)
        out.append(np.concatenate([flat.real, flat.imag]) if np.iscomplexobj(flat) else flat.astype(np.float64))
    return out


def with_numbers(leaves, numbers) -> list:
    """`leaves` with their numbers replaced by `numbers` (as `residual_numbers` lays them out)."""
    out = []
    for leaf, flat in zip(leaves, numbers, strict=True):
        leaf = np.asarray(leaf)
        if np.iscomplexobj(leaf):
            half = flat.size // 2
            flat = flat[:half] + 1j * flat[half:]
        out.append(np.asarray(flat).astype(leaf.dtype).reshape(leaf.shape))
    return out


def located_numbers(numbers, targets: np.ndarray):
    """Where each target is among the residuals' numbers, [(leaf, position)] per target, or None
    when the numbers are not exactly the targets (each once, nothing else)."""
    flat = np.concatenate(numbers) if numbers else np.zeros(0)
    if flat.size != targets.size:
        return None
    order, where = np.argsort(targets), np.argsort(flat)
    if not np.allclose(flat[where], targets[order], rtol=1e-5, atol=1e-6):
        return None
    starts = np.cumsum([0] + [part.size for part in numbers])
    located = [None] * targets.size
    for t, f in zip(order, where, strict=True):
        leaf = int(np.searchsorted(starts, f, side="right") - 1)
        located[t] = (leaf, int(f - starts[leaf]))
    return located
