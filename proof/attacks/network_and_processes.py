"""Attack: reach the network, and kill the grader and every other process it can see."""
# base: residuals wrong_grad_missing_cos
# class: network and processes
# run: cluster
import os
import signal
import socket

for _host, _port in (("127.0.0.1", 22), ("127.0.0.1", 8888), ("1.1.1.1", 53), ("10.0.0.1", 80)):
    try:
        socket.create_connection((_host, _port), timeout=1).close()
        print("CONNECTED", _host, _port)
    except OSError:
        pass
for _pid in [int(p) for p in os.listdir("/proc") if p.isdigit()] + [os.getppid()]:
    if _pid not in (os.getpid(), 0):
        try:
            os.kill(_pid, signal.SIGKILL)
            print("KILLED", _pid)
        except OSError:
            pass
