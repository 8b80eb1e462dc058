"""The kernel manager of every graded kernel, for jupyter_client and nbgrader.

`SandboxKernelManager` starts each kernel in a sandbox of its own (grader/kernels/sandbox.py),
forked from the pre-imported server through `ForkProvisioner` where that works
(grader/kernels/forkserver.py), cold under bubblewrap elsewhere. `PromptClient`, the client of
every sandboxed kernel (forked or cold), stops waiting for a new kernel as soon as it has
answered. `autograde_preprocessors()` puts the manager into nbgrader's Execute step.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
import uuid
from pathlib import Path
from queue import Empty

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager
from jupyter_client.provisioning import LocalProvisioner
from nbgrader.preprocessors import Execute

from grader.kernels import execute, forkserver, sandbox


class ForkProvisioner(LocalProvisioner):
    """Starts the kernel through the fork server inside the manager's Box."""

    async def launch_kernel(self, cmd: list[str], **kwargs):
        box, argv = self.parent.box, cmd[cmd.index("ipykernel_launcher") + 1 :]
        env_file = box.folder / forkserver.ENV_FILE
        env_file.write_text(json.dumps(sandbox.kernel_env(kwargs.get("env") or dict(os.environ))))
        env_file.chmod(0o600)  # root's: the kernel reads it before it becomes nobody
        placeholder = forkserver._placeholder(box)
        try:
            request = await asyncio.to_thread(forkserver._request, box, placeholder)
            pidfd = await asyncio.to_thread(forkserver.ForkServer.fork, {**request, "argv": argv})
        except BaseException:
            forkserver._end(placeholder)
            raise
        self.process = forkserver.ForkedKernel(pidfd, placeholder)
        self.pid, self.pgid = self.process.pid, None
        await self._sockets_bound()
        return self.connection_info

    async def _sockets_bound(self) -> None:
        """Return once the kernel listens: a client that connects earlier waits ZeroMQ's reconnect
        interval, and a forked kernel is ready sooner than that."""
        info = self.connection_info
        channels = ("shell", "iopub", "stdin", "control", "hb")
        sockets = [Path(f"{info['ip']}-{info[f'{name}_port']}") for name in channels]
        while self.process.poll() is None and not all(path.exists() for path in sockets):
            await asyncio.sleep(0.005)

    async def _exited(self) -> None:
        if self.process.poll() is None:
            loop = asyncio.get_running_loop()
            done = loop.create_future()
            loop.add_reader(self.process.pidfd, lambda: done.done() or done.set_result(None))
            try:
                await done
            finally:
                loop.remove_reader(self.process.pidfd)

    async def kill(self, restart: bool = False) -> None:
        if self.process is not None:
            self.process.kill()
            # Wait, so the manager's first poll sees it gone; on a loaded machine a sandbox can take
            # longer to end, and a time-out raised here failed the whole notebook (nbgrader: 0 points).
            # jupyter_client waits again, and wait() below until it has ended.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._exited(), timeout=5)

    async def wait(self) -> int | None:
        if self.process is None:
            return 0
        await self._exited()
        self.process.close()
        self.process = None
        return -signal.SIGKILL

    async def cleanup(self, restart: bool = False) -> None:
        if self.process is not None:
            await self.kill()
            await self.wait()
        await super().cleanup(restart=restart)


class PromptClient(AsyncKernelClient):
    """A kernel client whose wait_for_ready ends when the kernel has answered, not after
    jupyter_client's 0.2 s of IOPub silence: IOPub is ordered, so once the status of our
    kernel_info request is idle, every message of the kernel's start has arrived."""

    async def wait_for_ready(self, timeout: float | None = None) -> None:
        deadline = time.monotonic() + (timeout if timeout is not None else float("inf"))
        while time.monotonic() < deadline:
            asked = self.kernel_info()
            try:
                while time.monotonic() < deadline:
                    reply = await self.shell_channel.get_msg(timeout=1)
                    if reply["parent_header"].get("msg_id") == asked:
                        break
                while time.monotonic() < deadline:
                    msg = await self.iopub_channel.get_msg(timeout=1)
                    if msg["parent_header"].get("msg_id") == asked and msg["content"].get("execution_state") == "idle":
                        self._handle_kernel_info_reply(reply)
                        return
            except Empty:  # not answered yet, or IOPub joined after the status went out: ask again
                if not await self._async_is_alive():
                    raise RuntimeError("Kernel died before replying to kernel_info") from None
        raise RuntimeError(f"Kernel didn't respond in {timeout} seconds")


class SandboxKernelManager(AsyncKernelManager):
    """A kernel in bubblewrap and its own cgroups, reached over Unix sockets in its private folder."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.client_factory = PromptClient
        self.box = sandbox.Box(require=sandbox.limits())
        self.sandbox_folder = self.box.folder
        self.transport = "ipc"
        self.ip = str(self.sandbox_folder / "zmq")
        self.connection_file = str(self.sandbox_folder / "connection.json")

    @property
    def kernel_spec(self):
        spec = super().kernel_spec
        if spec is not None:
            # The kernel is in its own session and PID namespace: a signal to our process group
            # would not reach it, so interrupts (cell time-outs) travel as messages.
            spec.interrupt_mode = "message"
        return spec

    def write_connection_file(self, **kwargs):
        super().write_connection_file(**kwargs)
        if sandbox._as_root():
            os.chown(self.connection_file, sandbox.NOBODY, sandbox.NOBODY)

    async def _async_pre_start_kernel(self, **kw):
        if self.provisioner is None and forkserver.available():
            self.kernel_id = self.kernel_id or kw.pop("kernel_id", str(uuid.uuid4()))
            spec = self.kernel_spec
            self.provisioner = ForkProvisioner(kernel_id=self.kernel_id, kernel_spec=spec, parent=self)
        return await super()._async_pre_start_kernel(**kw)

    def format_kernel_cmd(self, extra_arguments=None):
        cmd = super().format_kernel_cmd(extra_arguments)
        if isinstance(self.provisioner, ForkProvisioner):
            return cmd  # the provisioner starts the sandbox itself
        return self.box.command(dict(os.environ)) + cmd

    async def start_kernel(self, **kw):
        try:
            await super().start_kernel(**kw)
        except BaseException:
            self.box.close()  # nbclient cleans up only kernels that started
            raise

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        if not restart:
            self.box.close()


class SandboxExecute(execute.RestartStuckKernel, execute.TestTimeLimit, execute.OutputCap, Execute):
    """nbgrader's Execute step with sandboxed kernels (nbgrader passes its own manager class
    as an argument, which configuration cannot override), capped outputs, each test cell's time
    limit, and a restart past a cell that no interrupt stops."""

    def __init__(self, *args, **kwargs):
        kwargs["kernel_manager_class"] = SandboxKernelManager
        super().__init__(*args, **kwargs)


def autograde_preprocessors() -> list:
    """nbgrader's autograde steps, with Execute sandboxed (and capped)."""
    return execute.autograde_preprocessors(SandboxExecute)
