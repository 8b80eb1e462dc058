"""Shared fixtures. Every test runs headless on CPU (the Makefile exports the same)."""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("MPLBACKEND", "Agg")
