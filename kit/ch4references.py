"""What the exercises' verdicts compare with: float64 references, inputs made for a test, and the
course's own JAX programs for the functions the exercises ask for (whose work a backward pass is
compared with, kit/ch4verdicts.py). Nothing here reads an answer's program; a test body reaches
these by name like the other verdict helpers (``ch4judge.VERDICT_HELPERS``)."""

import jax
import numpy as np

# ---------------------------------------------------------------------------------------------
# ode_adjoint: z(t) of dz/dt = tanh(W z), and its VJP, in float64; RK4 as a JAX program


def rk4_step(z, W, h):
    """One classical RK4 step of dz/dt = tanh(W z)."""
    k1 = np.tanh(W @ z)
    k2 = np.tanh(W @ (z + h / 2 * k1))
    k3 = np.tanh(W @ (z + h / 2 * k2))
    k4 = np.tanh(W @ (z + h * k3))
    return z + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def rk4_solve(z0, W, steps=100, t_end=1.0):
    """z(t_end) by `steps` classical RK4 steps, in float64."""
    z = np.asarray(z0, np.float64).copy()
    W = np.asarray(W, np.float64)
    for _ in range(steps):
        z = rk4_step(z, W, t_end / steps)
    return z


def _tanh_vjp(W, y, c):
    """The VJP of (y, W) ↦ tanh(W y) with cotangent c: (Wᵀ s, s yᵀ), s = c ⊙ sech²(W y)."""
    s = c * (1.0 - np.tanh(W @ y) ** 2)
    return W.T @ s, np.outer(s, y)


def rk4_vjp(z0, W, g, steps=100, t_end=1.0):
    """The VJP of the `steps`-step RK4 solver at (z0, W) with cotangent g, in float64: reverse mode
    through each step (what differentiating the unrolled solver gives, exactly)."""
    W, h = np.asarray(W, np.float64), t_end / steps
    zs = [np.asarray(z0, np.float64).copy()]
    for _ in range(steps):
        zs.append(rk4_step(zs[-1], W, h))

    dz, dW = np.asarray(g, np.float64).copy(), np.zeros_like(W)
    for z in reversed(zs[:-1]):
        k1 = np.tanh(W @ z)
        k2 = np.tanh(W @ (z + h / 2 * k1))
        k3 = np.tanh(W @ (z + h / 2 * k2))
        dk1, dk2, dk3, dk4 = h / 6 * dz, h / 3 * dz, h / 3 * dz, h / 6 * dz
        new = dz.copy()
        dy, dWi = _tanh_vjp(W, z + h * k3, dk4)
        new, dk3, dW = new + dy, dk3 + h * dy, dW + dWi
        dy, dWi = _tanh_vjp(W, z + h / 2 * k2, dk3)
        new, dk2, dW = new + dy, dk2 + h / 2 * dy, dW + dWi
        dy, dWi = _tanh_vjp(W, z + h / 2 * k1, dk2)
        new, dk1, dW = new + dy, dk1 + h / 2 * dy, dW + dWi
        dy, dWi = _tanh_vjp(W, z, dk1)
        dz, dW = new + dy, dW + dWi
    return dz, dW


def rk4_adjoint_vjp(z0, W, g, steps=100, t_end=1.0):
    """The VJP the exercise's continuous adjoint gives, in float64: `steps` classical RK4 steps on
    the augmented state (z, a, W̄) in reversed time, from (z(T), g, 0), z(T) by the same RK4. It
    differs from the unrolled solver's exact VJP (``rk4_vjp``) by the adjoint's own truncation
    error, which a few fast steps make far larger than float32's rounding."""
    W, h = np.asarray(W, np.float64), t_end / steps

    def slope(z, a, W_bar):  # (dz/ds, da/ds, dW̄/ds) = (-f, aᵀ∂f/∂z, aᵀ∂f/∂W)
        return (-np.tanh(W @ z), *_tanh_vjp(W, z, a))

    y = (rk4_solve(z0, W, steps, t_end), np.asarray(g, np.float64).copy(), np.zeros_like(W))
    for _ in range(steps):
        k1 = slope(*y)
        k2 = slope(*(v + h / 2 * k for v, k in zip(y, k1, strict=True)))
        k3 = slope(*(v + h / 2 * k for v, k in zip(y, k2, strict=True)))
        k4 = slope(*(v + h * k for v, k in zip(y, k3, strict=True)))
        y = tuple(v + h / 6 * (p + 2 * q + 2 * r + t) for v, p, q, r, t in zip(y, k1, k2, k3, k4, strict=True))
    return y[1], y[2]


def exact_vjp(z0, W, g, t_end=1.0):
    """The VJP of the ODE's exact flow at (z0, W) with cotangent g: the sensitivity equations
    integrated by SciPy's DOP853 with tight tolerances, in float64."""
    from scipy.integrate import solve_ivp

    z0, W, g = (np.asarray(a, np.float64) for a in (z0, W, g))
    d = z0.size

    def rhs(t, y):
        z, Sz, SW = y[:d], y[d : d + d * d].reshape(d, d), y[d + d * d :].reshape(d, d, d)
        u = W @ z
        s = 1.0 - np.tanh(u) ** 2
        J = s[:, None] * W
        dSW = np.einsum("il,ljk->ijk", J, SW)
        dSW[np.arange(d), np.arange(d), :] += s[:, None] * z[None, :]
        return np.concatenate([np.tanh(u), (J @ Sz).ravel(), dSW.ravel()])

    y = np.concatenate([z0, np.eye(d).ravel(), np.zeros(d**3)])
    y = solve_ivp(rhs, (0.0, t_end), y, method="DOP853", rtol=1e-11, atol=1e-12).y[:, -1]
    Sz, SW = y[d : d + d * d].reshape(d, d), y[d + d * d :].reshape(d, d, d)
    return Sz.T @ g, np.einsum("i,ijk->jk", g, SW)


def exact_solution(z0, W, t_end=1.0):
    """z(t_end) of dz/dt = tanh(W z) by DOP853 with tight tolerances, in float64."""
    from scipy.integrate import solve_ivp

    W64 = np.asarray(W, np.float64)
    z0 = np.asarray(z0, np.float64)
    return solve_ivp(lambda t, z: np.tanh(W64 @ z), (0.0, t_end), z0, method="DOP853", rtol=1e-12, atol=1e-12).y[:, -1]


def fast_rotations(rng, d, omega=10.0):
    """(z0, W) in float32 with ‖W‖ ≈ omega (h‖W‖ ≈ 0.1 for 100 steps at 10): W = Q·B·Qᵀ, B of 2×2 rotation
    blocks of angular frequency ω ∈ omega·[0.95, 1.05] (a 0 when d is odd), Q a random orthogonal matrix;
    z0 of radius c/ω in each plane (c ∈ [0.25, 0.35]), so tanh is nearly linear and the solution
    turns about 1.6 times in each plane. Measured on 500 draws (relative 2-norm error): float32
    RK4 is within 1.1e-6 of float64 RK4, far more accurate solutions (DOP853, 400-step RK4)
    within 1e-5; 100-step third-order schemes are 2.2e-4 off or more, second-order 1e-2, Euler 0.5."""
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    B, y0 = np.zeros((d, d)), np.zeros(d)
    c = rng.uniform(0.25, 0.35)
    for k in range(d // 2):
        w, angle = rng.uniform(0.95 * omega, 1.05 * omega), rng.uniform(0.0, 2.0 * np.pi)
        B[2 * k, 2 * k + 1], B[2 * k + 1, 2 * k] = -w, w
        y0[2 * k : 2 * k + 2] = c / w * np.array([np.cos(angle), np.sin(angle)])
    return (Q @ y0).astype(np.float32), (Q @ B @ Q.T).astype(np.float32)


def rk4_program(steps: int):
    """z0, W ↦ z(T) by `steps` RK4 steps in a lax.fori_loop: the reference whose work an adjoint's
    backward pass is compared with."""

    def solve(z0, W):
        h = 1.0 / steps

        def step(_, z):
            k1 = jax.numpy.tanh(W @ z)
            k2 = jax.numpy.tanh(W @ (z + h / 2 * k1))
            k3 = jax.numpy.tanh(W @ (z + h / 2 * k2))
            k4 = jax.numpy.tanh(W @ (z + h * k3))
            return z + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

        return jax.lax.fori_loop(0, steps, step, z0)

    return solve


# ---------------------------------------------------------------------------------------------
# residuals, clip_global_norm: inputs whose values tell the method apart


def sin2_inputs(rng, n: int) -> np.ndarray:
    """n float32 points spread over many periods whose sines and cosines are told apart by value:
    x = θ + qπ/2 + 2πk with θ on a shuffled grid in (0.1, 0.75), so that |sin x| and |cos x| are
    sin θ and cos θ in some order, 2n numbers at least 2.5e-4 apart (n ≤ 256): wherever an answer
    keeps them, each number it keeps is one of them, found by its value."""
    theta = 0.1 + (np.arange(n) + rng.uniform(0.25, 0.75, size=n)) * 0.65 / n
    x = rng.permutation(theta) + rng.integers(0, 4, size=n) * np.pi / 2 + rng.integers(-3, 4, size=n) * 2 * np.pi
    return x.astype(np.float32)


def tree_norm(tree) -> float:
    """The global L2 norm of a pytree, in float64."""
    return float(np.sqrt(sum(np.sum(np.asarray(v, np.float64) ** 2) for v in jax.tree_util.tree_leaves(tree))))


def scaled_to(tree, norm: float):
    """`tree` scaled to global norm `norm`, in float32."""
    factor = norm / tree_norm(tree)
    return jax.tree_util.tree_map(lambda v: (np.asarray(v, np.float64) * factor).astype(np.float32), tree)


# ---------------------------------------------------------------------------------------------
# soft_values: the soft Bellman equation V = T(V), T(V)_s = log Σ_a exp(R_sa + γ Σ_t P_sat V_t)


def soft_values64(R, P, gamma):
    """(V*, π) in float64: value iteration, then Newton's method on V - T(V) (soft policy
    iteration) until it stops moving: V* to about 1e-14 relative for γ ≤ 0.99."""
    R, P, gamma = np.asarray(R, np.float64), np.asarray(P, np.float64), float(gamma)
    V, eye = np.zeros(R.shape[0]), np.eye(R.shape[0])
    for k in range(300):
        Q = R + gamma * P @ V
        top = Q.max(axis=1)
        pi = np.exp(Q - top[:, None])
        T = top + np.log(pi.sum(axis=1))
        pi /= pi.sum(axis=1, keepdims=True)
        step = V - T if k < 200 else np.linalg.solve(eye - gamma * np.einsum("sa,sat->st", pi, P), V - T)
        V = V - step
        if k >= 200 and np.max(np.abs(step)) <= 1e-14 * max(1.0, np.max(np.abs(V))):
            break
    return V, pi


def soft_values_vjp64(R, P, gamma, g):
    """(R̄, P̄, γ̄) for the cotangent g of V*, by the implicit function theorem in float64: solve
    (I - γ P_π)ᵀ v = g at V* (∂T/∂V = γ P_π, P_π = Σ_a π_sa P_sa·), then pull v back through T's
    other arguments: R̄ = v π, P̄ = γ v π V*ᵀ, γ̄ = Σ_s v_s Σ_a π_sa (P V*)_sa."""
    P, gamma, g = np.asarray(P, np.float64), float(gamma), np.asarray(g, np.float64)
    V, pi = soft_values64(R, P, gamma)
    v = np.linalg.solve((np.eye(V.size) - gamma * np.einsum("sa,sat->st", pi, P)).T, g)
    weights = v[:, None] * pi
    return weights, gamma * weights[:, :, None] * V, float(np.sum(weights * (P @ V)))


def random_mdp(rng, states: int, actions: int, zeros: float = 0.0):
    """(R, P) in float32: rewards N(0, 1), each P[s, a] a random distribution over the states; with
    `zeros`, about that fraction of its entries 0 (one kept at least): the derivative of V* with
    respect to such an entry is not 0, so a backward pass that masks P's zeros shows."""
    R = rng.normal(size=(states, actions)).astype(np.float32)
    P = rng.dirichlet(np.ones(states), size=(states, actions))
    if zeros:
        P = np.where(rng.uniform(size=P.shape) < zeros, 0.0, P)
        P[..., 0] += np.sum(P, axis=-1) == 0
        P /= np.sum(P, axis=-1, keepdims=True)
    return R, P.astype(np.float32)


# Of the largest entry. At γ = 0.99 float32 reaches 1.4e-5 for V* and 5e-5 for the gradient (worst
# of 100 draws, every correct answer measured); central differences miss by 4e-3 or more.
def value_iteration(R, P, gamma):
    """V* by value iteration to float32 precision (the statement's stopping rule): the reference
    whose work implicit differentiation's backward pass is compared with."""

    def keep_going(state):
        V, previous, step = state
        return (
            jax.numpy.max(jax.numpy.abs(V - previous)) > 1e-7 * jax.numpy.maximum(1.0, jax.numpy.max(jax.numpy.abs(V)))
        ) & (step < 10_000)

    def bellman(values):  # soft maximum over the actions of reward plus discounted expected value
        expected = jax.numpy.einsum("sat,t->sa", P, values)
        return jax.nn.logsumexp(R + gamma * expected, axis=1)

    def advance(state):
        current, _, count = state
        return bellman(current), current, count + 1

    start = jax.numpy.zeros(R.shape[0], R.dtype)
    return jax.lax.while_loop(keep_going, advance, (bellman(start), start, 1))[0]


REFERENCES = (
    rk4_solve, rk4_vjp, rk4_adjoint_vjp, exact_vjp, exact_solution, fast_rotations, rk4_program,
    sin2_inputs, tree_norm, scaled_to, soft_values64, soft_values_vjp64, random_mdp, value_iteration,
)  # fmt: skip
