"""`python -m book`: assemble, render and link-check the course website (build/book/)."""

import subprocess
import sys
import time

from book import Project, assemble, links, sphinx


def main() -> int:
    project = Project()
    start = time.monotonic()
    assembly = assemble(project)
    print(f"book: {len(assembly.reused)} executed notebooks reused, {len(assembly.executed)} executed now", flush=True)
    done = sphinx(project)
    if done.returncode != 0:
        print(done.stdout + done.stderr, file=sys.stderr)
        print("book: Sphinx failed (warnings count as errors)", file=sys.stderr)
        return 1
    broken, external = links.check(project.site)
    if broken:
        print("book: broken links:\n  " + "\n  ".join(broken), file=sys.stderr)
        return 1
    size = subprocess.run(["du", "-sh", str(project.site)], capture_output=True, text=True).stdout.split()[0]
    print(f"book: {len(external)} external links listed, not fetched")
    print(f"book: built {project.site}/index.html in {time.monotonic() - start:.0f} s, {size}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
