"""What a failing test says, in Chinese, and what a hidden test may say at all.

The verdict helpers (`attempt`, `check_close`, `program`, `missing_name`) build the messages a
student reads under a test cell. A hidden test's inputs are the judge's secret, so while the judge
runs one (kit/ch4judge.py sets `current`), these helpers name no value computed from them and the
judge lets through only text the course wrote (`Hidden`).
"""

from __future__ import annotations

import ast

import numpy as np

# ---------------------------------------------------------------------------------------------
# What a hidden test may say. Its inputs are the judge's secret, and whatever a verdict computes
# from them or from what the answer returned on them (a point where it failed, a count of bad
# values, an error's size) would tell them: an answer can choose its outputs so that such a
# number spells an input. So a hidden test's failure says only text the course wrote: what
# failed and which property. A message passes when it is made of the test body's own string
# pieces and the kit's (`Hidden.public`); anything else is replaced by the test's title
# (`Hidden.final`). The helpers below write no number into a hidden test's message at all; the
# gate is what holds when a test body does. Counts and errors are for visible tests, whose inputs
# are public.


def text_pieces(source: str) -> set[str]:
    """Every piece of text a source writes itself: its string literals, the literal parts of its
    f-strings, and the names it uses (a test names the interface it calls: "没有找到
    clip_grad_global_norm" is course text). Pieces of digits and signs alone ("1", "-3", "e") are
    left out: joined, they could spell any number; punctuation without a digit ("：", "。") stays."""
    tree = ast.parse(source)
    strings = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    return {
        piece
        for piece in strings | names
        if piece and (any(c.isalpha() and c not in "eE" for c in piece) or not any(c.isdigit() for c in piece))
    }


class Hidden:
    """What one hidden test may say (see above): `kit_pieces`, the kit's own text, which its
    caller (the judge) reads from the kit's sources."""

    def __init__(self, body: str, kit_pieces: frozenset[str] = frozenset()) -> None:
        self.pieces = sorted(kit_pieces | text_pieces(body), key=len, reverse=True)
        first = body.lstrip().splitlines()[0] if body.strip() else ""
        self.title = first.lstrip("# ").strip() if first.lstrip().startswith("#") else ""

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

    def final(self, message: str) -> str:
        if self.public(message):
            return message
        return f"隐藏测试未通过：{self.title or '这个测试的检查'}（说明里有由隐藏输入算出的值，评分程序没有显示它）。"


current: Hidden | None = None  # the hidden test the judge is running, if any


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
    "函数要能用 jax.jit 追踪：不要把数组转成 Python 数，"
    "也不要在函数里用 pure_callback 之类的回调（jax.debug.print 可以留着）。"
)

CALLBACK_HINT = (
    "程序里有主机回调（jax.pure_callback、io_callback 之类），导出的程序带不走它："
    "请只用 JAX 自己的数组运算和控制流写这个函数（jax.debug.print 可以留着）。"
)
UNSUPPORTED_HINT = (
    "JAX 自己不支持对这种写法做这一步变换（NotImplementedError），在你自己的内核里求导也会报同样的错："
    "请换一种写法（比如换一个线性求解器），再运行一次测试。"
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
    return f"没有找到 {'、'.join(names)}：还没有作答，或者作答区没有运行成功。请在作答区定义{it}，并先运行作答区。"


def program(programs, name: str, doing: str, hint: str):
    """``programs[name]``; when its export failed, the failure says what the test was doing and the
    test's own hint (a missing name or no program at all keep the standard messages)."""
    why = programs.reason(name)
    if why and "callback" in why:  # the test's hint is about its method; this export failed for another reason
        hint = CALLBACK_HINT
    elif why.startswith("NotImplementedError"):  # JAX's own limit (gmres as custom_root's tangent_solve)
        hint = UNSUPPORTED_HINT
    if why and not why.startswith(("NameError", "没有收到")):
        if current is not None:  # the kernel's own text: a hidden test says what failed only
            raise AssertionError(_join(_say(doing), "出错") + _ending(_say(hint, "")))
        raise AssertionError(_join(doing, f"出错（{why}）") + _ending(hint))
    return programs[name]


def attempt(compute, doing: str, hint: str = ""):
    """``compute()``, or fail with "<doing>出错（<error>）：<hint>" if running a program raised (in a
    hidden test "<doing>出错：<hint>" only: an error's text may quote an input)."""
    try:
        return compute()
    except AssertionError:
        raise
    except Exception as err:  # noqa: BLE001 - a program that fails here fails its test
        if current is not None:
            raise AssertionError(_join(_say(doing), "出错") + _ending(_say(hint, ""))) from None
        raise AssertionError(_join(doing, f"出错（{error_text(err)}）") + _ending(hint)) from None


def shown(values) -> str:
    """Numbers as one line a student reads: ``[0, 0.0401, 1.5]``, not NumPy's column-aligned
    print that wraps inside a message."""
    values = np.asarray(values)
    if values.ndim == 0:
        return f"{values.item():.6g}"
    text = np.array2string(values, separator=", ", max_line_width=10**6, formatter={"all": lambda v: f"{v:.6g}"})
    return " ".join(text.split())  # a matrix's rows on one line too


def check_close(
    got, want, what: str, *, rtol=1e-05, atol=1e-08, hint: str = "", finite: bool | str = False, reveal: bool = True
) -> None:
    """Fail unless ``got`` has the shape of ``want`` and ``np.allclose(got, want, rtol, atol)``
    (NumPy's default tolerances). With ``finite`` (True or a hint), a nan/inf fails first with its
    own message. Every message starts with ``what`` (the case) and shows ``got`` when it is short
    and ``reveal``. A hidden test's message says only which check failed: no value, no shape, no
    count (see `Hidden`)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    hidden = current is not None
    what, hint = _say(what), _say(hint, "")
    finite_hint = _say(finite, "") if isinstance(finite, str) else ""
    if got.shape != want.shape:
        raise AssertionError(_join(what, "的形状不对。" if hidden else f"的形状是 {got.shape}，应为 {want.shape}。"))
    values = f"（得到 {shown(got)}）" if got.size <= 20 and reveal and not hidden else ""
    if finite and not np.all(np.isfinite(got)):
        raise AssertionError(_join(what, f"出现了 nan/inf{values}") + _ending(finite_hint))
    if not np.allclose(got, want, rtol=rtol, atol=atol):
        raise AssertionError(_join(what, f"不对{values}") + _ending(hint))
