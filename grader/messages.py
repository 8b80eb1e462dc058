"""Every note the grader writes about a submission, in one place: they reach students in the
score table, grades and feedback pages, so they are Chinese, calm, say what happened and what
to do next. (The output-cap notes live beside their mechanism in kernels/execute.py; nbgrader's refused
steps in nbgrader_guard.py; the tests' own messages in the exercise notebooks.)"""

from __future__ import annotations

CONTACT = "请联系助教"


def grader_failed(action: str, err: BaseException) -> str:
    """The grader itself could not read, save or grade a submission: never the student's fault."""
    return f"评分程序无法{action}这份提交（{type(err).__name__}），本作业记 0 分；{CONTACT}"


# —— intake: before any kernel runs ——


def folder_is_link(name: str) -> str:
    return f"作业文件夹 {name} 是符号链接：为安全起见不跟随，请提交文件本身"


def notebook_missing(expected: str, found: list[str]) -> str:
    folder = expected.removesuffix(".ipynb")
    return (
        f"缺少 notebook {expected}（收到：{'、'.join(found) or '没有任何 .ipynb 文件'}）："
        f"请把你作答的 notebook 命名为 {expected}，放进作业文件夹 {folder}/ 后重新提交"
    )


def renamed(expected: str, got: str) -> str:
    return f"文件名应为 {expected}，收到 {got}：已按 {expected} 评分"


def extra_notebooks(graded: str, expected: str, extra: list[str]) -> str:
    shown = "、".join(extra[:5]) + ("……" if len(extra) > 5 else "")
    return (
        f"提交里另有 {len(extra)} 个 notebook 没有评分：{shown}。评分的只有 {graded}；"
        f"如果答案写在另一份里，请把那一份改名为 {expected}（其余的删掉）后重新提交"
    )


def file_is_link(name: str) -> str:
    return f"{name} 是符号链接或不是普通文件：为安全起见不跟随，请提交文件本身"


def _damaged(name: str) -> str:
    """What to do with a file that is empty or not JSON: most often a save or an upload that went
    wrong. JupyterLab cannot open it, and its file browser hides the last checkpoint."""
    stem = name.removesuffix(".ipynb")
    return (
        "它可能在保存或上传时损坏了。如果你自己的这份 notebook 在 JupyterLab 里能正常打开，"
        "请保存后重新提交。打不开时，可以找回上一次手动保存（Ctrl+S 或保存按钮；自动保存不算）"
        "留下的副本，它在同一文件夹的隐藏文件夹 .ipynb_checkpoints 里（文件浏览器不显示它）："
        "在文件浏览器里进入 notebook 所在的文件夹，从启动器打开终端（它就停在这个文件夹），运行 "
        f'cp ".ipynb_checkpoints/{stem}-checkpoint.ipynb" "{stem}-恢复.ipynb"，'
        "打开复制出的文件确认作答都在，再把作答抄进发布版的 notebook 后提交；副本也打不开时，"
        f"{CONTACT}"
    )


def empty_file(name: str) -> str:
    return f"{name} 是空文件。{_damaged(name)}"


def not_json(name: str, err: Exception) -> str:
    return f"{name} 不是合法的 JSON（{err}），无法作为 notebook 打开。{_damaged(name)}"


def not_notebook(name: str, message: str) -> str:
    return f"{name} 不是合法的 notebook（{message}），可能被别的编辑器改过：请把作答复制进发布版的 notebook 后重新提交"


def bad_metadata(cells: list[str]) -> str:
    where = "、".join(cells)
    return f"第 {where} 个单元格的评分元数据不对（类型、名称或重复），已当作未标记的单元格（评分单元格按发布版恢复）"


def cells_restored(grade_ids: list[str]) -> str:
    return f"删除了或取消了标记的单元格 {', '.join(grade_ids)}：已按发布版恢复后评分"


def locked_cells_edited(grade_ids: list[str]) -> str:
    return f"修改了只读单元格 {', '.join(grade_ids)}：已恢复原文后评分"


def metadata_changed(grade_ids: list[str]) -> str:
    return f"改动了单元格 {', '.join(grade_ids)} 的评分元数据（分值或标记）：已恢复"


def cells_added(count: int) -> str:
    return f"新增了 {count} 个单元格：它们会照常运行，但不计分"


def cells_reordered() -> str:
    return "课程单元格的顺序被改动过，评分时已恢复为发布时的顺序（你加的单元格跟在它前面的课程单元格后面）"


def unmarked_tests_dropped(count: int) -> str:
    return f"{count} 个没有评分标记的测试单元格（%%ch4test）不计分，评分时没有运行"


# —— the run: what happened in the kernel ——
KERNEL_DIED = "内核在运行中崩溃（例如 os._exit、段错误或内存耗尽），没有得到成绩"
WORKER_DIED = "评分进程意外退出，没有得到成绩"
NOT_ANSWERED = "作答区还没有作答（仍是 raise NotImplementedError()）"


def nbgrader_failed(last_line: str) -> str:
    return f"nbgrader 无法评分：{last_line or '未知原因'}；{CONTACT}"


def cell_timed_out(grade_id: str | None, seconds: int) -> str:
    return f"单元格 {grade_id or '一个未标记的单元格'} 超过 {seconds} 秒未结束，已被中断（可能有死循环）"


def cell_stuck(grade_id: str | None, seconds: int) -> str:
    return (
        f"单元格 {grade_id or '一个未标记的单元格'} 超过 {seconds} 秒未结束，中断也停不下它：内核已重启，"
        "它之前的代码单元格重新运行过，它自己定义的东西都不在了"
    )


def test_stopped(seconds: float) -> str:
    """What a test cell the kernel stopped at its time limit shows (its verdict says the rest)."""
    return f"⏱ 已停止：超过这个测试的时间上限 {seconds:g} 秒"


def answer_raised(name: str, value: str) -> str:
    marker = "Traceback (most recent call last):"  # JAX puts a host callback's whole traceback in the value
    if marker in value:
        value = value[: value.index(marker) + len(marker)]
    said = " ".join(value.split())  # one line in the table: NumPy's padded, wrapped array rows folded
    return f"作答区运行时报错：{name}: {said[:120]}"


def output_trimmed(max_chars: int) -> str:
    return f"输出过长（单个输出超过 {max_chars} 字符，或单元格输出过多）：反馈中已截断"


def ceiling_reached(seconds: float) -> str:
    return f"超过每份提交 {seconds:.0f} 秒的时间上限，已终止（可能有死循环）"


def feedback_failed(reason: str) -> str:
    return f"未能生成 HTML 反馈：{reason}"


# —— verdicts: judged outside the kernel, on the programs it exported ——
ASSERTION_FAILED = "断言失败"


def anomalies_found(anomalies: list[str]) -> str:
    """Outputs only code writing its own could leave: a person looks; no test gained anything by it."""
    found = "；".join(anomalies)
    gained = "只会让相应测试拿不到分，不会加分"
    return f"提交的 notebook 里有评分程序没有采用的程序输出（{gained}）：{found}。如有疑问{CONTACT}"


def programs_refused(refused: list[str]) -> str:
    shown = "；".join(refused[:5]) + ("；……" if len(refused) > 5 else "")
    return f"评分程序没有运行 {len(refused)} 个导出的程序（不在允许的操作范围内），相应测试不得分：{shown}"


HIDDEN_OUTPUT_DROPPED = "（隐藏测试运行期间作答代码的输出不在反馈中显示。）"


def verdict_line(passed: bool, points: float, max_points: float, message: str) -> str:
    if passed:
        return f"评分程序判定：✅ 通过（{points:g} / {max_points:g} 分）\n"
    return f"评分程序判定：❌ 未通过（0 / {max_points:g} 分）：{message or '见上方说明'}\n"


def tests_failed(tests: list[str]) -> str:
    return f"未通过的测试：{', '.join(tests)}（原因写在各测试单元格下方）"


def test_timed_out(test: str, seconds: float) -> str:
    """A test stopped at its own time limit (grader/course.py `time_limit`): in the kernel while it
    exported, or in the judge while its verdict ran."""
    return (
        f"测试 {test} 超过了它的时间上限 {seconds:g} 秒，已停止：这个测试不得分。"
        "请检查作答里是否有死循环；是否有很长的 Python for 循环（jax.jit 追踪时会逐次展开，编译很慢，"
        "可改用 jax.lax.scan、jax.lax.fori_loop 或向量化写法）；或者计算量远超题目所需"
    )


JUDGE_DIED = "运行导出的程序时评分进程终止了（例如超出内存上限），这个测试没有判定"


# No count in these two: the answer steers how many payloads a cell prints, and a count could spell
# a size drawn for a hidden test.
def programs_outside_tests() -> str:
    return "测试单元格以外的单元格输出了导出的程序"


def programs_repeated(test: str) -> str:
    return f"测试 {test} 输出了不止一份导出的程序（只应有一份），都没有采用"


def programs_malformed(test: str) -> str:
    return f"测试 {test} 的导出输出格式不对或过大，没有采用"


# —— the report ——
def notes_title(student: str, assignment: str) -> str:
    return f"评分说明（{student} / {assignment}）"


RESUBMIT = "请按说明修正后重新提交。"


# —— the coordinator: what came back from the cluster ——
def result_refused() -> str:
    return f"评分集群返回的结果格式不对，已拒收（result refused），本作业记 0 分；{CONTACT}"
