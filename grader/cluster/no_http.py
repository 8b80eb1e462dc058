"""A Dask preload (`--preload grader.cluster.no_http`) for every scheduler and worker of the grading cluster.

Dask starts a plain-HTTP server in each scheduler and worker, whatever `--no-dashboard` says:
info pages (workers, tasks, logs, call stacks), metrics and health checks, with no
authentication. This stops it as the node starts, so a node listens for nothing but its mutual
TLS address. Until then it listens on loopback only (every command binds it there).
"""


def dask_setup(server) -> None:
    server.http_server.stop()
