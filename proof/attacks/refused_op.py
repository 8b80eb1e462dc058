"""Attack: a hand-made artifact. For the test test_hidden_random the kit's export step is
rewired: each honest program is deserialized, its StableHLO text edited to hold an operation
outside the judge's allow-list (`stablehlo.replica_id`, unused) and serialized again."""
# base: residuals reference
# rides: reference
# class: an operation outside the allow-list
import dataclasses
import sys

from jax import export as _jax_export
from jax._src.interpreters import mlir as _mlir
from jax._src.lib.mlir import ir as _ir

TARGET = "test_hidden_random"


def _with_replica_id(data: bytes) -> bytes:
    exported = _jax_export.deserialize(bytearray(data))
    lines = exported.mlir_module().splitlines()
    main = next(i for i, line in enumerate(lines) if "func.func public @main" in line)
    lines.insert(main + 1, "    %replica = stablehlo.replica_id : tensor<ui32>")
    with _mlir.make_ir_context():
        edited = _mlir.module_to_bytecode(_ir.Module.parse("\n".join(lines)))
    return bytes(dataclasses.replace(exported, mlir_module_serialized=edited).serialize())


def _each(edit, made):  # a graded call's export is two programs, its forward and its backward pass
    return tuple(edit(part) for part in made) if isinstance(made, tuple) else edit(made)


_kit = sys.modules["ch4check"]
_honest_programs = _kit.programs


def _programs(test_id, exports):
    if test_id == TARGET:
        exports = {name: (lambda thunk=thunk: _each(_with_replica_id, thunk())) for name, thunk in exports.items()}
    return _honest_programs(test_id, exports)


_kit.programs = _programs
