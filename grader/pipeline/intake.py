"""What happens to a submission before any kernel sees it: pure checks on files and notebooks.

`receive` never raises. A folder that holds nothing gradable (no notebook, an empty file,
invalid JSON, a symbolic link) gets a reason and a 0; a notebook gets its metadata checked,
copies of course cells dropped, deleted locked cells put back and the course cells put back in
their released order, and what the student changed noted (never held against them). The
student's own cells run as written: nothing the kernel does decides a score (grader/README.md).
"""

from __future__ import annotations

import copy
import datetime
import hashlib
import json
import warnings
from pathlib import Path

import nbformat
from ch4protocol import TEST_MAGIC
from nbformat.corpus.words import generate_corpus_id

from grader import course, messages


def receive(folder: Path, assignment: str, release) -> tuple[object | None, list[str], list[str]]:
    """(notebook to grade or None, notes, flags) for one submission. Never raises: whatever a
    submission holds, the worst it gets is a 0 with the reason, and the class goes on."""
    try:
        nb, notes = read_submission(folder, assignment, release)
    except Exception as err:  # noqa: BLE001 - one odd file must not stop the class
        return None, [messages.grader_failed("读取", err)], []
    return nb, notes, []


# nbgrader's cell metadata and the types it must have; a cell with anything else is unmarked.
NBGRADER_TYPES = {
    "grade_id": str,
    "grade": bool,
    "solution": bool,
    "locked": bool,
    "task": bool,
    "points": (int, float),
}


def _nbgrader_meta(cell) -> dict | None:
    meta = cell.get("metadata", {}).get("nbgrader")
    return meta if isinstance(meta, dict) else None


def _grade_ids(nb) -> dict[str, dict]:
    found = {}
    for cell in nb.cells:
        meta = _nbgrader_meta(cell)
        if meta is not None and "grade_id" in meta:
            found.setdefault(meta["grade_id"], {"meta": meta, "source": cell.source})
    return found


def _well_typed(meta: dict) -> bool:
    """Flags are real booleans, grade_id is text, points a number (and not a boolean)."""
    for key, kind in NBGRADER_TYPES.items():
        if key not in meta:
            continue
        value = meta[key]
        if (type(value) is bool) != (kind is bool) or not isinstance(value, kind):
            return False
    return True


def drop_malformed_metadata(nb, release) -> list[str]:
    """Unmark cells whose nbgrader metadata has the wrong types (a list as grade_id, text as
    points), a grade_id the release does not have, or one seen before in the notebook: nbgrader
    then restores the real cell from the release, as for a deleted one."""
    known, seen, dropped = set(_grade_ids(release)), set(), []
    for index, cell in enumerate(nb.cells):
        if "nbgrader" not in cell.get("metadata", {}):
            continue
        meta = _nbgrader_meta(cell)
        if meta is None or not _well_typed(meta) or meta.get("grade_id") not in known or meta["grade_id"] in seen:
            del cell.metadata["nbgrader"]
            dropped.append(str(index + 1))
        else:
            seen.add(meta["grade_id"])
    if not dropped:
        return []
    return [messages.bad_metadata(dropped)]


def compare_with_release(submitted, release) -> list[str]:
    """What the student changed that nbgrader will undo (reported, never held against them)."""
    notes = []
    theirs, ours = _grade_ids(submitted), _grade_ids(release)
    missing = [gid for gid in ours if gid not in theirs]
    if missing:
        notes.append(messages.cells_restored(missing))
    edited = [
        gid
        for gid, cell in ours.items()
        if gid in theirs and cell["meta"].get("locked") and theirs[gid]["source"] != cell["source"]
    ]
    if edited:
        notes.append(messages.locked_cells_edited(edited))
    keys = ("grade", "solution", "locked", "points")
    retagged = [
        gid
        for gid, cell in ours.items()
        if gid in theirs and any(theirs[gid]["meta"].get(k) != cell["meta"].get(k) for k in keys)
    ]
    if retagged:
        notes.append(messages.metadata_changed(retagged))
    added = sum(1 for c in submitted.cells if _nbgrader_meta(c) is None)
    if added:
        notes.append(messages.cells_added(added))
    return notes


def drop_unmarked_course_cells(nb, release) -> list[str]:
    """Unmarked copies of the course's locked cells, and unmarked `%%ch4test` cells (a copied or
    edited test, or one whose metadata was lost), are not the student's answer and cannot earn
    points: they are left out, and the locked cells are restored as released."""
    ours = {c.source.strip() for c in release.cells if (_nbgrader_meta(c) or {}).get("locked")}
    kept, tests = [], 0
    for cell in nb.cells:
        source = cell.source.strip()
        if _nbgrader_meta(cell) is None and (source in ours or source.startswith(TEST_MAGIC)):
            tests += source not in ours
            continue
        kept.append(cell)
    nb.cells = kept
    return [messages.unmarked_tests_dropped(tests)] if tests else []


def restore_locked_cells(nb, release) -> None:
    """Put back the locked cells a student deleted or unmarked: after the release cell before
    them, or at the end when that one (the answer) is missing too, so tests still come last.
    nbgrader would restore them as well, but with a comment line above the source, and a test
    cell's first line must stay `%%ch4test`."""
    present = set(_grade_ids(nb))
    cursor = 0
    for cell in release.cells:
        meta = _nbgrader_meta(cell) or {}
        if "grade_id" not in meta:
            continue
        if meta["grade_id"] in present:
            ids = [(_nbgrader_meta(c) or {}).get("grade_id") for c in nb.cells]
            cursor = ids.index(meta["grade_id"]) + 1
        elif meta.get("locked"):
            restored = copy.deepcopy(cell)
            restored["id"] = generate_corpus_id()  # the student may have kept a cell with the old id
            nb.cells.insert(cursor, restored)
            cursor += 1
        else:
            cursor = len(nb.cells)  # the answer lost its marking: whatever follows goes after it


def restore_release_order(nb, release) -> list[str]:
    """Put the course's cells back in their released order; each cell the student added stays
    right after the course cell it followed. So a test cell runs where it was released, after
    the answer and before the tests that come after it."""
    order = {gid: i for i, gid in enumerate(_grade_ids(release))}
    groups, anchor = {-1: []}, -1
    for cell in nb.cells:
        gid = (_nbgrader_meta(cell) or {}).get("grade_id")
        if gid in order:
            anchor = order[gid]
            groups[anchor] = [cell]  # grade ids are unique by now (drop_malformed_metadata)
        else:
            groups[anchor].append(cell)
    ordered = [cell for key in sorted(groups) for cell in groups[key]]
    if [id(c) for c in ordered] == [id(c) for c in nb.cells]:
        return []
    nb.cells = ordered
    return [messages.cells_reordered()]


def read_submission(folder: Path, assignment: str, release) -> tuple[object | None, list[str]]:
    """(notebook, notes), or (None, notes) when nothing gradable was handed in."""
    expected = f"{assignment}.ipynb"
    if folder.is_symlink():
        return None, [messages.folder_is_link(folder.name)]
    notebooks = sorted(p for p in folder.glob("*.ipynb") if not p.name.startswith("."))
    path = folder / expected
    notes = []
    if not path.exists():
        if len(notebooks) != 1:
            return None, [messages.notebook_missing(expected, [p.name for p in notebooks])]
        path = notebooks[0]
        notes.append(messages.renamed(expected, path.name))
    if path.is_symlink() or not path.is_file():
        return None, notes + [messages.file_is_link(path.name)]
    extra = extra_notebooks(folder, assignment)
    if extra:
        notes.append(messages.extra_notebooks(path.name, expected, extra))
    raw = path.read_bytes()
    if not raw.strip():
        return None, notes + [messages.empty_file(path.name)]
    try:
        json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        return None, notes + [messages.not_json(path.name, err)]
    try:
        with warnings.catch_warnings():  # old notebooks without cell ids are fine to grade
            warnings.simplefilter("ignore")
            nb = nbformat.reads(raw.decode("utf-8"), as_version=4)
            nbformat.validate(nb)
    except Exception as err:  # nbformat raises several classes; any of them means "not a notebook"
        message = (str(err).strip().splitlines() or [""])[0][:200]
        return None, notes + [messages.not_notebook(path.name, message)]
    notes += drop_malformed_metadata(nb, release)
    notes += drop_unmarked_course_cells(nb, release)
    notes += compare_with_release(nb, release)
    restore_locked_cells(nb, release)
    notes += restore_release_order(nb, release)
    return nb, notes


def extra_notebooks(folder: Path, assignment: str) -> list[str]:
    """The notebooks of a submission folder that are not graded (e.g. softplus-Copy1.ipynb beside
    softplus.ipynb, or one in a subfolder), as paths relative to it; hidden ones (.ipynb_checkpoints)
    left out. Empty when no notebook is graded: the note that says so already names them all."""
    if folder.is_symlink() or not folder.is_dir():
        return []
    found = sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*.ipynb")
        if not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )
    top = [name for name in found if "/" not in name]
    expected = f"{assignment}.ipynb"
    graded = expected if expected in top else (top[0] if len(top) == 1 else None)
    return [name for name in found if name != graded] if graded else []


def folder_digest(folder: Path) -> str:
    """What a submission folder holds (symbolic links count by where they point, unread)."""
    sha = hashlib.sha256()
    if folder.is_symlink():
        return hashlib.sha256(str(folder.readlink()).encode()).hexdigest()
    for path in sorted(p for p in folder.rglob("*") if p.is_symlink()):
        sha.update(str(path.relative_to(folder)).encode() + b"\0->" + str(path.readlink()).encode())
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
        sha.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return sha.hexdigest()


def nbgrader_files(folder: Path) -> dict[str, str]:
    """{name: text} of the course.NBGRADER_FILES a submission folder holds as short plain files."""
    found = {}
    for name in course.NBGRADER_FILES:
        path = folder / name
        try:
            if folder.is_symlink() or path.is_symlink() or not path.is_file() or path.stat().st_size > 1024:
                continue
            text = path.read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            continue
        if text and text.isprintable():
            found[name] = text
    return found


def newest_file_time(folder: Path) -> str:
    """When the newest file of a submission folder was written, as nbgrader writes a timestamp
    ("" when there is none: a link, an empty folder)."""
    if folder.is_symlink():
        return ""
    times = [p.lstat().st_mtime for p in folder.rglob("*") if p.is_file() and not p.is_symlink()]
    if not times:
        return ""
    return datetime.datetime.fromtimestamp(max(times), datetime.UTC).strftime("%Y-%m-%d %H:%M:%S.%f %Z")
