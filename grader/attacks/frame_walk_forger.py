"""Attack: reach the interpreter's builtins through a generator's frame (no underscore name, no
import spelled), import the kit and replace its evidence helper with one that reports a perfect
answer."""
# base: softplus wrong_naive_forward
# layers: guard
# Before the answer guard this scored 14/14 with no softplus_prod defined and no flag.
import numpy as np


def perfect(test_id, compute):
    return {"error": None, "is_custom_vjp": True, "y": np.zeros(0), "g": np.zeros(0)}


try:
    kit = (step for step in [0]).gi_frame.f_builtins["__import__"]("ch4check")
    kit.collect = perfect
    print("REPLACED the kit's collect")
except Exception as refused:
    print("refused:", refused)
