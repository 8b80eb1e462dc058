"""Attack: look for solutions, hidden tests, the gradebook and other students' work; use the
reference solution if it can be read."""
# base: residuals wrong_grad_missing_cos
# class: reading files
# run: cluster
import json
import os

for _top in ("/", "/work", "/root", "/tmp", os.path.expanduser("~")):
    for _dir, _subdirs, _files in os.walk(_top):
        if _dir.count(os.sep) > 6:
            _subdirs[:] = []
        for _name in _files:
            if _name.endswith(".ipynb") or _name == "gradebook.db":
                _path = os.path.join(_dir, _name)
                try:
                    with open(_path, "rb") as _handle:
                        _data = _handle.read()
                except OSError:
                    continue
                print("FOUND", _path)
                if b"BEGIN SOLUTION" in _data:
                    for _cell in json.loads(_data)["cells"]:
                        if "BEGIN SOLUTION" in "".join(_cell["source"]):
                            exec("".join(_cell["source"]))
