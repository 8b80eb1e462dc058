"""Evidence for the graded exercises: test cells collect it, a verdict judges it.

Every test cell of an exercise starts with the line ``%%ch4test`` and has three parts:

    # —— 输入 ——      inputs drawn from ``seed_for(test_id)`` (NumPy only, no student code)
    # —— 收集证据 ——  ``_ev = collect(test_id, lambda: {...})`` calls the student's functions
    # —— 判定 ——      asserts on ``_ev`` against references computed from the inputs

The cell magic (registered by the locked setup cell through ``start_tests``) runs the body in a
fresh namespace that this module builds: the trusted imports the body names (``TRUSTED``), the
kit's ``collect``, ``seed_for`` and the ``TEST_HELPERS`` it names (``run_each``, ``attempt``,
``check_close``, ...), and only the exercise's interface names taken from the student's
namespace. So an answer cell that redefines ``collect``, ``check_close``, ``isinstance``, ``np``
or any other name a test reads changes nothing in the test.

While a student works, the whole cell runs in their kernel and the seed is fresh each time.
During grading the kernel runs only the first two parts: ``collect`` sends the evidence out as a
cell output, and the grader runs the verdict in its own process, with the same seed, on the
evidence it received (see grader/README.md). So this module is the *only* course code a graded
kernel imports, and nothing a graded kernel runs decides a score: the verdict helpers
(``check_no_error``, ``check_close``, ``missing_name``) decide a score only in the grader's process.
"""

from __future__ import annotations

import base64
import builtins
import contextlib
import html
import importlib
import io
import linecache
import os
import re
import types

import numpy as np

# Shared with the grader, which imports them without JAX; re-exported here for the kit's users.
from ch4protocol import (  # noqa: F401
    ANSWER_MAGIC,
    MIME,
    SEED_ENV,
    TEST_MAGIC,
    VERDICT_MARKER,
    derive_seed,
    free_names,
    split_test_cell,
)

# What a test body may name besides the interface: local name -> "module" or "module:attribute".
# The kit imports these itself; the student's namespace is never consulted for them.
TRUSTED = types.MappingProxyType(
    {
        "jax": "jax",
        "jnp": "jax.numpy",
        "lax": "jax.lax",
        "np": "numpy",
        "optax": "optax",
        "contextlib": "contextlib",
        "io": "io",
        "re": "re",
        "partial": "functools:partial",
        "namedtuple": "collections:namedtuple",
        "check_grads": "jax.test_util:check_grads",
        "print_saved_residuals": "jax.ad_checkpoint:print_saved_residuals",
        "solve_ivp": "scipy.integrate:solve_ivp",
    }
)

_ARRAY_KEY = "__ndarray__"
_DTYPES = {"|b1", "<i4", "<i8", "<u4", "<u8", "<f4", "<f8"}
MAX_ELEMENTS = 1_000_000  # per array: evidence is values on a few thousand points at most
MAX_TEXT = 20_000  # characters per string (a jaxpr, an error message)




def seed_for(test_id: str) -> int:
    """Grading: the grader's seed for this test. Otherwise: a fresh random seed each call."""
    return derive_seed(os.environ.get(SEED_ENV) or os.urandom(16).hex(), test_id)


def grading() -> bool:
    return bool(os.environ.get(SEED_ENV))


def encode(value):
    """Plain JSON: numbers, strings, lists, dicts and numeric arrays. Anything else is refused,
    so an object that pretends to be a number (a custom ``__eq__``) never reaches a verdict."""
    if value is None or isinstance(value, (bool, str)):
        if isinstance(value, str) and len(value) > MAX_TEXT:
            value = value[:MAX_TEXT]
        return value
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    if type(value) is int:
        return value
    array = np.asarray(value)
    kind = array.dtype.kind
    if kind not in "biuf":
        raise TypeError(f"证据只能是数值数组、数字、字符串或它们的列表/字典，收到 {type(value).__name__}")
    if kind == "f" and array.dtype.itemsize < 4:  # bfloat16 / float16 travel as float32
        array = array.astype(np.float32)
    array = np.asarray(array, dtype=array.dtype.newbyteorder("<"), order="C")  # keeps 0-d arrays 0-d
    data = base64.b64encode(array.tobytes()).decode()
    return {_ARRAY_KEY: data, "dtype": array.dtype.str, "shape": list(array.shape)}


def decode(value):
    """The inverse of ``encode``, strict: the grader runs it on whatever a kernel sent."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        if len(value) > MAX_TEXT:
            raise ValueError("证据里的字符串过长")
        return value
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, dict) and _ARRAY_KEY in value:
        dtype, shape = value.get("dtype"), value.get("shape")
        if dtype not in _DTYPES or not isinstance(shape, list) or not all(type(n) is int and n >= 0 for n in shape):
            raise ValueError("证据里的数组格式不对")
        size = int(np.prod(shape, dtype=np.int64))
        if size > MAX_ELEMENTS:
            raise ValueError("证据里的数组过大")
        raw = base64.b64decode(value[_ARRAY_KEY], validate=True)
        if len(raw) != size * np.dtype(dtype).itemsize:
            raise ValueError("证据里的数组长度与形状不符")
        return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
    if isinstance(value, dict):
        return {str(k): decode(v) for k, v in value.items()}
    raise ValueError(f"证据里出现了不认识的类型 {type(value).__name__}")


# What tampering code would replace to pass tests it fails. `collect` reports any change since
# this module was imported (in the setup cell, before the answer cell ran) and the grader treats
# a change as tampering. Code in the same process could hide a change, so this only backs up the
# answer scan and the verdicts that run outside the kernel (grader/README.md).
_WATCHED = {
    "builtins": "isinstance float int bool len abs min max sum print",
    "numpy": "allclose isclose array_equal isfinite asarray",
    "numpy.testing": "assert_allclose assert_array_equal",
    "jax.numpy": "allclose isclose array_equal",
    "jax": "grad vjp jvp jacfwd jacrev linearize make_jaxpr vmap jit custom_vjp custom_jvp pure_callback",
    "jax.ad_checkpoint": "print_saved_residuals",
    "jax.test_util": "check_grads",
}
_HOOKS = ("input_transformers_cleanup", "input_transformers_post", "ast_transformers", "custom_exceptions")
_EVENTS = ("pre_execute", "pre_run_cell")


def _watched_state() -> dict:
    import importlib
    import sys

    state = {"sys.settrace": sys.gettrace(), "sys.setprofile": sys.getprofile(), "sys.displayhook": sys.displayhook}
    for module, names in _WATCHED.items():
        loaded = importlib.import_module(module)
        for name in names.split():
            state[f"{module}.{name}"] = getattr(loaded, name, None)
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:
        return state
    for hook in _HOOKS:
        state[f"IPython {hook}"] = tuple(getattr(shell, hook, ()))
    for event in _EVENTS:
        state[f"IPython event {event}"] = tuple(shell.events.callbacks.get(event, ()))
    return state


_BASELINE = _watched_state()


def changed_since_setup() -> list[str]:
    """Names of watched functions and hooks that differ from when the setup cell ran."""
    now = _watched_state()
    return sorted(k for k in now if k not in _BASELINE or not (now[k] is _BASELINE[k] or now[k] == _BASELINE[k]))


def error_text(err: BaseException) -> str:
    """How evidence reports an exception: its class and the first line of its message."""
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0][:300] if text else ''}"


def collect(test_id: str, compute) -> dict:
    """Run ``compute()`` (which returns a dict of evidence) and return the evidence as the
    verdict will see it. ``_ev["error"]`` is None, or the first line of what ``compute`` raised.
    While grading, the evidence also leaves the kernel as an output of this cell."""
    try:
        values = compute()
        if not isinstance(values, dict):
            raise TypeError("收集证据的函数应当返回一个 dict")
        evidence = {"error": None, **{str(k): encode(v) for k, v in values.items() if k != "error"}}
    except Exception as err:  # the student's code may raise anything; that is evidence too
        evidence = {"error": error_text(err)}
    if grading():
        from IPython.display import display

        message = f"🔒 测试 {test_id}：证据已交给评分程序，判定在评分程序里进行。"
        import ch4guard

        payload = {
            "test": test_id,
            "evidence": evidence,
            "changed": changed_since_setup(),
            "refused": ch4guard.refusals(),  # what the answer tried and the guard refused
        }
        display({MIME: payload, "text/plain": message}, raw=True)
    return decode(evidence)


# ---------------------------------------------------------------------------------------------
# Helpers for test bodies (`TEST_HELPERS`). The first four run in the student's kernel, inside
# `collect`, and only gather evidence; the last three are the verdicts' messages. A body gets
# them from the kit, like `collect`, so an answer that defines the same names changes nothing.


def run_each(computations) -> dict:
    """Each ``(name, compute)`` on its own, so that one failure keeps the others' evidence:
    ``{name: result as a float64 array, name + "_error": None}``, or, if ``compute`` raised,
    ``{name: None, name + "_error": text}``."""
    out = {}
    for name, compute in computations:
        try:
            out[name], out[name + "_error"] = np.asarray(compute(), np.float64), None
        except Exception as err:  # the student's code may raise anything; that is evidence too
            out[name], out[name + "_error"] = None, error_text(err)
    return out


def attempt(compute) -> dict:
    """One case of a test: ``compute()``'s dict with ``"error": None``, or ``{"error": text}`` if
    it raised, so that one failing case keeps the other cases' evidence."""
    try:
        return {**compute(), "error": None}
    except Exception as err:  # the student's code may raise anything; that is evidence too
        return {"error": error_text(err)}


def grads_error(f, args, **check_grads_kwargs) -> str | None:
    """``jax.test_util.check_grads(f, args, ...)``: None if it passes, otherwise its error. Not
    only the first line: check_grads puts the mismatched numbers on the lines after it."""
    from jax.test_util import check_grads

    try:
        check_grads(f, args, **check_grads_kwargs)
    except Exception as err:  # the student's code may raise anything; that is evidence too
        return f"{type(err).__name__}: {str(err)[:300]}"
    return None


_RESIDUAL = re.compile(r"\s*\w+\[([\d,\s]*)\]")  # a line "f32[3,4] output of sin from ...": dtype[shape]


def saved_residuals(f, *args) -> int:
    """How many array elements reverse mode keeps from the forward pass of ``f(*args)``, counted
    from what ``jax.ad_checkpoint.print_saved_residuals`` prints (a scalar counts 1)."""
    from jax.ad_checkpoint import print_saved_residuals

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        print_saved_residuals(f, *args)
    total = 0
    for line in printed.getvalue().splitlines():
        match = _RESIDUAL.match(line)
        if match:
            total += int(np.prod([int(n) for n in match.group(1).split(",") if n.strip()]))
    return total


# The verdict helpers raise AssertionError themselves: a plain `assert` in this module would
# vanish under `python -O` (test bodies are compiled with optimize=0, this module is not).


def _join(before: str, after: str) -> str:
    """Course text puts a space between Latin text and Chinese: "调用 f_penta 出错"."""
    return f"{before} {after}" if before and before[-1].isascii() and not before[-1].isspace() else before + after


def missing_name(*names: str) -> str:
    """The message for names a test needs that the answer cell does not define."""
    return f"没有找到 {'、'.join(names)}：请在作答区定义{'它' if len(names) == 1 else '它们'}，并先运行作答区。"


def _ending(hint: str) -> str:
    return f"：{hint}" if hint else "。"


def check_no_error(error, doing: str, hint: str = "") -> None:
    """Fail with "<doing>出错（<error>）：<hint>" unless ``error`` (from the evidence) is None."""
    if error is not None:
        raise AssertionError(_join(doing, f"出错（{error}）") + _ending(hint))


def check_close(
    got, want, what: str, *, rtol=1e-05, atol=1e-08, hint: str = "", finite: bool | str = False, reveal: bool = True
) -> None:
    """Fail unless ``got`` has the shape of ``want`` and ``np.allclose(got, want, rtol, atol)``
    (NumPy's default tolerances). With ``finite`` (True or a hint), a nan/inf fails first with its
    own message. Every message starts with ``what`` (the case) and shows ``got`` when it is short
    and ``reveal`` (hidden tests do not show it: the answer chose those numbers)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        raise AssertionError(_join(what, f"的形状是 {got.shape}，应为 {want.shape}。"))
    shown = f"（得到 {got}）" if got.size <= 20 and reveal else ""
    if finite and not np.all(np.isfinite(got)):
        raise AssertionError(_join(what, f"出现了 nan/inf{shown}") + _ending(finite if isinstance(finite, str) else ""))
    if not np.allclose(got, want, rtol=rtol, atol=atol):
        raise AssertionError(_join(what, f"不对{shown}") + _ending(hint))


TEST_HELPERS = types.MappingProxyType(
    {
        f.__name__: f
        for f in (run_each, attempt, grads_error, saved_residuals, missing_name, check_no_error, check_close)
    }
)


# ---------------------------------------------------------------------------------------------
# Test cells run in a namespace the kit builds, in the student's kernel and in the grader alike




def _trusted(spec: str):
    module, _, attribute = spec.partition(":")
    loaded = importlib.import_module(module)
    return getattr(loaded, attribute) if attribute else loaded


def test_namespace(body: str, interface: dict, **helpers) -> dict:
    """The globals of one test cell: real builtins, the trusted imports and the kit's
    ``TEST_HELPERS`` it names, `helpers` (``collect``, ``seed_for``) and the interface objects,
    and nothing else."""
    names = free_names(body)
    namespace = {"__builtins__": builtins, "__name__": "__ch4test__"}
    namespace.update({name: _trusted(spec) for name, spec in TRUSTED.items() if name in names})
    namespace.update({name: helper for name, helper in TEST_HELPERS.items() if name in names})
    namespace.update(helpers)
    namespace.update(interface)
    return namespace




def run_test_body(body: str, namespace: dict, filename: str) -> None:
    # optimize=0: asserts are the verdicts, and `python -O` must not strip them
    exec(compile(body, filename, "exec", optimize=0), namespace)


class _Tests:
    """The state ``start_tests`` sets up in a student's kernel."""

    interface: tuple[str, ...] = ()
    setup_source = ""
    rule_problems: dict[str, list[str]] = {}  # cell -> the rules it breaks, while a student works
    cell_id: str | None = None  # the cell running now, while a student works
    runs = 0  # test cells run so far: each body gets a file name of its own for tracebacks


def start_tests(interface) -> None:
    """Called by the locked setup cell: register ``%%ch4test`` (test cells) and ``%%ch4answer``
    (every cell the student writes runs confined by kit/ch4guard.py), and start the answer
    namespace with what the setup cell imported, as far as an answer may have it.

    While grading, the grader marks the student's cells with ``%%ch4answer`` itself. While a
    student works, an input transformer marks every cell run after this one (the same way), and
    each such cell is first checked against the answering rules, so the student sees a refusal
    before handing in."""
    import ch4guard
    from IPython import get_ipython

    shell = get_ipython()
    _Tests.interface = tuple(interface)
    if shell is None:
        return
    history = shell.user_ns.get("In") or [""]
    _Tests.setup_source = history[-1] if isinstance(history[-1], str) else ""
    ch4guard.start(_Tests.setup_source, fresh=grading())
    shell.register_magic_function(_ch4test, magic_kind="cell", magic_name=TEST_MAGIC.lstrip("%"))
    shell.register_magic_function(_ch4answer, magic_kind="cell", magic_name=ANSWER_MAGIC.lstrip("%"))
    shell.set_custom_exc((TestFailed, ch4guard.Refused), _message_first)
    _BASELINE["IPython custom_exceptions"] = tuple(shell.custom_exceptions)  # the kit's own: not tampering
    if not grading():
        if _confine not in shell.input_transformers_cleanup:  # the setup cell may run twice
            shell.input_transformers_cleanup.append(_confine)
            shell.events.register("pre_run_cell", _note_cell)


def _confine(lines: list[str]) -> list[str]:
    """Every cell but the setup cell and the test cells runs as an answer cell."""
    text = "".join(lines)
    first = text.lstrip().split("\n", 1)[0]
    if not text.strip() or first.startswith((TEST_MAGIC, ANSWER_MAGIC)) or text.strip() == _Tests.setup_source.strip():
        return lines
    return [ANSWER_MAGIC + "\n", *lines]


def _note_cell(info) -> None:
    _Tests.cell_id = getattr(info, "cell_id", None)


def _ch4answer(line: str, cell: str):
    """Run a cell the student wrote, confined (kit/ch4guard.py). While a student works, a cell
    that breaks an answering rule is not run, as in grading, and the lines are shown."""
    __tracebackhide__ = True  # noqa: F841 - IPython leaves this frame out of tracebacks
    import ch4guard

    if not grading():
        import ch4rules

        key = _Tests.cell_id or cell
        found = ch4rules.problems(cell, preamble=_Tests.setup_source)
        if found:
            _Tests.rule_problems[key] = found
            raise ch4guard.UseRefused(
                "这个单元格没有遵守作答规则，评分时本题会记 0 分（不会运行）：\n  "
                + "\n  ".join(found)
                + "\n作答规则："
                + ch4rules.RULES_SUMMARY
            )
        _Tests.rule_problems.pop(key, None)
    return ch4guard.run_cell(cell)


def _ch4test(line: str, cell: str) -> None:
    """Run one test cell's body in a fresh namespace (see the module docstring)."""
    import ch4guard
    from IPython import get_ipython

    problems = [p for found in _Tests.rule_problems.values() for p in found]
    if problems and not grading():
        raise TestFailed("❌ 作答区没有遵守作答规则，评分时本题记 0 分：" + "；".join(problems[:5]))
    # The answer's names live in the answer namespace. A cell run unconfined (grading with
    # --no-code-scan, to prove the other defences alone) defines them in IPython's namespace,
    # where a confined answer cannot write.
    interface = {}
    for place in (get_ipython().user_ns, ch4guard.namespace()):  # the answer namespace wins
        interface.update({name: place[name] for name in _Tests.interface if name in place})
    ids: list[str] = []

    def collecting(test_id, compute):
        ids.append(test_id)
        return collect(test_id, compute)

    namespace = test_namespace(cell, interface, collect=collecting, seed_for=seed_for)
    _Tests.runs += 1
    filename = _remember_source(f"<测试单元格 {_Tests.runs}>", cell)
    try:
        run_test_body(cell, namespace, filename)
    except AssertionError as err:  # a verdict: the student reads its message, not the kit's frames
        verdict = TestFailed(f"❌ {'、'.join(ids) or '这个测试'} 未通过：{str(err).strip() or '断言失败'}")
        raise verdict.with_traceback(err.__traceback__) from None
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
    """The traceback from the first frame of the kit, a test body or an answer cell on: the
    frames above are the cell's call of the magic (the whole cell repeated on one line) and IPython's."""
    kit = os.path.dirname(__file__)
    start = tb
    while start is not None:
        filename = start.tb_frame.f_code.co_filename
        if filename.startswith(("<测试单元格", "<作答区")) or os.path.dirname(filename) == kit:
            return start
        start = start.tb_next
    return tb


def _message_first(shell, etype, value, tb, tb_offset=None):
    """IPython's handler (``set_custom_exc``) for TestFailed and the answer guard's refusals."""
    message = str(value).strip() or etype.__name__
    full = shell.InteractiveTB.structured_traceback(etype, value, _from_course_code(tb), tb_offset=tb_offset)
    full = _ANSI.sub("", shell.InteractiveTB.stb2text(full))
    if grading():  # the autograded notebook and its feedback keep plain outputs: the message, then the frames
        shell._showtraceback(etype, value, [message, "", full])
        return None
    shell._showtraceback(etype, value, [message])  # its ename is the reply's: nbgrader adds no copy
    from IPython.display import display

    collapsed = f"<details><summary>{FULL_TRACEBACK}</summary><pre>{html.escape(full)}</pre></details>"
    display({"text/html": collapsed, "text/plain": f"{FULL_TRACEBACK}：\n{full}"}, raw=True)
    return None
