"""The kernel side of the graded exercises: test cells export the student's functions.

Every test cell of an exercise starts with the line ``%%ch4test`` and has two parts:

    (export)       ``_p = programs(test_id, {name: lambda: export(f, f32(n), vjp=True), ...})``
    # —— 判定 ——   the verdict: inputs from ``seed_for(test_id)``, ``_p[name](x)``, asserts

``export`` turns one of the student's functions into a serialized StableHLO program with
``jax.export`` at a public shape (``f32(64)``): no value of any input is involved, only shapes.
The cell magic (registered by the locked setup cell through ``start_tests``) runs the body in a
namespace the kit builds: the trusted imports and helpers the body names, and the exercise's
interface names from the student's namespace.

While a student works, the whole cell runs here: each program is serialized, loaded back by the
judge (kit/ch4judge.py: the same allow-policy as in grading) and the verdict runs on it, so the
student sees what the grade will see. While grading, the kernel runs only the export part; the
programs leave as a cell output, and the judge runs the verdicts in its own process, on inputs
it alone draws (grader/README.md). Nothing a graded kernel holds or does decides a score: what
it hands out is data, and a program that passes the verdicts is a correct answer.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import html
import linecache
import os
import re
import types

import ch4judge
import jax
import numpy as np
from ch4protocol import EXPORT_HELPER_NAMES, MIME, SIZES_ENV, TEST_MAGIC, sizes_seed, split_test_cell
from ch4summary import Results, grading, is_summary_cell, report_tests  # report_tests: every exercise's last cell

# Bound when the kit is imported, before any answer runs: an answer that rebinds jax.vjp or jax.jvp
# does not choose what a graded call is.
_VJP, _JVP = jax.vjp, jax.jvp

__all__ = [
    "start_tests",
    "report_tests",
    "export",
    "export_split",
    "export_jvp",
    "at",
    "f32",
    "i32",
    "programs",
    "sizes_for",
]


def f32(*shape: int) -> jax.ShapeDtypeStruct:
    """The public shape of a float32 input: ``f32(64)``, ``f32(3, 64)``, ``f32()`` for a scalar."""
    return jax.ShapeDtypeStruct(shape, np.float32)


def i32(*shape: int) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, np.int32)


def export(fun, *specs, vjp: bool = False) -> bytes:
    """``fun`` traced at the shapes `specs` (pytrees of ShapeDtypeStruct) and exported as a
    serialized CPU program, with its reverse-mode derivative when ``vjp``. Test cells that export
    the same function at the same shapes, one after another, get the same bytes (`_Exports`)."""

    leaves, tree = jax.tree_util.tree_flatten(specs)
    key = (_Exports.key(fun), tree, tuple((tuple(leaf.shape), str(leaf.dtype)) for leaf in leaves), vjp)
    if key not in _Exports.made:
        _Exports.made[key] = _serialized(fun, specs, vjp)
    return _Exports.made[key]


def _serialized(fun, specs, vjp: bool = False) -> bytes:
    """The program's bytes. Source locations are left out: they would name the test cell that
    exported it, so two test cells exporting the same function would hand the judge two programs
    to compile (and a student's file names have no business in an artifact). Traced with jit on: a
    student debugging with ``jax.config.update("jax_disable_jit", True)`` would otherwise have every
    ``lax.map`` and ``scan`` in the program unrolled in Python while it is traced."""
    from jax import export as jax_export
    from jax._src import config

    with (
        jax.disable_jit(False),
        config.include_full_tracebacks_in_locations(False),
        config.traceback_in_locations_limit(0),
        _debug_prints_left_out(),
    ):
        exported = jax_export.export(jax.jit(fun), platforms=["cpu"])(*specs)
        return bytes(_without_debug_prints(exported).serialize(vjp_order=1 if vjp else 0))


@contextlib.contextmanager
def _debug_prints_left_out():
    """``jax.debug.print`` and ``jax.debug.callback`` lowered to nothing while a program is exported:
    a program cannot carry a host callback, and a student who debugs with them must not lose the
    test for it; what the program computes is the same. Their own rules come back afterwards, so the
    student's own calls still print."""
    from jax._src import debugging
    from jax.interpreters import mlir

    rules = {debugging.debug_callback_p: debugging.debug_callback_lowering,
             debugging.debug_print_p: debugging.debug_print_lowering_rule}  # fmt: skip
    for primitive in rules:
        mlir.register_lowering(primitive, lambda ctx, *args, **params: [], platform="cpu")
        # Not even recorded while traced: an ordered print (``ordered=True``) would need an ordering
        # token passed through it, and a program with ordered effects is refused.
        primitive.bind = lambda *args, **params: []
    try:
        yield
    finally:
        for primitive, rule in rules.items():
            del primitive.bind
            mlir.register_lowering(primitive, rule, platform="cpu")


def _without_debug_prints(exported):
    """The exported program, and its derivative when it is made, without the debug prints' effect
    (their lowering is nothing under _debug_prints_left_out; the effect alone cannot be serialized)."""
    from jax._src import debugging

    get_vjp = exported._get_vjp
    return dataclasses.replace(
        exported,
        unordered_effects=tuple(e for e in exported.unordered_effects if not isinstance(e, debugging.DebugEffect)),
        _get_vjp=None if get_vjp is None else lambda primal: _without_debug_prints(get_vjp(primal)),
    )


class _Exports:
    """What the test cells run since the last other cell exported, by what decides the program.
    Hidden tests export on the visible tests' shapes, so the judge compiles each program once;
    tracing a Python-loop answer's 100 unrolled steps once per program saves seconds too. The
    student's names cannot change between two test cells: any other cell empties it (start_tests
    registers that). A function from a test cell is known by
    its code and by what that code reads (closures, defaults, globals), each by identity, kept
    alive here so no identity is reused; any other callable by its own identity."""

    made: dict = {}
    kept: list = []

    @classmethod
    def key(cls, fun, depth: int = 0):
        cls.kept.append(fun)
        if type(fun) in (int, float, bool, str) or fun is None:  # a value, known by itself: a number drawn
            return ("value", type(fun).__name__, repr(fun))  # anew each time still exports the same program
        if not isinstance(fun, types.FunctionType) or depth > 4:
            return ("object", id(fun))
        code = fun.__code__
        reads = tuple(
            (name, cls.key(fun.__globals__[name], depth + 1) if name in fun.__globals__ else None)
            for name in sorted(_names(code))
        )
        closure = tuple(cls.key(cell.cell_contents, depth + 1) for cell in fun.__closure__ or ())
        defaults = tuple(cls.key(value, depth + 1) for value in fun.__defaults__ or ())
        return ("function", _shape(code), reads, closure, defaults)

    @classmethod
    def forget(cls, *_) -> None:
        cls.made.clear()
        cls.kept.clear()


def _names(code) -> set[str]:
    """Every global name `code` and the functions nested in it read."""
    found = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found |= _names(const)
    return found


def _shape(code) -> tuple:
    """A code object by what it does, not where it was written (line numbers left out)."""
    consts = tuple(_shape(c) if isinstance(c, types.CodeType) else (type(c).__name__, repr(c)) for c in code.co_consts)
    return (code.co_code, consts, code.co_names, code.co_varnames, code.co_freevars, code.co_argcount, code.co_flags)


def export_split(f, *specs) -> tuple[bytes, bytes]:
    """The graded call of ``f`` at `specs`, as the two programs ``jax.vjp`` makes of it in one
    trace: its forward pass ``(*args) -> (value, residuals)`` (the residuals: the leaves of the
    pullback, what the forward pass keeps for the backward one) and its backward pass
    ``(residuals, cotangent) -> cotangents of args``, whatever made the rule (a ``custom_vjp``,
    ``lax.custom_root``, autodiff). The judge computes the value from the first and the VJP by
    running the second on the first's residuals, so every measure of the method (what is kept,
    what the backward pass holds and computes) is taken on the very programs whose values are
    graded. ``f`` is traced once: nothing else it carries (attributes, other rules) is read."""
    leaves, tree = jax.tree_util.tree_flatten(specs)
    key = ("split", _Exports.key(f), tree, tuple((tuple(leaf.shape), str(leaf.dtype)) for leaf in leaves))
    if key not in _Exports.made:
        made = {}

        def forward(*args):
            value, pullback = _VJP(f, *args)
            residuals, made["structure"] = jax.tree_util.tree_flatten(pullback)
            made["shapes"] = jax.tree_util.tree_map(
                lambda v: jax.ShapeDtypeStruct(v.shape, v.dtype), (residuals, value)
            )
            return value, tuple(residuals)

        def backward(residuals, cotangent):
            return tuple(jax.tree_util.tree_unflatten(made["structure"], list(residuals))(cotangent))

        first = _serialized(forward, specs)
        kept, out = made["shapes"]
        # An answer may compute in float64 inside `with jax.enable_x64(True):`, so its residuals are
        # 64-bit while x64 is off here: the backward pass is traced with x64 on, or its inputs would
        # be narrowed to 32 bits (the student's own kernel runs the pullback eagerly on the float64
        # arrays, or in one trace with the forward pass). A rule can read the flag and tell this
        # trace apart, as any answer can tell grading apart (docs/methods.md): what is graded is
        # the program this trace exports, and the student's visible tests export it the same way.
        wide = any(jax.dtypes.canonicalize_dtype(v.dtype) != v.dtype for v in jax.tree_util.tree_leaves((kept, out)))
        with jax.enable_x64(True) if wide else contextlib.nullcontext():
            _Exports.made[key] = (first, _serialized(backward, (tuple(kept), out)))
    return _Exports.made[key]


def export_jvp(f, *specs) -> bytes:
    """``f``'s forward mode as one program: ``(*primals, *tangents) -> (value, tangent of the value)``,
    the tangents shaped like the primals (``jax.jvp`` of the call)."""

    def value_and_jvp(*args):
        half = len(args) // 2
        return _JVP(f, args[:half], args[half:])

    return export(value_and_jvp, *specs, *specs)


def at(settings: dict, make):
    """``make()`` while the answer's global names in `settings` hold other values (``N_STEPS =
    400``). The statement says such a name is read when the function is called, so an export made
    here sees it; the answer's own values come back afterwards."""
    from IPython import get_ipython

    user = get_ipython().user_ns
    before = {name: user[name] for name in settings if name in user}
    _Exports.forget()
    jax.clear_caches()  # a jitted helper traced before would keep the value it read then
    user.update(settings)
    try:
        return make()
    finally:
        for name in settings:
            user.pop(name, None)
        user.update(before)
        _Exports.forget()
        jax.clear_caches()


EXPORT_HELPERS = {name: globals()[name] for name in EXPORT_HELPER_NAMES}  # the one list: ch4protocol


def _exported(exports: dict) -> dict:
    """Each ``name: thunk`` run on its own: {name: {"program": base64[, "backward": base64]} | {"error": text}}."""
    payload = {}
    for name, thunk in exports.items():
        try:
            made = thunk()
            if isinstance(made, tuple):  # export_split: the forward and the backward pass
                payload[str(name)] = {"program": _text(made[0]), "backward": _text(made[1])}
            else:
                payload[str(name)] = {"program": _text(made)}
        except Exception as err:  # the student's code may raise anything while it is traced
            payload[str(name)] = {"error": ch4judge.error_text(err)}
    return payload


def _text(program: bytes) -> str:
    return base64.b64encode(program).decode()


def programs(test_id: str, exports: dict) -> ch4judge.Programs | None:
    """Export every program a test needs. Grading: they leave as this cell's output (the verdict
    runs in the judge). Otherwise: loaded back through the judge's policy, for the verdict here."""
    payload = _exported(exports)
    if grading():
        from IPython.display import display

        note = f"🔒 测试 {test_id}：导出的程序已交给评分程序，判定在评分程序里进行。"
        display({MIME: {"test": test_id, "programs": payload}, "text/plain": note}, raw=True)
        return None
    loaded, refusals = ch4judge.load_all(payload)
    if refusals:
        raise TestFailed("❌ 评分程序拒绝了导出的程序：" + "；".join(refusals))
    return ch4judge.Programs(loaded)


def seed_for(test_id: str) -> int:
    """While a student works: fresh inputs every run (grading: the judge's own, secret)."""
    return int.from_bytes(os.urandom(8), "little")


def sizes_for(test_id: str) -> np.random.Generator:
    """Where a hidden test draws its sizes and structures (a test body calls it once, in its export
    part). While a student works: fresh ones every run. Graded: from the key the grader gave this
    kernel (`ch4protocol.SIZES_ENV`), which the judge derives too, so both draw the same."""
    if not grading():
        return np.random.default_rng(int.from_bytes(os.urandom(8), "little"))
    key = os.environ.get(SIZES_ENV)
    if not key:
        raise RuntimeError("course bug: a graded kernel without its sizes key")
    return np.random.default_rng(sizes_seed(key, test_id))


class _Undefined:
    """An interface name the answer has not defined (yet): any use of it raises the NameError
    Python would, inside the thunk that used it, so that test reports the missing name."""

    def __init__(self, name: str) -> None:
        self._name = name

    def _raise(self, *args, **kwargs):
        raise NameError(f"name '{self._name}' is not defined")

    __call__ = _raise

    def __getattr__(self, attribute):
        self._raise()


class _Tests:
    """The state ``start_tests`` sets up in a student's kernel."""

    interface: tuple[str, ...] = ()
    runs = 0  # test cells run so far: each body gets a file name of its own for tracebacks


def start_tests(interface) -> None:
    """Called by the locked setup cell: register ``%%ch4test`` and the handler that shows a failed
    test's message first."""
    from IPython import get_ipython

    _Tests.interface = tuple(interface)
    Results.clear()
    shell = get_ipython()
    if shell is None:
        return
    shell.register_magic_function(_ch4test, magic_kind="cell", magic_name=TEST_MAGIC.lstrip("%"))
    if _before_a_cell not in shell.events.callbacks["pre_run_cell"]:  # the setup cell may run again
        shell.events.register("pre_run_cell", _before_a_cell)
    shell.set_custom_exc((TestFailed,), _message_first)


def _before_a_cell(info) -> None:
    """Any cell but a test cell may change the student's names: exports made before it are stale,
    and so are the results recorded before it (the summary cell changes nothing)."""
    raw = info.raw_cell or ""
    if not raw.lstrip().startswith(TEST_MAGIC):
        _Exports.forget()
        if not is_summary_cell(raw):
            Results.cells_run += 1


def _ch4test(line: str, cell: str) -> None:
    """Run one test cell's body in a namespace of its own (see the module docstring)."""
    from IPython import get_ipython

    user = get_ipython().user_ns
    ids: list[str] = []

    def exporting(test_id, exports):
        ids.append(test_id)
        return programs(test_id, exports)

    names = {name: user[name] if name in user else _Undefined(name) for name in _Tests.interface}
    names |= {"programs": exporting, "seed_for": seed_for, "sizes_for": sizes_for, **EXPORT_HELPERS}
    body = split_test_cell(cell)
    space = ch4judge.namespace(body, names)
    _Tests.runs += 1
    filename = _remember_source(f"<测试单元格 {_Tests.runs}>", body)
    title = cell.partition("\n")[0]
    try:
        ch4judge.run_body(body, space, filename)
    except AssertionError as err:  # a verdict: the student reads its message, not the kit's frames
        verdict = TestFailed(f"❌ {'、'.join(ids) or '这个测试'} 未通过：{str(err).strip() or '断言失败'}")
        Results.record(ids, title, str(verdict))
        raise verdict.with_traceback(err.__traceback__) from None
    except BaseException as err:  # anything else the body met (an interrupt too): failed, as shown
        Results.record(ids, title, f"{type(err).__name__}: {err}")
        raise
    Results.record(ids, title, None)
    if not grading():
        print(f"✅ {', '.join(ids)} 通过" if ids else "ℹ️ 隐藏测试：评分时才运行")


# ---------------------------------------------------------------------------------------------
# Failures a student can read. IPython would show a failed test as a traceback through the cell
# magic (a line repeating the whole cell) and the kit, with the verdict's sentence last. The
# kit's handler makes the message the error output itself, so it is the first line under the
# cell, in JupyterLab, in nbgrader's Validate and in `make check`; the traceback stays one
# click away, collapsed below it.


class TestFailed(AssertionError):
    """A test cell's verdict failed; its message is the whole of what the student needs."""


FULL_TRACEBACK = "完整的出错信息（traceback，一般不需要看）"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _remember_source(filename: str, source: str) -> str:
    """Let tracebacks show the lines of code that was compiled from a string."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return filename


def _from_course_code(tb):
    """The traceback from the first frame of the kit or a test body on: the frames above are the
    cell's call of the magic (the whole cell repeated on one line) and IPython's."""
    kit = os.path.dirname(__file__)
    start = tb
    while start is not None:
        filename = start.tb_frame.f_code.co_filename
        if filename.startswith("<测试单元格") or os.path.dirname(filename) == kit:
            return start
        start = start.tb_next
    return tb


def _message_first(shell, etype, value, tb, tb_offset=None):
    """IPython's handler (``set_custom_exc``) for TestFailed."""
    message = str(value).strip() or etype.__name__
    full = shell.InteractiveTB.structured_traceback(etype, value, _from_course_code(tb), tb_offset=tb_offset)
    full = _ANSI.sub("", shell.InteractiveTB.stb2text(full))
    shell._showtraceback(etype, value, [message])  # its ename is the reply's: nbgrader adds no copy
    from IPython.display import display

    collapsed = f"<details><summary>{FULL_TRACEBACK}</summary><pre>{html.escape(full)}</pre></details>"
    display({"text/html": collapsed, "text/plain": f"{FULL_TRACEBACK}：\n{full}"}, raw=True)
    return None
