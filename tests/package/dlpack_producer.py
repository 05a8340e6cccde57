"""A DLPack producer written from the DLPack specification (dlpack.h, v1.1)
with ctypes, independent of numpy's and of fmtcheck's: it exports the codes
of a numpy array under any DLPack type code, as torch or JAX export bfloat16
and FP8 tensors, which numpy cannot. Unversioned (DLManagedTensor in a
"dltensor" capsule), or versioned 1.x and read-only: then, as the
specification asks of a read-only array, it refuses the unversioned export."""
import ctypes

import numpy as np

KDL_CPU = 1
KDL_BFLOAT = 4
# DLDataTypeCode: kDLFloat8_e3m4 = 7 ... kDLFloat8_e8m0fnu = 14, kDLFloat6_e2m3fn = 15,
# kDLFloat6_e3m2fn = 16, kDLFloat4_e2m1fn = 17.
KDL_FLOAT8 = {"float8_e3m4": 7, "float8_e4m3": 8, "float8_e4m3b11fnuz": 9, "float8_e4m3fn": 10,
              "float8_e4m3fnuz": 11, "float8_e5m2": 12, "float8_e5m2fnuz": 13, "float8_e8m0fnu": 14}
KDL_FLOAT6_E2M3FN = 15
DLPACK_FLAG_BITMASK_READ_ONLY = 1


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor)))]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


DLManagedTensorVersioned._fields_ = [
    ("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))), ("flags", ctypes.c_uint64),
    ("dl_tensor", DLTensor)]

_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
# Capsule names must outlive their capsules.
_NAMES = {False: ctypes.create_string_buffer(b"dltensor"), True: ctypes.create_string_buffer(b"dltensor_versioned")}


class Producer:
    """Exports `codes` (a C-contiguous numpy array, kept alive here) as type (code, bits).
    `exports` counts the capsules handed out, `deleted` the deleter calls of their consumers."""

    def __init__(self, codes, code, bits, versioned=False):
        self.codes = np.ascontiguousarray(codes)
        self.shape = self.codes.shape
        self.code, self.bits, self.versioned = code, bits, versioned
        self.exports = self.deleted = 0
        self._kept = []  # the structures and callbacks of every export

    def _tensor(self):
        shape = (ctypes.c_int64 * max(self.codes.ndim, 1))(*self.codes.shape)
        tensor = DLTensor(self.codes.ctypes.data, DLDevice(KDL_CPU, 0), self.codes.ndim,
                          DLDataType(self.code, self.bits, 1), shape, None, 0)
        return tensor, shape

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if self.versioned and (max_version is None or max_version[0] < 1):
            raise BufferError("a read-only array is exported only as a versioned DLPack capsule")
        tensor, shape = self._tensor()
        managed_type = DLManagedTensorVersioned if self.versioned else DLManagedTensor
        deleter = dict(managed_type._fields_)["deleter"](self._deleted)
        if self.versioned:
            managed = DLManagedTensorVersioned(DLPackVersion(1, 1), None, deleter, DLPACK_FLAG_BITMASK_READ_ONLY, tensor)
        else:
            managed = DLManagedTensor(tensor, None, deleter)
        self._kept.append((managed, shape, deleter))
        self.exports += 1
        return _capsule_new(ctypes.addressof(managed), ctypes.addressof(_NAMES[self.versioned]), None)

    def __dlpack_device__(self):
        return (KDL_CPU, 0)

    def _deleted(self, _managed):
        self.deleted += 1
