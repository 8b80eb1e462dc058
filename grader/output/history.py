"""Every grading run kept (#52 item 5): its scores and the answers that looked copied, in the
gradebook's database beside nbgrader's own tables (SQLite under OUT_DIR, or the --db server).

A regrade replaced a score without a trace, and a "looks copied" pair that a changed answer no
longer showed vanished from the report. Each run now adds one row to `ch4_runs` (when it
finished), one per row of grades.csv to `ch4_scores` (score and maximum, None where not graded)
and one per listed pair to `ch4_similar`; nothing is ever updated or deleted. grades.csv and the
other CSVs hold the latest scores; the class report shows what changed since the run before
(`changes`). Here are the tables and what the report reads; grader/pipeline/store.py alone
writes them.
"""

from __future__ import annotations

import datetime

import sqlalchemy as sa

META = sa.MetaData()
RUNS = sa.Table(
    "ch4_runs",
    META,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("finished", sa.String(40), nullable=False),  # ISO 8601 in UTC
)
SCORES = sa.Table(
    "ch4_scores",
    META,
    sa.Column("run", sa.Integer, sa.ForeignKey("ch4_runs.id"), primary_key=True),
    sa.Column("student", sa.Text, primary_key=True),
    sa.Column("assignment", sa.Text, primary_key=True),
    sa.Column("score", sa.Float, nullable=True),  # None: not graded (grades.csv leaves it blank)
    sa.Column("max_score", sa.Float, nullable=True),
    sa.Column("flags", sa.Text, nullable=False),
)
SIMILAR = sa.Table(
    "ch4_similar",
    META,
    sa.Column("run", sa.Integer, sa.ForeignKey("ch4_runs.id"), primary_key=True),
    sa.Column("assignment", sa.Text, primary_key=True),
    sa.Column("first", sa.Text, primary_key=True),
    sa.Column("second", sa.Text, primary_key=True),
    sa.Column("similarity", sa.Float, nullable=False),
)


def now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def _runs(db) -> list[tuple[int, str]]:
    return [tuple(row) for row in db.execute(sa.select(RUNS.c.id, RUNS.c.finished).order_by(RUNS.c.id))]


def _scores(db, run: int) -> dict[tuple[str, str], dict]:
    query = sa.select(SCORES).where(SCORES.c.run == run)
    return {
        (row.student, row.assignment): {"score": row.score, "max_score": row.max_score, "flags": row.flags}
        for row in db.execute(query)
    }


def changes(url: str, similar_now: list[dict]) -> dict | None:
    """What the last run changed: {"run": when it finished, "previous": when the run before it
    did (None for the first), "scores": each submission whose score or grading changed, was new or
    is gone, with "before" and "after" (None: not in that run), "pairs_gone": each pair an earlier
    run listed as looking copied that `similar_now` (this report's pairs, as
    classreport.summarise lists them) does not, with the last run that listed it}. None when no run
    is recorded (a gradebook from before #52)."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as db:
            if not sa.inspect(db).has_table(RUNS.name):
                return None
            runs = _runs(db)
            if not runs:
                return None
            (last, finished), previous = runs[-1], (runs[-2] if len(runs) > 1 else None)
            after, before = _scores(db, last), (_scores(db, previous[0]) if previous else {})
            listed = db.execute(
                sa.select(SIMILAR, RUNS.c.finished)
                .join(RUNS, SIMILAR.c.run == RUNS.c.id)
                .where(SIMILAR.c.run < last)
                .order_by(SIMILAR.c.run)
            ).all()
    finally:
        engine.dispose()
    rows = []
    for key in sorted(set(before) | set(after)) if previous else []:
        old, new = before.get(key), after.get(key)
        if _score(old) != _score(new):
            rows.append({"student": key[0], "assignment": key[1], "before": old, "after": new})
    now_listed = {(p["assignment"], *p["students"]) for p in similar_now}
    gone = {}
    for row in listed:  # the last run that listed each pair wins
        key = (row.assignment, row.first, row.second)
        if key not in now_listed:
            gone[key] = {"assignment": key[0], "students": [key[1], key[2]], "similarity": row.similarity,
                         "listed": row.finished}  # fmt: skip
    return {
        "run": finished,
        "previous": previous[1] if previous else None,
        "scores": rows,
        "pairs_gone": sorted(gone.values(), key=lambda p: (p["assignment"], p["students"])),
    }


def _score(entry: dict | None) -> tuple | None:
    return None if entry is None else (entry["score"], entry["max_score"])


def shown_time(iso: str) -> str:
    """A recorded time for the page, in this machine's time zone: 2026-12-05 14:03 CET."""
    return datetime.datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M %Z")
