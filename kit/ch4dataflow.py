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
    runs is not in the program's structure)."""
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
                elif owner.name == "func.call":
                    callee = functions.get(str(owner.attributes["callee"]).lstrip("@").strip('"'))
                    if callee is None or not len(callee.regions[0].blocks):
                        others.append("func.call to a function without a body here")
                    else:
                        todo.append(callee.regions[0].blocks[0].arguments[use.operand_number])
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


def peak_live_bytes(exported) -> int:
    """The most bytes of values a program holds at once when it runs op by op in its written
    order, each value freed after its last use: loop bodies and called functions count once, at
    their own peak, on top of what is live around them. A backward pass that keeps a solver's
    trajectory holds it, however the program was written (a stacked array, a loop's carry, or a
    hundred separate values of an unrolled Python loop); one that recomputes what it needs does
    not. XLA's own memory analysis is no measure of this: it reports a few fixed kilobytes for an
    unrolled program whatever it keeps. Raises ValueError for a program that calls itself."""
    from jax._src.interpreters import mlir
    from jax._src.lib.mlir import ir

    def size(value) -> int:
        try:
            shaped = ir.RankedTensorType(value.type)
        except ValueError:  # a token or a tuple: no data of its own
            return 0
        bits = 32
        for kind in (ir.FloatType, ir.IntegerType, ir.ComplexType):
            try:
                element = kind(shaped.element_type)
            except ValueError:
                continue
            bits = element.width if kind is not ir.ComplexType else 2 * ir.FloatType(element.element_type).width
        return int(np.prod([max(dim, 1) for dim in shaped.shape], dtype=np.int64)) * max(bits, 8) // 8

    def reads(op, found: list) -> None:
        """Every value `op` reads, its nested regions included."""
        found.extend(op.operands)
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    reads(inner.operation, found)

    with mlir.make_ir_context():
        module = parsed(exported)
        functions = {
            str(op.attributes["sym_name"]).strip('"'): op
            for op in module.body.operations
            if op.operation.name == "func.func"
        }
        peaks: dict[str, int] = {}
        calling: set[str] = set()

        def inside(block) -> int:
            """The block's own peak beyond its arguments (they alias what its owner passed in)."""
            return max(0, block_peak(block) - sum(size(a) for a in block.arguments))

        def called(name: str) -> int:
            if name in calling:
                raise ValueError("the program calls itself")
            function = functions.get(name)
            if function is None or not len(function.regions[0].blocks):
                return 0
            if name not in peaks:
                calling.add(name)
                peaks[name] = inside(function.regions[0].blocks[0])
                calling.discard(name)
            return peaks[name]

        def block_peak(block) -> int:
            ops = [op.operation for op in block.operations]
            last: dict = {}
            for i, op in enumerate(ops):
                found: list = []
                reads(op, found)
                for value in found:
                    last[value] = i
            live = {a: size(a) for a in block.arguments if a in last}
            peak = sum(live.values())
            for i, op in enumerate(ops):
                nested = [inside(b) for region in op.regions for b in region.blocks]
                if op.name == "func.call":
                    nested.append(called(str(op.attributes["callee"]).lstrip("@").strip('"')))
                live.update({result: size(result) for result in op.results})
                peak = max(peak, sum(live.values()) + max(nested, default=0))
                for value in [v for v in live if last.get(v, -1) <= i]:
                    del live[value]
            return peak

        return block_peak(functions["main"].regions[0].blocks[0])
