"""What a student sees while working (no grader involved): the test cells run in their own
namespace, say ✅ when they pass, and a rule the answer breaks is reported at once, in the answer
cell and in every test, with the same words the grader would use."""

import pytest
from nbclient import NotebookClient

from grader import answers, course, nbtools

pytestmark = pytest.mark.xdist_group("student-view")


def run(answer: str):
    nb = answers.with_answer(answers.release_notebook("softplus"), answer)
    NotebookClient(
        nb, extra_arguments=course.KERNEL_ARGS, kernel_name="python3", allow_errors=True, timeout=120
    ).execute()
    outputs = {}
    for cell in nb.cells:
        if cell.cell_type == "code":
            gid = cell.metadata.get("nbgrader", {}).get("grade_id")
            outputs[gid] = "\n".join(o.get("text", "") or f"{o.get('ename')}: {o.get('evalue')}" for o in cell.outputs)
    return outputs


@pytest.fixture(autouse=True)
def headless(monkeypatch):
    for key, value in nbtools.HEADLESS_ENV.items():
        monkeypatch.setenv(key, value)


def test_passing_tests_say_so():
    outputs = run(answers.reference_answer("softplus"))
    assert "✅ test_custom_vjp 通过" in outputs["test_custom_vjp"]
    assert "✅ test_visible_values 通过" in outputs["test_visible_values"]
    assert "隐藏测试：评分时才运行" in outputs["test_hidden_forward"]
    assert "⚠️" not in outputs["answer"]


def test_a_broken_rule_is_reported_before_handing_in():
    outputs = run(answers.reference_answer("softplus") + "\nimport os\n")
    assert "没有遵守作答规则" in outputs["answer"] and "导入了 os" in outputs["answer"]
    for test in ("test_custom_vjp", "test_visible_values", "test_visible_jit_vmap"):
        assert "AssertionError: 作答区没有遵守作答规则" in outputs[test], outputs[test]


def test_redefined_test_names_do_not_reach_the_tests():
    """An answer that redefines collect, isinstance and np still meets the real tests."""
    wrong = next(e for e in answers.entries("softplus") if e.slug == "naive_forward").answer
    forger = """
def collect(*args, **kwargs):
    return {"error": None, "is_custom_vjp": True, "y": [0.0] * 9, "g": [0.0] * 9}


def isinstance(*args):
    return True
"""
    outputs = run(wrong + forger)
    assert "✅ test_custom_vjp 通过" in outputs["test_custom_vjp"]  # it is a custom_vjp
    assert "AssertionError" in outputs["test_visible_values"], outputs["test_visible_values"]  # overflow at 1000
