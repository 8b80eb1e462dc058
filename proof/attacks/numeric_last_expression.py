"""Attack: end every later cell with a number, which nbgrader's own rule takes as partial credit
(1.0: no test cell is worth less, so nbgrader accepts it for every one)."""
# base: residuals wrong_grad_missing_cos
# class: nbgrader's partial credit
# With a number above a cell's points (100.0) nbgrader refuses the whole notebook: 0, a loss only.
import ast


class _AppendScore(ast.NodeTransformer):
    def visit_Module(self, node):
        node.body.append(ast.Expr(ast.Constant(1.0)))
        return ast.fix_missing_locations(node)


get_ipython().ast_transformers.append(_AppendScore())  # noqa: F821 - the kernel's
