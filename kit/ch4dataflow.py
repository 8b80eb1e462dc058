"""What an exported program does with its inputs, read from its StableHLO data flow.

The coloring exercise must recover a banded Jacobian from exactly 2b+1 JVPs. Its counting tests
hand the answer a test function whose Jacobian is an input of the program, J, that only the
verdict fills (``ch4check.with_jacobian``: its JVP rule is ``J @ t``). So a program learns J only
through the operations that read it, and `jvp_products` lists them: a product with tangents
counts its tangents; any other read (J returned, masked, read inside a loop or a branch) is
named. A count read from values the program cannot see cannot be forged by writing structure.
"""

from __future__ import annotations

import re

import numpy as np


def parsed(exported):
    """The program's StableHLO module, parsed (use it inside ``mlir.make_ir_context()``)."""
    from jax._src.lib.mlir import ir

    return ir.Module.parse(exported.mlir_module())


def jvp_products(exported, arg: int) -> tuple[list[int], list[str]]:
    """How the program uses its input number `arg`: a matrix J that a test function's JVP
    rule multiplies its tangent by (``J @ t``, J's columns contracted). (How many tangents
    each such product pushes, in program order; every other use, named.) The verdict draws
    J, so a program learns J only through its uses: one whose output is J and whose only
    use of J is one product with 2b+1 tangents did recover the Jacobian from 2b+1 JVPs,
    however it was made. A use inside a loop or a branch counts as another use (how often it
    runs is not in the program's structure); J converted to another real floating precision
    (bfloat16 too) is J; made complex it is another use (complex-step differences are no JVPs)."""
    from jax._src.interpreters import mlir

    kept = list(exported.module_kept_var_idx)
    if kept != sorted(set(kept)):  # JAX passes the kept inputs in index order: a program must say so
        return [], ["inputs kept out of order"]
    if arg not in kept:
        return [], []  # never read
    products, others = [], []
    with mlir.make_ir_context():
        module, functions = parsed(exported), {}  # the module holds the operations: keep it
        for op in module.body.operations:
            if op.operation.name == "func.func":
                functions[str(op.attributes["sym_name"]).strip('"')] = op
        arguments = functions["main"].regions[0].blocks[0].arguments
        if len(arguments) != len(kept):
            return [], ["inputs kept that the program does not take"]
        todo, seen = [arguments[kept.index(arg)]], 0
        while todo and seen < 10_000:  # a hand-made program may call itself
            value, seen = todo.pop(0), seen + 1
            for use in value.uses:
                owner = use.owner.operation
                where = owner.parent.name if owner.parent is not None else "?"
                if where != "func.func":
                    others.append(f"{owner.name} in {where}")
                elif owner.name in _CALLS:
                    callee = functions.get(_callee(owner))
                    if callee is None or not len(callee.regions[0].blocks):
                        others.append(f"{owner.name} to a function without a body here")
                    else:
                        todo.append(callee.regions[0].blocks[0].arguments[use.operand_number])
                elif owner.name == "stablehlo.convert" and re.search(r"x(bf|f)\d+>$", str(owner.results[0].type)):
                    todo.append(owner.results[0])  # J in another real precision: its uses are J's
                elif (pushed := _tangents_pushed(owner, use.operand_number)) is None:
                    others.append(owner.name)
                else:
                    products.append(pushed)
        if todo:
            others.append("calls nested too deep")
    return products, others


def _tangents_pushed(op, position: int) -> int | None:
    """The tangent count of ``dot_general(J, T)`` (or ``(T, J)``) contracting J's columns alone,
    J at operand `position`: the elements of T not contracted. None for any other use of J."""
    if op.name != "stablehlo.dot_general" or op.operands[0] == op.operands[1]:
        return None
    numbers = str(op.attributes["dot_dimension_numbers"])

    def dims(key: str) -> list[int]:
        found = re.search(rf"{key} = \[([0-9, ]*)\]", numbers)
        return [int(d) for d in found.group(1).split(",") if d.strip()] if found else []

    mine, theirs = ("lhs", "rhs") if position == 0 else ("rhs", "lhs")
    if dims(f"{mine}_batching_dimensions") or dims(f"{mine}_contracting_dimensions") != [1]:
        return None
    from jax._src.lib.mlir import ir

    shape = list(ir.RankedTensorType(op.operands[1 - position].type).shape)
    contracted = dims(f"{theirs}_contracting_dimensions")
    return int(np.prod([size for d, size in enumerate(shape) if d not in contracted]))


def _elements(value) -> int:
    """How many numbers a value holds (a token or a tuple holds none of its own)."""
    from jax._src.lib.mlir import ir

    try:
        shaped = ir.RankedTensorType(value.type)
    except ValueError:
        return 0
    return int(np.prod(shaped.shape, dtype=np.int64)) if shaped.shape else 1


def _functions(module) -> dict:
    return {
        str(op.attributes["sym_name"]).strip('"'): op.operation
        for op in module.body.operations
        if op.operation.name == "func.func"
    }


# Operations that run another function of the module: a call, and a composite, which runs its
# decomposition (attack round 10 hid a backward pass inside one, where no count looked)
_CALLS = {"func.call": "callee", "stablehlo.composite": "decomposition"}


def _callee(op) -> str:
    return str(op.attributes[_CALLS[op.name]]).lstrip("@").strip('"')


def peak_live_elements(exported) -> int:
    """The most numbers a program holds at once when it runs op by op in its written order, each
    value freed after its last use, whatever its dtype (a float64 answer holds as many numbers as a
    float32 one). Every value is counted once, where it is made: what a loop body or a called
    function receives as arguments is its caller's value, already counted there, so a value passed
    a thousand times costs nothing extra and hides nothing either; what a body or a callee makes
    counts once, at its own peak, on top of what is live around it. A backward pass that keeps a
    solver's trajectory holds it, however it was written (a stacked array, a loop's carry, a hundred
    values of an unrolled Python loop); one that recomputes what it needs does not. XLA's memory
    analysis is no measure of this (a few fixed kilobytes for an unrolled program, whatever it
    keeps). Raises ValueError for a program that calls itself."""
    from jax._src.interpreters import mlir

    with mlir.make_ir_context():
        module = parsed(exported)
        functions = _functions(module)
        peaks: dict[str, int] = {}
        calling: set[str] = set()

        def called(name: str) -> int:
            if name in calling:
                raise ValueError("the program calls itself")
            function = functions.get(name)
            if function is None or not len(function.regions[0].blocks):
                return 0
            if name not in peaks:
                calling.add(name)
                peaks[name] = block_peak(function.regions[0].blocks[0])
                calling.discard(name)
            return peaks[name]

        def block_peak(block) -> int:
            """The block's own peak: what its operations make, its arguments not counted."""
            ops = [op.operation for op in block.operations]
            last: dict = {}
            for i, op in enumerate(ops):
                found: list = []
                _reads(op, found)
                for value in found:
                    last[value] = i
            live: dict = {}
            peak = 0
            for i, op in enumerate(ops):
                nested = [block_peak(b) for region in op.regions for b in region.blocks]
                if op.name in _CALLS:
                    nested.append(called(_callee(op)))
                live.update({result: _elements(result) for result in op.results})
                peak = max(peak, sum(live.values()) + max(nested, default=0))
                for value in [v for v in live if last.get(v, -1) <= i]:
                    del live[value]
            return peak

        main = functions["main"].regions[0].blocks[0]
        return sum(_elements(a) for a in main.arguments) + block_peak(main)


def _reads(op, found: list) -> None:
    """Every value `op` reads, its nested regions included."""
    found.extend(op.operands)
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                _reads(inner.operation, found)


# ---------------------------------------------------------------------------------------------
# Work: what a program computes, counted as it runs.
#
# A gradient by reverse mode costs a small multiple of the function (4.1's cheap-gradient
# principle); one forward-mode pass or one finite difference per input entry costs the entries
# times the function, even spread over `vmap` or `lax.map`. So the work of a program is the sum,
# over the operations it executes, of the numbers each one handles (the larger of what it reads
# and what it makes; a matrix product its multiply-adds), each loop body counted once per
# iteration it runs. A loop's trip count may depend on the inputs, so it is known only by
# running: `counting` rewrites the program so that it also returns this sum, threading a counter
# through every loop and branch. XLA's cost analysis and any reading of the text count a loop
# body once.

_CONTROL = ("stablehlo.while", "stablehlo.if", "stablehlo.case")


class Unmeasurable(ValueError):
    """A program whose work cannot be counted (`counting`)."""


MAX_INLINED_OPERATIONS = 400_000  # a program this large once its calls are copied in is not measured


def _cost(op) -> int:
    """The numbers one execution of `op` handles (0 for constants and terminators)."""
    from jax._src.lib.mlir import ir

    if op.name in ("func.return", "stablehlo.return", "stablehlo.constant"):
        return 0
    if op.name in ("stablehlo.dot_general", "stablehlo.dot"):
        shape = ir.RankedTensorType(op.operands[0].type).shape
        contracted = [len(shape) - 1]  # dot, the old product: lhs's last dimension
        if op.name == "stablehlo.dot_general":
            numbers = str(op.attributes["dot_dimension_numbers"])
            found = re.search(r"lhs_contracting_dimensions = \[([0-9, ]*)\]", numbers)
            contracted = [int(d) for d in found.group(1).split(",") if d.strip()] if found else []
        return _elements(op.results[0]) * int(np.prod([shape[d] for d in contracted], dtype=np.int64))
    if op.name in ("stablehlo.triangular_solve", "stablehlo.cholesky"):  # XLA's own, for dtypes LAPACK lacks
        return _elements(op.results[0]) * ir.RankedTensorType(op.operands[0].type).shape[-1]
    if op.name == "stablehlo.convolution":  # a product in disguise: each output number sums one kernel window
        kernel = ir.RankedTensorType(op.operands[1].type).shape
        spec = re.search(r"\]x\[([^\]]*)\]", str(op))  # the kernel's dimensions: "[0, i, o]"
        outputs = kernel[[d.strip() for d in spec.group(1).split(",")].index("o")] if spec else 1
        return _elements(op.results[0]) * int(np.prod(kernel, dtype=np.int64)) // max(1, outputs)
    if op.name == "stablehlo.custom_call":  # LAPACK on CPU (LU, triangular solves): cubic, not linear
        shapes = [ir.RankedTensorType(v.type).shape for v in op.operands if _elements(v)]
        side = max((min(s[-2:]) for s in shapes if len(s) >= 2), default=1)  # n of the n×n factorised
        return sum(_elements(v) for v in op.operands) * side
    # A region runs per element (per update, per window element): its work is its operations' own,
    # each at least 1, so arrays it builds from its scalars count whole (attack round 14).
    inner = max(1, sum(max(1, _cost(o)) for region in op.regions for block in region.blocks for o in block.operations))
    if op.name in ("stablehlo.dynamic_update_slice", "stablehlo.scatter"):  # in place: the update, not the array;
        return sum(_elements(v) for v in op.operands[1:]) * max(1, inner - 1)  # its region (not its return) per update
    if op.name in ("stablehlo.slice", "stablehlo.dynamic_slice", "stablehlo.gather", "stablehlo.get_tuple_element"):
        return _elements(op.results[0])  # reads only what it takes
    window = str(op.attributes["window_dimensions"]) if "window_dimensions" in op.attributes else ""  # array<i64: 1, 8>
    size = int(np.prod([int(d) for d in re.findall(r"\d+", window.partition(":")[2])], dtype=np.int64))
    handled = max([_elements(v) for v in (*op.operands, *op.results)], default=0)
    return handled * inner * size  # reduce, sort, map: their small region runs per element (per window element)


def _inline_calls(module) -> None:
    """Copy every called function's body into `main` at its call sites, so that a counter can be
    threaded through it (a function called from many places counts each time it runs)."""
    from jax._src.lib.mlir import ir

    functions = _functions(module)
    main, copied = functions["main"], 0
    while True:
        calls: list = []

        def visit(op, calls=calls):
            if op.name in _CALLS:
                calls.append(op)
            return ir.WalkResult.ADVANCE

        main.walk(visit)
        if not calls:
            break
        for call in calls:
            callee = functions.get(_callee(call))
            if callee is None or not len(callee.regions[0].blocks):
                raise Unmeasurable("a call to a function without a body here")
            copy = callee.clone(ir.InsertionPoint(main))
            block = copy.regions[0].blocks[0]
            for argument, value in zip(block.arguments, call.operands, strict=True):
                argument.replace_all_uses_with(value)
            ops = [op.operation for op in block.operations]
            for op in ops[:-1]:
                op.move_before(call)
            for result, value in zip(call.results, ops[-1].operands, strict=True):
                result.replace_all_uses_with(value)
            call.erase()
            copy.erase()
            copied += len(ops)
            if copied > MAX_INLINED_OPERATIONS:
                raise Unmeasurable("the program is too large to measure once its calls are copied in")
    for name, function in functions.items():
        if name != "main":
            function.erase()


def _control_only_under_control(main) -> None:
    """A counter is threaded through loops and branches only: one inside the body of any other
    operation with a region (a reduction, a sort's comparator, a scatter's update, a map) would
    run an unknown number of times uncounted, so such a program is not measured."""
    from jax._src.lib.mlir import ir

    inside: list[str] = []  # an exception raised in a walk's callback comes out as a RuntimeError

    def visit(op):
        outer = op.parent if op.name in _CONTROL else None
        while outer is not None and outer.name != "func.func":
            if outer.name not in _CONTROL:
                inside.append(outer.name)
                return ir.WalkResult.INTERRUPT
            outer = outer.parent
        return ir.WalkResult.ADVANCE

    main.walk(visit)
    if inside:
        raise Unmeasurable(f"a loop or a branch inside {inside[0]}")


def _scalar():
    from jax._src.lib.mlir import ir

    return ir.RankedTensorType.get([], ir.F32Type.get())


def _constant(number: float, before):
    from jax._src.lib.mlir import ir

    value = ir.DenseElementsAttr.get_splat(_scalar(), ir.FloatAttr.get(ir.F32Type.get(), float(number)))
    return ir.Operation.create(
        "stablehlo.constant", results=[_scalar()], attributes={"value": value}, ip=ir.InsertionPoint(before)
    ).result


def _add(a, b, before):
    from jax._src.lib.mlir import ir

    return ir.Operation.create(
        "stablehlo.add", results=[_scalar()], operands=[a, b], ip=ir.InsertionPoint(before)
    ).result


def _append_to_terminator(block, value) -> None:
    from jax._src.lib.mlir import ir

    terminator = list(block.operations)[-1].operation
    ir.Operation.create(terminator.name, operands=[*terminator.operands, value], ip=ir.InsertionPoint(terminator))
    terminator.erase()


def _with_counter(op, counter_in):
    """`op` rebuilt with one more result, a scalar count (and one more operand, `counter_in`, for a
    loop's carry); its regions move over unchanged."""
    from jax._src.lib.mlir import ir

    operands = [*op.operands, *([counter_in] if counter_in is not None else [])]
    rebuilt = ir.Operation.create(
        op.name,
        results=[*(r.type for r in op.results), _scalar()],
        operands=operands,
        attributes={a.name: a.attr for a in op.attributes},
        regions=len(op.regions),
        ip=ir.InsertionPoint(op),
    )
    for old, new in zip(op.regions, rebuilt.regions, strict=True):
        for block in list(old.blocks):
            block.append_to(new)
    for old, new in zip(op.results, rebuilt.results, strict=False):
        old.replace_all_uses_with(new)
    op.erase()
    return rebuilt


def _count_block(block) -> tuple:
    """Thread counters through `block` (in place). (the value that holds one execution's work,
    the part of it known without running, whether any of it is known only at run time)."""
    from jax._src.lib.mlir import ir

    ops = [op.operation for op in block.operations]
    known, measured = 0, []
    for op in ops[:-1]:
        if op.name == "stablehlo.while":
            cond = op.regions[0].blocks[0]
            if any(inner.operation.name in _CONTROL for inner in cond.operations):
                raise Unmeasurable("a loop or a branch inside a loop's condition")
            per_test = sum(_cost(inner.operation) for inner in cond.operations)
            loop = _with_counter(op, _constant(0.0, op))
            cond, body = (region.blocks[0] for region in loop.regions)
            cond.add_argument(_scalar(), ir.Location.unknown())
            counter = body.add_argument(_scalar(), ir.Location.unknown())
            work, _, _ = _count_block(body)
            terminator = list(body.operations)[-1].operation
            _append_to_terminator(
                body, _add(_add(counter, work, terminator), _constant(per_test, terminator), terminator)
            )
            measured.append(loop.results[-1])
        elif op.name in ("stablehlo.if", "stablehlo.case"):
            branches = _with_counter(op, None)
            for region in branches.regions:
                _append_to_terminator(region.blocks[0], _count_block(region.blocks[0])[0])
            measured.append(branches.results[-1])
        else:
            known += _cost(op)
    total = _constant(known, ops[-1])
    for value in measured:
        total = _add(total, value, ops[-1])
    return total, known, bool(measured)


def counting(exported):
    """(work, program): `work` the program's work when it holds no loop or branch (then it is
    known without running it, and `program` is None), else None and `program`, the exported
    program rewritten to also return its work as a last float32 output, to run on the inputs
    whose work is wanted. Raises Unmeasurable (a ValueError) for a program that cannot be measured (it calls
    itself, is too large once its calls are copied in, or tests a loop's condition with a loop)."""
    import dataclasses

    from jax._src import core
    from jax._src.export import _export
    from jax._src.interpreters import mlir
    from jax._src.lib.mlir import ir

    with mlir.make_ir_context(), ir.Location.unknown():
        module = parsed(exported)
        _inline_calls(module)
        main = _functions(module)["main"]
        _control_only_under_control(main)
        block = main.regions[0].blocks[0]
        total, known, dynamic = _count_block(block)
        if not dynamic:
            return float(known), None
        _append_to_terminator(block, total)
        kind = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        main.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(kind.inputs, [*kind.results, _scalar()]))
        if "res_attrs" in main.attributes:
            main.attributes["res_attrs"] = ir.ArrayAttr.get(
                [*ir.ArrayAttr(main.attributes["res_attrs"]), ir.DictAttr.get({})]
            )
        if not module.operation.verify():
            raise Unmeasurable("the rewritten program does not verify")
        serialized = _export._module_to_bytecode(module)
    import jax

    numbered = jax.tree_util.tree_unflatten(exported.out_tree, list(range(len(exported.out_avals))))
    return None, dataclasses.replace(
        exported,
        mlir_module_serialized=serialized,
        out_avals=(*exported.out_avals, core.ShapedArray((), np.float32)),
        out_tree=jax.tree_util.tree_structure((numbered, 0)),
        out_shardings_hlo=(*exported.out_shardings_hlo, None),
        _out_named_shardings=(*exported._out_named_shardings, None),
        _get_vjp=None,
    )
