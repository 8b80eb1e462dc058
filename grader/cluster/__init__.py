"""Where tasks run: Dask, local or on the instructor's machines, over mutual TLS, no HTTP."""
