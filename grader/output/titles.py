"""What each test checks, in the instructor's language (#52 item 6), for the class report: the
messages a test gives are the students' (Chinese, as they read them), so the report shows this
beside them. The English is marked here for the catalogue; its Chinese in grader/locale/ is the
test's own title in the exercise (tests/test_locale.py holds the two together, and requires a
title for every test cell of every assignment).
"""

from __future__ import annotations

from grader.i18n import N_, _

TITLES = {
    "clip_global_norm": {
        "test_custom_vjp": N_(
            "the gradient is rewritten by your own backward rule: identity forward, large cotangents scaled down"
        ),
        "test_visible_forward": N_(
            "the forward pass returns the parameters unchanged, called plainly and under differentiation"
        ),
        "test_visible_clip": N_(
            "a dict's cotangent above, below and at the threshold, and all zero; a nested list and tuple"
        ),
        "test_hidden_pytrees": N_(
            "drawn pytrees (mixed precision too), a namedtuple, an array: identity forward, clipping, zero cotangents"
        ),
        "test_hidden_optax": N_("a nonlinear model's gradients against optax.clip_by_global_norm's formula"),
        "test_hidden_which_norm": N_("the norm is taken of the cotangents, not of the parameters"),
        "test_hidden_global": N_("one global clip, not a clip per leaf"),
    },
    "coloring": {
        "test_f_penta": N_("the values of f_penta, both ends included"),
        "test_jacobian_penta": N_("the Jacobian of f_penta(v) + J v (bandwidth 2), also under jax.jit"),
        "test_jacobian_tridiag": N_("another tridiagonal function (bandwidth 1), at length n = 17"),
        "test_jvp_count": N_("in those two calls J is read only by one push of 2b+1 tangents with jax.vmap"),
        "test_too_few_colors": N_("too few colours must get entries inside the band wrong (a real compression)"),
        "test_hidden_penta_random": N_("f_penta and its Jacobian at a drawn length, and the tangents pushed"),
        "test_hidden_other_bands": N_("tridiagonal and heptadiagonal functions: result and tangents pushed"),
        "test_hidden_compression": N_("with too few colours, exactly the sum of the columns of one colour"),
    },
    "ode_adjoint": {
        "test_interface": N_("the globals N_STEPS = 100 and T_END = 1.0"),
        "test_forward": N_("z(T) against a precise reference, and against float64 RK4 with 100 steps at a large ‖W‖"),
        "test_gradients": N_(
            "the VJP for two cotangents: the adjoint, unrolled RK4 differentiated, a float64 reference"
        ),
        "test_method": N_(
            "the adjoint's point: equal memory at two step counts, the steps done, work at most 40 times RK4"
        ),
        "test_hidden_forward": N_("z(T) on random inputs at another dimension"),
        "test_hidden_rk4": N_("z(T) at ‖W‖ near 10 against float64 RK4 with 100 steps"),
        "test_hidden_vjp": N_("the VJP on random inputs and cotangents"),
        "test_hidden_method": N_("at another dimension and step count: equal memory, the steps done, the work"),
    },
    "residuals": {
        "test_visible_value_grad": N_(
            "values (under differentiation and called plainly) and gradients at fixed inputs, VJPs, vmap(grad)"
        ),
        "test_visible_residuals": N_(
            "each variant keeps exactly the numbers it names, in any layout, and its backward pass uses them"
        ),
        "test_hidden_random": N_(
            "values and gradients on random inputs of a drawn length, and the plain calls' values"
        ),
        "test_hidden_cotangent": N_("a VJP with a random cotangent, and vmap(grad)"),
        "test_hidden_residuals": N_("on random inputs: exactly the kept numbers, and the backward pass uses them"),
    },
    "safe_norm": {
        "test_visible_scales": N_("value, gradient and JVP under differentiation, x scaled from 1e-18 to 1e19"),
        "test_visible_zero": N_(
            "value, gradient, JVP and jacfwd at zero; a batch with zero and sparse rows under vmap"
        ),
        "test_visible_check_grads": N_(
            "check_grads at nonzero points, a VJP with cotangent -2.5, a scaled JVP and a vector of length 1"
        ),
        "test_hidden_random": N_("at a drawn length: value, VJP, JVP, jacfwd, every scale and check_grads"),
        "test_hidden_zero": N_(
            "the zero vector at a drawn length; a batch of zero, sparse, tiny and huge rows under vmap"
        ),
    },
    "soft_values": {
        "test_values": N_("the accuracy of V* at γ = 0.5 and γ = 0.99 against a float64 reference"),
        "test_gradient": N_("the VJP in R, P and γ against the implicit function theorem in float64"),
        "test_method": N_(
            "implicit differentiation's point: backward work at most 40 times value iteration, backstops on memory"
        ),
        "test_hidden_values": N_("V* on random inputs of drawn sizes, γ near 1 and small"),
        "test_hidden_gradient": N_("the VJP in R, P and γ on random inputs and cotangents"),
        "test_hidden_method": N_("the same programs on random inputs: backward work, residuals and memory"),
    },
    "softplus": {
        "test_visible_values": N_(
            "values and gradients as the graded call computes them under differentiation, at fixed points"
        ),
        "test_visible_jit_vmap": N_("the same points under jax.jit(jax.vmap(...)): values and gradients"),
        "test_visible_cotangent": N_("the VJP is g·σ(x) for cotangents other than 1, zero included"),
        "test_hidden_forward": N_(
            "values under differentiation and called one number at a time, on random inputs of a drawn length"
        ),
        "test_hidden_gradient": N_("the gradient over the whole range, batched and one number at a time"),
        "test_hidden_cotangent": N_("the VJP for random cotangents, zero included"),
    },
    "stop_gradient": {
        "test_visible_values": N_("values and shapes at fixed inputs"),
        "test_visible_dx_zero": N_(
            "the derivative in x is exactly 0 in reverse mode (jax.vjp) and forward mode (jvp, jacfwd)"
        ),
        "test_visible_dw_jit": N_("at n = 4: a VJP with cotangent -1.5, the derivative in w, and vmap over w"),
        "test_hidden_values": N_("values at a drawn length, plain and under differentiation, and under vmap"),
        "test_hidden_dx_zero": N_("the derivative in x is exactly 0 in forward and reverse mode, at a drawn length"),
        "test_hidden_dw": N_("the derivative in w is 2 Σ xᵢ², in reverse mode (vmap too) and forward mode"),
    },
}


def title(assignment: str, test: str) -> str:
    """What `test` checks, in the instructor's language ("" for a test without a title here)."""
    english = TITLES.get(assignment, {}).get(test)
    return _(english) if english else ""
