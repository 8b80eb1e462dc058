"""Probe: a correct answer that searches its whole kernel for the student's grading key, the
course's secret, the per-test seeds and the hidden inputs: the environment, every file it can
read, every object the garbage collector reaches (and what they hold), and the process's own
memory. It knows them only by their SHA-256, so it never puts them in memory itself; it prints
FOUND for anything that matches. The test writes them to a file in the kit's folder (which every
kernel may read) once the class's secret and this notebook exist: they cannot be in the notebook,
whose bytes choose the key."""
# base: residuals reference
# rides: reference
# class: the key and the hidden inputs in the kernel
import gc
import hashlib
import json
import os
import re
import sys
import warnings

import numpy as np

TARGETS_FILE = ""  # filled in by the test
TARGETS = {"text": [], "raw": [], "sizes": []}  # text: [sha256], raw: [(first 4 bytes as int, length, sha256)]
if TARGETS_FILE:
    with open(TARGETS_FILE) as handle:
        TARGETS.update(json.load(handle))
_HEX, _DEC = re.compile(rb"[0-9a-f]{64}"), re.compile(rb"(?<![0-9])[0-9]{12,20}(?![0-9])")


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class _Scan:
    def __init__(self, where):
        self.where, self.found, self.counts = where, [], {}

    def count(self, what, n=1):
        self.counts[what] = self.counts.get(what, 0) + n

    def text(self, data: bytes, place: str) -> None:
        """Every 64-hex-digit run and every run of digits in `data`, by hash."""
        wanted = set(TARGETS["text"])
        for pattern in (_HEX, _DEC):
            for match in pattern.finditer(data):
                if _digest(match.group(0)) in wanted:
                    self.found.append(f"{place}: {pattern.pattern!r} at {match.start()}")
        if _digest(data) in wanted:
            self.found.append(f"{place}: the whole value")

    def raw(self, data, place: str) -> None:
        """The hidden inputs' first bytes (and the seeds as 8-byte integers), anywhere in `data`:
        candidates by their first four bytes, then confirmed by the hash of the whole."""
        by_first = {}
        for first, length, digest in TARGETS["raw"]:
            by_first.setdefault(first, []).append((length, digest))
        firsts = np.array(sorted(by_first), np.uint32)
        words = np.frombuffer(data, np.uint8)
        for offset in range(4):
            usable = (len(words) - offset) // 4 * 4
            if usable <= 0 or not len(firsts):
                continue
            view = words[offset : offset + usable].view(np.uint32)
            for hit in np.flatnonzero(np.isin(view, firsts))[:100000]:
                start = offset + 4 * int(hit)
                for length, digest in by_first[int(view[hit])]:
                    if _digest(bytes(words[start : start + length])) == digest:
                        self.found.append(f"{place}: raw bytes at {start}")

    def report(self):
        for line in self.found:
            print("FOUND", self.where, line)
        print("SCANNED", self.where, " ".join(f"{k}={v}" for k, v in sorted(self.counts.items())))


def _scan_environment(scan):
    for name, value in os.environ.items():
        scan.text(f"{name}={value}".encode(), f"environ {name}")
        scan.count("environ")


def _scan_files(scan):
    """Every file it can read, except the read-only Python install and /usr (bound from the host
    as they are, written by no grading run); /proc's environ and cmdline of every process."""
    installed = tuple(sorted({sys.prefix, sys.base_prefix, "/usr"}))
    places = [os.path.join("/proc", p, f) for p in os.listdir("/proc") if p.isdigit() for f in ("environ", "cmdline")]
    print("TOP", sorted(os.listdir("/")), "SKIPPED", installed)
    for folder, subfolders, files in os.walk("/"):
        if folder in ("/proc", "/sys", "/dev") or folder.startswith(installed):
            subfolders[:] = []
            continue
        places += [os.path.join(folder, name) for name in files]
    for path in places:
        try:
            if os.path.islink(path) or (not path.startswith("/proc") and os.path.getsize(path) > 4 * 2**20):
                continue
            with open(path, "rb") as handle:
                data = handle.read(4 * 2**20)
        except OSError:
            continue
        scan.count("files")
        scan.text(data, path)
        scan.raw(data, path)


def _scan_objects(scan):
    sizes = set(TARGETS["sizes"])
    wanted = set(TARGETS["text"])
    seen = {id(TARGETS)}
    for holder in gc.get_objects():
        for value in [holder, *gc.get_referents(holder)]:
            if id(value) in seen:
                continue
            seen.add(id(value))
            kind = type(value)
            if kind is str or kind is bytes:
                if len(value) >= 6:
                    scan.text(value.encode(errors="replace") if kind is str else value, f"a {kind.__name__} object")
            elif kind is int and _digest(str(value).encode()) in wanted:
                scan.found.append(f"an int object {type(holder).__name__}")
            elif hasattr(value, "shape") and hasattr(value, "dtype") and getattr(value, "size", 0) in sizes:
                try:
                    array = np.ascontiguousarray(np.asarray(value), np.float32)
                except Exception:  # a tracer, a shape-only object
                    continue
                scan.count("arrays")
                scan.raw(array.tobytes(), f"an array of shape {array.shape}")
            scan.count("objects")


def _scan_memory(scan):
    """Every writable mapping of this process that holds pages, read through /proc/self/mem."""
    regions = []
    with open("/proc/self/smaps") as handle:
        current = None
        for line in handle:
            head = line.split()
            if "-" in head[0] and len(head) >= 5:
                start, end = (int(v, 16) for v in head[0].split("-"))
                current = (start, end, head[1], " ".join(head[5:]))
            elif head[0] == "Rss:" and current and int(head[1]) > 0 and current[2].startswith("rw"):
                regions.append(current)
    memory = os.open("/proc/self/mem", os.O_RDONLY)
    try:
        for start, end, _, name in regions:
            for chunk in range(start, end, 64 * 2**20):
                try:
                    data = os.pread(memory, min(64 * 2**20 + 64, end - chunk), chunk)
                except OSError:
                    continue
                scan.count("memory_MiB", len(data) / 2**20)
                scan.text(data, f"memory {name or 'anonymous'}")
                scan.raw(data, f"memory {name or 'anonymous'}")
    finally:
        os.close(memory)


def scan_everything(where, memory=False):
    scan = _Scan(where)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reading every object's `shape` wakes traitlets' config warnings
        _scan_environment(scan)
        _scan_files(scan)
        _scan_objects(scan)
        if memory:
            _scan_memory(scan)
    scan.counts = {k: round(v) for k, v in scan.counts.items()}
    scan.report()


scan_everything("answer")
# %% a cell of the student's own at the end
scan_everything("end", memory=True)
