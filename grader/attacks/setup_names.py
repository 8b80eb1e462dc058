"""Attack: use the modules the setup cell bound (jax, np) to change a global setting, load a
file and start a server, none of which an answer imports itself."""
# base: softplus wrong_naive_forward
# layers: rules verdict
for attempt in (
    lambda: jax.config.update("jax_enable_x64", True),  # noqa: F821 - the setup cell's jax
    lambda: np.load("/etc/passwd", allow_pickle=True),  # noqa: F821 - the setup cell's np
    lambda: jax.profiler.start_server(9999),  # noqa: F821
):
    try:
        attempt()
        print("done (inside its own kernel and sandbox only):", attempt)
    except Exception as refused:
        print("refused:", refused)
