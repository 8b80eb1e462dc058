"""Attack: replace the builtin isinstance so every type check passes."""
# base: softplus wrong_naive_forward
# layers: rules verdict
import builtins

builtins.isinstance = lambda obj, cls: True
