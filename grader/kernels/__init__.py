"""Where student code runs: sandboxed kernels and judges, forked from a pre-imported server."""
