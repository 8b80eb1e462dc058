"""One sandboxed kernel session (not a test module: a helper that tests/test_sandbox_limits.py
and tests/test_forked_kernels.py share)."""

import asyncio
import queue
import time
from dataclasses import dataclass

from grader import sandbox


@dataclass
class Session:
    stdout: str  # what the code printed
    errors: str  # the traceback, if it raised
    km: sandbox.SandboxKernelManager
    alive: bool  # whether the kernel was alive once the code finished (or died)


def kernel_session(code: str, timeout: float = 120) -> Session:
    """Start a SandboxKernelManager kernel, run `code`, shut the kernel down."""
    return asyncio.run(_session(code, timeout))


async def _session(code: str, timeout: float) -> Session:
    km = sandbox.SandboxKernelManager(kernel_name="python3")
    await km.start_kernel()
    kc = km.client()
    kc.start_channels()
    printed, errors = [], []
    try:
        await kc.wait_for_ready(timeout=60)
        msg_id = kc.execute(code)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and await km.is_alive():
            try:
                msg = await kc.get_iopub_msg(timeout=0.5)
            except queue.Empty:
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "stream" and msg["content"]["name"] == "stdout":
                printed.append(msg["content"]["text"])
            if msg["msg_type"] == "error":
                errors.append("\n".join(msg["content"]["traceback"]))
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
        alive = await km.is_alive()
    finally:
        kc.stop_channels()
        await km.shutdown_kernel(now=True)
    return Session("".join(printed), "".join(errors), km, alive)
