"""What a failing test says, in Chinese, and what a hidden test may say at all.

The verdict helpers (`attempt`, `check_close`, `program`, `missing_name`) build the messages a
student reads under a test cell. A hidden test's inputs are the judge's secret, so while the judge
runs one (kit/ch4judge.py sets `current`), these helpers name no value computed from them and the
judge lets through only text the course wrote (`Hidden`).
"""

from __future__ import annotations

import ast
import functools
import inspect
import sys

import numpy as np

# ---------------------------------------------------------------------------------------------
# What a hidden test may say. Its inputs are the judge's secret, and whatever a verdict computes
# from them (a point where the answer failed, a norm, an error message that quotes a value) would
# tell them: a student who resubmits could collect them. So a hidden test's failure says only
# text the course wrote, allowed, not filtered: a message passes when it is made of the test
# body's own string pieces and the kit's (`Hidden.public`), or when a helper below built it from
# such pieces and issued it (a relative error as a power of ten, a count of failing points, an
# export error from the student's own kernel, which knows no hidden input). Anything else is
# replaced by the test's title (`Hidden.final`).


def text_pieces(source: str) -> set[str]:
    """Every piece of text a source writes itself: its string literals and the literal parts of
    its f-strings. Pieces with no letter (digits, signs, punctuation) are left out: joined,
    they could spell any number."""
    return {
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and any(c.isalpha() for c in node.value)
    }


@functools.cache  # the kit's sources do not change while a judge runs
def _kit_pieces() -> frozenset[str]:
    """The pieces of the kit's own messages (this module, the judge and ch4verdicts), which students have."""
    import ch4judge
    import ch4verdicts

    modules = (sys.modules[__name__], ch4judge, ch4verdicts)
    return frozenset().union(*(text_pieces(inspect.getsource(m)) for m in modules))


class Hidden:
    """What one hidden test may say (see above)."""

    def __init__(self, body: str) -> None:
        self.pieces = sorted(_kit_pieces() | text_pieces(body), key=len, reverse=True)
        first = body.lstrip().splitlines()[0] if body.strip() else ""
        self.title = first.lstrip("# ").strip() if first.lstrip().startswith("#") else ""
        self.issued: set[str] = set()

    def public(self, text: str) -> bool:
        """Whether `text` is a sequence of the allowed pieces (a word break over them)."""
        reach = [True] + [False] * len(text)
        for i in range(len(text)):
            if reach[i]:
                for piece in self.pieces:
                    if text.startswith(piece, i):
                        reach[i + len(piece)] = True
        return reach[-1]

    def say(self, text: str, otherwise: str = "这一项检查") -> str:
        return text if self.public(text) else otherwise

    def issue(self, message: str) -> str:
        self.issued.add(message)
        return message

    def final(self, message: str) -> str:
        if message in self.issued or self.public(message):
            return message
        return f"隐藏测试未通过：{self.title or '这个测试的检查'}（说明里有由隐藏输入算出的值，评分程序没有显示它）。"


current: Hidden | None = None  # the hidden test the judge is running, if any


def _issue(message: str) -> str:
    return current.issue(message) if current is not None else message


def _say(text: str, otherwise: str = "这一项检查") -> str:
    return current.say(text, otherwise) if current is not None else text


# ---------------------------------------------------------------------------------------------
# What a verdict says


def error_text(err: BaseException) -> str:
    """How a failed export is reported: its class and the first line of its message."""
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0][:300] if text else ''}"


NO_PROGRAM = "没有收到这个测试要的程序：测试单元格没有运行到导出这一步（前面的单元格出错或超时了吗？）。"
EXPORT_HINT = (
    "函数要能用 jax.jit 追踪：不要把数组转成 Python 数，也不要在函数里用回调（jax.debug.print、pure_callback）。"
)


# ---------------------------------------------------------------------------------------------
# Messages of verdicts. They raise AssertionError themselves: a plain `assert` in this module
# would vanish under `python -O` (test bodies are compiled with optimize=0, this module is not).


def _join(before: str, after: str) -> str:
    """Course text puts a space between Latin text and Chinese: "调用 f_penta 出错"."""
    return f"{before} {after}" if before and before[-1].isascii() and not before[-1].isspace() else before + after


def _ending(hint: str) -> str:
    return f"：{hint}" if hint else "。"


def missing_name(*names: str) -> str:
    """The message for names a test needs that the answer cell does not define."""
    it = "它" if len(names) == 1 else "它们"
    return _issue(
        f"没有找到 {'、'.join(names)}：还没有作答，或者作答区没有运行成功。请在作答区定义{it}，并先运行作答区。"
    )


def program(programs, name: str, doing: str, hint: str):
    """``programs[name]``; when its export failed, the failure says what the test was doing and the
    test's own hint (a missing name or no program at all keep the standard messages)."""
    why = programs.reason(name)
    if why and not why.startswith(("NameError", "没有收到")):
        raise AssertionError(_issue(_join(doing, f"出错（{why}）") + _ending(hint)))
    return programs[name]


def attempt(compute, doing: str, hint: str = ""):
    """``compute()``, or fail with "<doing>出错（<error>）：<hint>" if running a program raised (in a
    hidden test the error's class only: its text may quote an input)."""
    try:
        return compute()
    except AssertionError:
        raise
    except Exception as err:  # noqa: BLE001 - a program that fails here fails its test
        error = type(err).__name__ if current is not None else error_text(err)
        raise AssertionError(_issue(_join(_say(doing), f"出错（{error}）") + _ending(_say(hint, "")))) from None


def _relative_error(got, want, rtol, atol) -> str:
    """How far, as a power of ten: all a hidden test tells of its numbers (the largest relative
    error among the values outside the tolerance)."""
    got, want = np.atleast_1d(got), np.atleast_1d(want)
    outside = ~np.isclose(got, want, rtol=rtol, atol=atol)
    error = float(np.max(np.abs(got - want)[outside] / np.maximum(np.abs(want)[outside], 1e-30), initial=0.0))
    return f"（最大相对误差约 1e{int(np.ceil(np.log10(error)))}）" if np.isfinite(error) and error > 0 else ""


def check_close(
    got, want, what: str, *, rtol=1e-05, atol=1e-08, hint: str = "", finite: bool | str = False, reveal: bool = True
) -> None:
    """Fail unless ``got`` has the shape of ``want`` and ``np.allclose(got, want, rtol, atol)``
    (NumPy's default tolerances). With ``finite`` (True or a hint), a nan/inf fails first with its
    own message. Every message starts with ``what`` (the case) and shows ``got`` when it is short
    and ``reveal``. A hidden test shows neither ``got`` nor a shape, only how many values are not
    finite and the relative error as a power of ten."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    hidden = current is not None
    what, hint = _say(what), _say(hint, "")
    finite_hint = _say(finite, "") if isinstance(finite, str) else ""
    if got.shape != want.shape:
        shapes = "" if hidden else f" {got.shape}，应为 {want.shape}"
        raise AssertionError(_issue(_join(what, f"的形状不对{shapes}。" if hidden else f"的形状是{shapes}。")))
    shown = f"（得到 {got}）" if got.size <= 20 and reveal and not hidden else ""
    if finite and not np.all(np.isfinite(got)):
        count = f"（{int(np.sum(~np.isfinite(got)))} 个值）" if hidden else shown
        raise AssertionError(_issue(_join(what, f"出现了 nan/inf{count}") + _ending(finite_hint)))
    if not np.allclose(got, want, rtol=rtol, atol=atol):
        how_far = _relative_error(got, want, rtol, atol) if hidden else shown
        raise AssertionError(_issue(_join(what, f"不对{how_far}") + _ending(hint)))
