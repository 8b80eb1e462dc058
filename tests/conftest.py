"""Shared fixtures. Every test runs headless on CPU (the Makefile exports the same).

The servers that several modules grade on are started once per pytest worker (session scope;
`make test` groups the modules that use them with `pytest.mark.xdist_group("cluster")`, so one
worker starts them): Debian's PostgreSQL and a grading cluster of `python -m grader scheduler`
and `python -m grader worker` with two processes. A test that kills one of its workers waits
for the cluster to settle again (`helpers.settle`).

The demo class is graded once per run (`demo_run`, tests/demo_run.py): the class report's, the
feedback page's and the self-proof's pipeline tests read it, all in its xdist group (collection
stops if one is not).

`pytest --reverse` runs the tests in reverse order: no test may depend on another having run first.
"""

import os

import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("MPLBACKEND", "Agg")


def pytest_addoption(parser):
    parser.addoption("--reverse", action="store_true", help="run the tests in reverse order (order independence)")


def pytest_collection_modifyitems(config, items):
    # The website's tests go last: they render the notebooks that test_notebooks.py executes
    # (build/executed/), so a run that has executed them already builds without a kernel. Any
    # order still passes: the book executes a missing or stale notebook itself.
    items.sort(key=lambda item: item.path.name == "test_book.py")
    # A test that reads the demo run outside its group would grade the class again, silently.
    from demo_run import GROUP

    strays = [
        item.nodeid
        for item in items
        if "demo_run" in getattr(item, "fixturenames", ())
        and GROUP not in {mark.args[0] for mark in item.iter_markers("xdist_group")}
    ]
    if strays:
        raise pytest.UsageError(f"these read demo_run outside pytest.mark.xdist_group({GROUP!r}): {strays}")
    if config.getoption("--reverse"):
        items.reverse()


@pytest.fixture(scope="session")
def postgres_server():
    """One PostgreSQL server; each user makes a database of its own (`postgres_server.database(name)`)."""
    from helpers import postgres

    with postgres() as server:
        yield server


@pytest.fixture(scope="session")
def grading_cluster(tmp_path_factory):
    """One Dask scheduler and `python -m grader worker` with two processes, over mutual TLS."""
    from helpers import dask_cluster

    with dask_cluster(tmp_path_factory.mktemp("grading-cluster")) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory):
    """The demo class and the students tests/demo_run.py adds, graded once with `python -m grader grade`."""
    from demo_run import grade_the_demo_class

    return grade_the_demo_class(tmp_path_factory)
