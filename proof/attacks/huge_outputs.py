"""Attack: outputs of every kind, each about 20 MB (text, HTML, PNG, JSON, an error), to bloat
the autograded notebook, the gradebook and the feedback page."""
# base: residuals wrong_grad_missing_cos
# class: outputs of every MIME type
# run: cluster
import base64

from IPython.display import display

_big = "x" * 20_000_000
print(_big)
display({"text/plain": _big}, raw=True)
display({"text/html": "<p>" + _big + "</p>"}, raw=True)
display({"image/png": base64.b64encode(b"\x89PNG" + b"\0" * 15_000_000).decode()}, raw=True)
display({"application/json": {"blob": _big}}, raw=True)


class _Loud:
    def __repr__(self):
        return _big


_Loud()
