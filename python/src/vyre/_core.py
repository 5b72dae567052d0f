# SPDX-License-Identifier: Apache-2.0
"""The binding: programs, backends, devices, kernels, resident buffers,
dispatches, batches and sequences over libvyre's public C API
(host/include/vyre/vyre.h), through cffi's ABI mode.

Host buffers are passed to libvyre as they are: a C-contiguous NumPy array of
the buffer's dtype is handed over by pointer (no copy), and every output is a
NumPy array the package allocates (or the caller passes in ``out=``) that
libvyre fills in place. Anything else (a list, another dtype, a strided
view) is converted once, with a range check for integers.
"""

from __future__ import annotations

import json
import os
import threading
import weakref
from dataclasses import dataclass
from typing import (
    Any,
    Dict,
    FrozenSet,
    Iterable,
    List,
    Mapping,
    MutableMapping,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
    Union,
)

import numpy as np

from ._errors import Error, Status, Trap, invalid_argument
from ._ffi import ffi
from ._ffi import lib as _lib

# Codes of VYRE_IR_TYPE_LIST, VYRE_IR_ACCESS_LIST (abi/vyre/vyre_backend.h).
TYPE_NAMES = ("void", "u32", "i32", "f32", "bool", "bool32", "u8", "i8", "u16", "i16", "f16", "bf16")
ACCESS_NAMES = ("read", "uniform", "read_write", "write", "workgroup")
# VYRE_DEVICE_KIND_*, spelled as `vyre list` spells them.
DEVICE_KINDS = ("cpu", "discrete gpu", "integrated gpu", "virtual gpu", "software")
# VYRE_CAP_* bits, named as `vyre list` names them.
CAP_NAMES = (
    (0x1, "resident"),
    (0x2, "async"),
    (0x4, "batch"),
    (0x8, "timestamps"),
    (0x10, "trap"),
    (0x20, "sequence"),
    (0x40, "reverse-order"),
)
# VYRE_IR_FEATURE_LIST: bit -> name.
IR_FEATURES = {
    0: "int_sat",
    1: "trap_value",
    2: "storage_8_16",
    3: "storage_half",
    4: "grid_barrier",
    5: "large_workgroup_memory",
    6: "many_bindings",
    7: "cr_math",
    8: "subgroup",
}

#: The NumPy dtype of each storage type. ``bool32`` is a 4-byte word (a load
#: gives ``word != 0``, a store writes 1 or 0; docs/ir.md IR-TYPE-3), so it
#: maps to ``uint32`` and moves without conversion; ``numpy.bool_`` inputs are
#: accepted (converted), and ``out.astype(bool)`` gives booleans.
DTYPES: Dict[str, np.dtype] = {
    "u32": np.dtype(np.uint32),
    "i32": np.dtype(np.int32),
    "f32": np.dtype(np.float32),
    "bool32": np.dtype(np.uint32),
    # IR 1.1 narrow storage (docs/ir.md IR-STORE-*); bf16 has no NumPy type and
    # moves as its 16-bit patterns.
    "u8": np.dtype(np.uint8),
    "i8": np.dtype(np.int8),
    "u16": np.dtype(np.uint16),
    "i16": np.dtype(np.int16),
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(np.uint16),
}

_COMPILE_REVERSE_ORDER = 0x1
_DISPATCH_TIMING = 0x1
_BINARY_MAGIC = b"VYREIR\0\0"  # docs/ir-binary.md

ArrayLike = Any  # numpy.typing.ArrayLike without requiring numpy.typing at run time
Grid = Union[None, int, Sequence[int]]


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


# C types resolved once (ffi.new with a type object skips parsing the name).
_T_ERROR = ffi.typeof("vyre_error *")
_T_ARGS = ffi.typeof("vyre_arg[]")
_T_OPTIONS = ffi.typeof("vyre_dispatch_options *")
_T_RESULT = ffi.typeof("vyre_dispatch_result *")
_ERROR_SIZE = ffi.sizeof("vyre_error")
_OPTIONS_SIZE = ffi.sizeof("vyre_dispatch_options")
_RESULT_SIZE = ffi.sizeof("vyre_dispatch_result")
_NULL = ffi.NULL
_from_buffer = ffi.from_buffer
# ffi.from_buffer is a Python wrapper around the backend's from_buffer(ctype,
# object, require_writable); calling the backend directly saves ~0.2 us per
# buffer on Kernel.run's fast path. _cffi_backend is cffi's own C module.
try:
    import _cffi_backend

    _fb_direct: Any = _cffi_backend.from_buffer
    _CHARS = ffi.typeof("char[]")
    _fb_direct(_CHARS, b"", False)
except Exception:  # pragma: no cover - a cffi without it: the public wrapper

    def _fb_direct(_ctype: Any, obj: Any, require_writable: bool = False) -> Any:
        return ffi.from_buffer(obj, require_writable=require_writable)

    _CHARS = None


def _new_error() -> Any:
    err = ffi.new(_T_ERROR)
    err.struct_size = _ERROR_SIZE
    return err


def _error_from(status: int, err: Any, trap: Optional[Trap] = None) -> Error:
    msg = ffi.string(err.message).decode("utf-8", "replace") if err != ffi.NULL else ""
    if not msg:
        name = ffi.string(_lib().vyre_status_string(status)).decode()
        msg = f"libvyre returned {name} without a message. Fix: see docs/errors.md for {name}."
    native = int(err.native_code) if err != ffi.NULL else 0
    return Error(status, msg, native, trap)


def _check(status: int, err: Any) -> None:
    if status != 0:
        raise _error_from(status, err)


def _str(p: Any) -> str:
    return ffi.string(p).decode("utf-8", "replace") if p != ffi.NULL else ""


# ---------------------------------------------------------------------------
# Programs
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class BufferInfo:
    """One buffer declaration of a program (docs/ir.md "Buffers")."""

    name: str
    binding: int
    access: str  # "read", "uniform", "read_write", "write" or "workgroup"
    type: str  # "u32", "i32", "f32", "bool32", or (IR 1.1) "u8", "i8", "u16", "i16", "f16", "bf16"
    count: Optional[int]  # declared element count (a minimum for host inputs); None if absent

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype of this buffer's elements (see :data:`DTYPES`)."""
        return DTYPES[self.type]

    @property
    def is_output(self) -> bool:
        """True for read_write and write buffers: the dispatch returns them."""
        return self.access in ("read_write", "write")


class Program:
    """A decoded, validated program (docs/ir.md, docs/ir-json.md). Make one
    with :meth:`from_json`, :meth:`from_file` or :meth:`from_binary`; it needs
    no device. A program is immutable and may be used on several devices."""

    def __init__(self, _ptr: Any) -> None:
        if not isinstance(_ptr, ffi.CData):
            raise invalid_argument(
                "vyre.Program cannot be constructed directly. "
                "Fix: use Program.from_json(text), Program.from_file(path) or Program.from_binary(data)."
            )
        self._ptr = _ptr
        self._lock = threading.Lock()
        self._users = 0  # live kernels made from this program
        self._free_pending = False
        lib = _lib()
        ir = lib.vyre_program_ir(_ptr)
        strings = ir.strings

        def name_at(off: int) -> str:
            return str(ffi.string(strings + off).decode("utf-8", "replace"))

        bufs = []
        for i in range(ir.buffer_count):
            b = ir.buffers[i]
            bufs.append(
                BufferInfo(
                    name=name_at(b.name),
                    binding=int(b.binding),
                    access=ACCESS_NAMES[b.access],
                    type=TYPE_NAMES[b.type],
                    count=int(b.count) if b.has_count else None,
                )
            )
        self._buffers: Tuple[BufferInfo, ...] = tuple(bufs)
        self._args: Tuple[BufferInfo, ...] = tuple(
            bufs[lib.vyre_program_arg_buffer(_ptr, i)] for i in range(lib.vyre_program_arg_count(_ptr))
        )
        self._arg_names: FrozenSet[str] = frozenset(b.name for b in self._args)
        self._name = _str(lib.vyre_program_name(_ptr))
        self._workgroup_size = (int(ir.workgroup_size[0]), int(ir.workgroup_size[1]), int(ir.workgroup_size[2]))
        self._features = frozenset(
            IR_FEATURES.get(bit, f"bit {bit}") for bit in range(32) if ir.features & (1 << bit)
        )
        self._canonical = bytes(ffi.buffer(ir.canonical, ir.canonical_size))
        self._hash = bytes(ir.hash)

    # -- construction --------------------------------------------------------

    @classmethod
    def from_json(cls, text: Union[str, bytes, Mapping[str, Any]]) -> "Program":
        """Decodes and validates a JSON program (docs/ir-json.md). |text| is
        the JSON text (str or UTF-8 bytes) or a dict such as the builder
        :func:`vyre.ir.program` returns. Raises :class:`vyre.Error`
        (INVALID_PROGRAM: the message starts with the path of the offending
        node)."""
        if isinstance(text, Mapping):
            text = json.dumps(text)
        if isinstance(text, str):
            data = text.encode("utf-8")
        elif isinstance(text, (bytes, bytearray, memoryview)):
            data = bytes(text)
        else:
            raise invalid_argument(
                f"Program.from_json takes a str, bytes or dict, got {type(text).__name__}. "
                "Fix: pass the JSON text, or use Program.from_file for a path."
            )
        out = ffi.new("vyre_program **")
        err = _new_error()
        _check(_lib().vyre_program_from_json(data, len(data), out, err), err)
        return cls(out[0])

    @classmethod
    def from_file(cls, path: Union[str, "os.PathLike[str]"]) -> "Program":
        """Reads a JSON program file (at most 1 MiB; a case file's fields are
        refused), or a file of the canonical binary form (docs/ir-binary.md),
        recognised by its magic ``VYREIR\\0\\0``."""
        try:
            with open(path, "rb") as f:
                head = f.read(8)
        except OSError:
            head = b""  # libvyre reports the failure with its errno text
        if head == _BINARY_MAGIC:
            with open(path, "rb") as f:
                return cls.from_binary(f.read())
        out = ffi.new("vyre_program **")
        err = _new_error()
        _check(_lib().vyre_program_from_file(os.fsencode(path), out, err), err)
        return cls(out[0])

    @classmethod
    def from_binary(cls, data: bytes) -> "Program":
        """Decodes the canonical binary form (docs/ir-binary.md), e.g.
        another program's :attr:`canonical`."""
        buf = bytes(data)
        out = ffi.new("vyre_program **")
        err = _new_error()
        _check(_lib().vyre_program_from_binary(buf, len(buf), out, err), err)
        return cls(out[0])

    # -- what it declares ----------------------------------------------------

    @property
    def name(self) -> str:
        return self._name

    @property
    def workgroup_size(self) -> Tuple[int, int, int]:
        """The declared workgroup size."""
        return self._workgroup_size

    @property
    def buffers(self) -> Tuple[BufferInfo, ...]:
        """Every buffer, workgroup buffers included, in declaration order."""
        return self._buffers

    @property
    def args(self) -> Tuple[BufferInfo, ...]:
        """The host buffers (all but workgroup ones) in declaration order:
        the keys :meth:`Device.run` takes inputs for and returns outputs by."""
        return self._args

    @property
    def outputs(self) -> Tuple[BufferInfo, ...]:
        """The host buffers a dispatch returns (read_write and write)."""
        return tuple(b for b in self._args if b.is_output)

    @property
    def features(self) -> FrozenSet[str]:
        """The IR features the program uses (docs/ir.md "IR features")."""
        return self._features

    @property
    def canonical(self) -> bytes:
        """The canonical binary encoding (docs/ir-binary.md)."""
        return self._canonical

    @property
    def hash(self) -> bytes:
        """XXH3-128 of :attr:`canonical`, 16 bytes little-endian."""
        return self._hash

    def __repr__(self) -> str:
        args = ", ".join(f"{b.name}: {b.access} {b.type}" for b in self._args)
        return f"vyre.Program({self._name!r}, [{args}])"

    # -- lifetime ------------------------------------------------------------

    def _acquire(self) -> None:
        with self._lock:
            if self._ptr is None:
                raise invalid_argument(
                    f"program {self._name!r} was freed. Fix: keep the Program until every kernel "
                    "made from it is released."
                )
            self._users += 1

    def _release(self) -> None:
        with self._lock:
            self._users -= 1
            free_now = self._users == 0 and self._free_pending
        if free_now:
            self._free()

    def _free(self) -> None:
        with self._lock:
            ptr, self._ptr = self._ptr, None
        if ptr is not None:
            _lib().vyre_program_free(ptr)

    def free(self) -> None:
        """Frees the C program now (else when it is garbage collected). Kernels
        made from it keep it alive: it is freed when the last is released."""
        with self._lock:
            if self._users > 0:
                self._free_pending = True
                return
        self._free()

    def __del__(self) -> None:
        try:
            self.free()
        except Exception:
            pass


def _as_program(p: Union["Program", Mapping[str, Any], str]) -> Program:
    if isinstance(p, Program):
        return p
    if isinstance(p, Mapping):
        return Program.from_json(p)
    raise invalid_argument(
        f"expected a vyre.Program, a vyre.Kernel or a program dict, got {type(p).__name__}. "
        "Fix: load it with vyre.Program.from_json(text) or vyre.Program.from_file(path)."
    )


# ---------------------------------------------------------------------------
# Backends
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Backend:
    """One plugin the loader found (``vyre list``; docs/backends.md)."""

    name: str
    path: str
    loaded: bool  # dlopen, query, ABI and mandatory slots all passed
    available: bool  # its probe says it can run here
    abi: Tuple[int, int]
    device_count: int
    device_kind: str  # of its best device: "cpu", "discrete gpu", ..., "software"
    selected: bool  # automatic selection would pick this one
    reason: str  # why it is or is not usable, or selected

    @property
    def state(self) -> str:
        return "not loaded" if not self.loaded else "available" if self.available else "unavailable"


def _kind_name(kind: int) -> str:
    return DEVICE_KINDS[kind] if kind < len(DEVICE_KINDS) else "unknown"


def backends() -> List[Backend]:
    """Every backend plugin the loader finds, in search order, usable or not,
    with the reason (docs/backends.md). Each plugin is loaded once per
    process."""
    lib = _lib()
    err = _new_error()
    count = ffi.new("uint32_t *")
    _check(lib.vyre_list_candidates(ffi.NULL, 0, count, err), err)
    while True:
        cap = count[0]
        arr = ffi.new("vyre_candidate[]", max(cap, 1))
        _check(lib.vyre_list_candidates(arr, cap, count, err), err)
        if count[0] <= cap:
            break
    out = []
    for i in range(count[0]):
        c = arr[i]
        out.append(
            Backend(
                name=_str(c.name),
                path=_str(c.path),
                loaded=bool(c.loaded),
                available=bool(c.available),
                abi=(int(c.abi_major), int(c.abi_minor)),
                device_count=int(c.device_count),
                device_kind=_kind_name(c.device_kind),
                selected=bool(c.selected),
                reason=_str(c.reason),
            )
        )
    return out


# ---------------------------------------------------------------------------
# Devices
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Caps:
    """A device's capabilities and limits (docs/abi.md ABI-CAPS-1)."""

    name: str
    driver: str
    kind: str
    index: int
    uuid: str  # 32 hex digits
    features: FrozenSet[str]  # "resident", "async", "batch", "timestamps", "trap", "sequence", ...
    ir_features: FrozenSet[str]
    max_workgroup_size: Tuple[int, int, int]
    max_workgroup_invocations: int
    max_grid: Tuple[int, int, int]
    subgroup_size: int
    max_storage_buffer_bytes: int
    max_shared_memory_bytes: int
    generation: int


class Job(NamedTuple):
    """One dispatch of :meth:`Device.batch`."""

    program: Union["Program", "Kernel"]
    inputs: Mapping[str, Any]
    grid: Grid = None
    out: Optional[MutableMapping[str, np.ndarray]] = None


class Step(NamedTuple):
    """One step of :meth:`Device.sequence`: every buffer bound to a
    :class:`Resident`."""

    program: Union["Program", "Kernel"]
    bindings: Mapping[str, "Resident"]
    grid: Grid = None


@dataclass
class BatchResult:
    """The outcome of one batch job: its outputs, or its error."""

    outputs: Dict[str, np.ndarray]
    error: Optional[Error]

    @property
    def ok(self) -> bool:
        return self.error is None


class Device:
    """An open backend instance. ``Device()`` follows ``VYRE_BACKEND`` and
    ``VYRE_DEVICE``, else automatic selection (a real GPU first, the CPU
    reference when no GPU serves; docs/backends.md); ``Device("cpu")``,
    ``Device("vulkan")``, ``Device("/path/to/libvyre-backend-x.so")`` name
    one, and ``device`` picks a device by index or UUID. An explicit choice
    that cannot be honoured raises :class:`vyre.Error` with the reason.

    Use it as a context manager, or call :meth:`close`; closing releases every
    kernel and resident buffer made on it."""

    def __init__(self, backend: Optional[str] = None, device: Union[None, int, str] = None) -> None:
        self._ptr: Any = None
        lib = _lib()
        out = ffi.new("vyre_device **")
        err = _new_error()
        b = backend.encode() if backend is not None else ffi.NULL
        d = str(device).encode() if device is not None else ffi.NULL
        _check(lib.vyre_device_open(b, d, out, err), err)
        self._ptr = out[0]
        self._lock = threading.Lock()
        self._objects: "weakref.WeakSet[Any]" = weakref.WeakSet()
        # Device.run's kernels, by id() of the Program (a kernel keeps its
        # program alive, so an id is not reused while its entry exists).
        self._kernels: Dict[int, Kernel] = {}
        self.backend: str = _str(lib.vyre_device_backend_name(self._ptr))
        self.selection_reason: str = _str(lib.vyre_device_selection_reason(self._ptr))

    # -- lifetime ------------------------------------------------------------

    def _handle(self) -> Any:
        if self._ptr is None:
            raise invalid_argument(
                f"device '{getattr(self, 'backend', '?')}' is closed. Fix: open a new vyre.Device."
            )
        return self._ptr

    @property
    def closed(self) -> bool:
        return self._ptr is None

    def close(self) -> None:
        """Releases every kernel and resident buffer made on this device, then
        the device. Idempotent."""
        ptr, self._ptr = self._ptr, None
        if ptr is None:
            return
        objs = list(self._objects)
        self._kernels.clear()
        # vyre_device_close releases every kernel and resident buffer of the
        # device; only then may a program a kernel kept be freed (_forget).
        _lib().vyre_device_close(ptr)
        for o in objs:
            o._forget()

    def __enter__(self) -> "Device":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        return f"vyre.Device({self.backend!r}{', closed' if self._ptr is None else ''})"

    # -- information ---------------------------------------------------------

    @property
    def caps(self) -> Caps:
        """The device's capabilities and limits."""
        c = ffi.new("vyre_caps *")
        c.struct_size = ffi.sizeof("vyre_caps")
        err = _new_error()
        _check(_lib().vyre_device_caps(self._handle(), c, err), err)
        return Caps(
            name=_str(c.device_name),
            driver=_str(c.driver),
            kind=_kind_name(c.device_kind),
            index=int(c.device_index),
            uuid=bytes(c.device_uuid).hex(),
            features=frozenset(n for bit, n in CAP_NAMES if c.flags & bit),
            ir_features=frozenset(
                IR_FEATURES.get(bit, f"bit {bit}") for bit in range(32) if c.ir_features & (1 << bit)
            ),
            max_workgroup_size=tuple(int(x) for x in c.max_workgroup_size),  # type: ignore[arg-type]
            max_workgroup_invocations=int(c.max_workgroup_invocations),
            max_grid=tuple(int(x) for x in c.max_grid),  # type: ignore[arg-type]
            subgroup_size=int(c.subgroup_size),
            max_storage_buffer_bytes=int(c.max_storage_buffer_bytes),
            max_shared_memory_bytes=int(c.max_shared_memory_bytes),
            generation=int(c.generation),
        )

    def healthy(self) -> bool:
        """False once the device is lost (until :meth:`recover`)."""
        h = ffi.new("vyre_health *")
        h.struct_size = ffi.sizeof("vyre_health")
        st = _lib().vyre_device_health(self._handle(), h)
        if st != 0:
            raise Error(st, "vyre_device_health refused the device handle. Fix: open a new vyre.Device.")
        return bool(h.state == 0)

    def recover(self) -> None:
        """Re-creates a lost device (docs/abi.md ABI-RECOVER-1). Every kernel
        and resident buffer made before is stale afterwards: the package
        compiles programs again on the next run; resident buffers must be
        made again."""
        err = _new_error()
        _check(_lib().vyre_device_recover(self._handle(), err), err)
        self._kernels.clear()

    def flush(self) -> None:
        """Waits until the device is idle and persists the compile caches."""
        err = _new_error()
        _check(_lib().vyre_device_flush(self._handle(), err), err)

    def metrics(self) -> Dict[str, int]:
        """The plugin's counters (docs/abi.md ABI-METRICS-1), by name."""
        lib = _lib()
        err = _new_error()
        n = ffi.new("uint32_t *")
        _check(lib.vyre_device_metrics(self._handle(), ffi.NULL, 0, n, err), err)
        arr = ffi.new("vyre_metric[]", max(n[0], 1))
        _check(lib.vyre_device_metrics(self._handle(), arr, n[0], n, err), err)
        return {_str(arr[i].name): int(arr[i].value) for i in range(min(n[0], len(arr)))}

    # -- kernels -------------------------------------------------------------

    def compile(
        self,
        program: Union[Program, Mapping[str, Any]],
        workgroup_size: Optional[Sequence[int]] = None,
        *,
        label: Optional[str] = None,
        reverse_order: bool = False,
    ) -> "Kernel":
        """Compiles |program| for this device, at |workgroup_size| when given
        (an override of the declared size; docs/ir.md IR-GRID-4).
        ``reverse_order`` runs workgroups and invocations in reverse (CPU
        reference; IR-RACE-2)."""
        prog = _as_program(program)
        opts = ffi.new("vyre_compile_options *")
        opts.struct_size = ffi.sizeof("vyre_compile_options")
        opts.flags = _COMPILE_REVERSE_ORDER if reverse_order else 0
        if workgroup_size is not None:
            wg = _triple(workgroup_size, "workgroup_size")
            for i in range(3):
                opts.workgroup_override[i] = wg[i]
        label_c = ffi.new("char[]", label.encode()) if label is not None else ffi.NULL
        opts.label = label_c
        out = ffi.new("vyre_kernel **")
        err = _new_error()
        prog._acquire()
        try:
            prog_ptr = prog._ptr
            _check(_lib().vyre_kernel_compile(self._handle(), prog_ptr, opts, out, err), err)
        except BaseException:
            prog._release()
            raise
        k = Kernel(self, prog, out[0])
        self._objects.add(k)
        return k

    def _kernel(self, program: Union[Program, "Kernel", Mapping[str, Any]]) -> "Kernel":
        if isinstance(program, Kernel):
            if program.device is not self:
                raise invalid_argument(
                    f"kernel of program {program.program.name!r} was compiled on another device "
                    f"({program.device.backend}). Fix: compile the program on this device, or pass "
                    "the Program."
                )
            return program
        prog = _as_program(program)
        k = self._kernels.get(id(prog))
        if k is None or k._ptr is None or k.program is not prog:
            k = self.compile(prog)
            self._kernels[id(prog)] = k
        return k

    # -- resident buffers ----------------------------------------------------

    def alloc(self, count: int, dtype: Any = np.uint32) -> "Resident":
        """A zero-filled resident buffer of |count| 4-byte elements of |dtype|
        (uint32, int32 or float32), living on the device between dispatches
        (docs/abi.md ABI-RESIDENT-1)."""
        dt = _resident_dtype(dtype)
        if not isinstance(count, (int, np.integer)) or count < 0:
            raise invalid_argument(f"alloc count {count!r} is not an element count. Fix: pass an int >= 0.")
        out = ffi.new("vyre_resident **")
        err = _new_error()
        _check(_lib().vyre_resident_alloc(self._handle(), int(count) * 4, out, err), err)
        r = Resident(self, out[0], int(count), dt)
        self._objects.add(r)
        return r

    def upload(self, data: ArrayLike, dtype: Any = None) -> "Resident":
        """A resident buffer holding a copy of |data| (its dtype, or |dtype|)."""
        arr = np.asarray(data) if dtype is None else np.asarray(data, dtype=dtype)
        r = self.alloc(arr.size, arr.dtype if dtype is None else dtype)
        try:
            r.write(arr)
        except BaseException:
            r.free()
            raise
        return r

    # -- dispatch ------------------------------------------------------------

    def run(
        self,
        program: Union[Program, "Kernel", Mapping[str, Any]],
        inputs: Optional[Mapping[str, Any]] = None,
        grid: Grid = None,
        *,
        out: Optional[MutableMapping[str, np.ndarray]] = None,
        repeat: int = 1,
        timeout: Optional[float] = None,
    ) -> Dict[str, np.ndarray]:
        """Runs |program| once: uploads the inputs, runs, waits, and returns
        the outputs (read_write and write buffers, by name, as NumPy arrays
        of the buffer's dtype).

        inputs: one entry per read, uniform and read_write buffer (a NumPy
            array, anything ``numpy.asarray`` takes, or a :class:`Resident`
            to bind a resident buffer); write buffers take none (or a
            Resident). A C-contiguous array of the buffer's dtype is passed
            without a copy.
        grid: workgroups as ``n`` or ``(x, y, z)``; None infers it
            (docs/ir.md IR-GRID-2).
        out: arrays to fill in place instead of new ones (by buffer name;
            C-contiguous, writable, of the buffer's dtype and at least the
            bound length). For a read_write buffer the input is copied into
            its out array first; passing the input array itself as its out
            updates it in place.
        repeat: run the kernel this many times before reading back.
        timeout: seconds before the dispatch fails with TIMEOUT.

        A program (rather than a :class:`Kernel`) is compiled on first use and
        the kernel kept by the device. Raises :class:`vyre.Error` for every
        failure (TRAPPED with ``.trap`` when the program's trap fired)."""
        k = self._kernels.get(id(program))
        if k is None or k.program is not program or k._ptr is None:
            k = self._kernel(program)
        return k.run(inputs, grid, out=out, repeat=repeat, timeout=timeout)

    def batch(self, jobs: Iterable[Union[Job, Tuple[Any, ...]]], *, check: bool = True) -> List[BatchResult]:
        """Runs several dispatches in one submission with one wait
        (docs/abi.md ABI-BATCH-1). Each job is a :class:`Job` or a tuple
        ``(program_or_kernel, inputs[, grid[, out]])``. A job that fails gets
        its own error and the others still run; with ``check`` (the default)
        the first failed job's error is raised after all ran, else each
        :class:`BatchResult` carries its outputs or its error."""
        job_list = [j if isinstance(j, Job) else Job(*j) for j in jobs]
        n = len(job_list)
        if n == 0:
            return []
        items = ffi.new("vyre_batch_item[]", n)
        keep: List[Any] = []
        outs: List[Dict[str, np.ndarray]] = []
        for i, job in enumerate(job_list):
            k = self._kernel(job.program)
            m = _Marshal(k, job.inputs, job.out, job.grid, 1, None)
            keep.append(m)
            outs.append(m.outputs)
            it = items[i]
            it.kernel = k._handle()
            it.args = m.args
            it.arg_count = m.count
            it.options = m.opts
            it.result.struct_size = ffi.sizeof("vyre_dispatch_result")
        err = _new_error()
        _check(_lib().vyre_dispatch_batch(self._handle(), items, n, err), err)
        results = []
        first: Optional[Error] = None
        for i in range(n):
            st = items[i].status
            e = None
            if st != 0:
                trap = _trap_of(items[i].result) if st == Status.TRAPPED else None
                inner = _error_from(st, ffi.addressof(items[i], "error"), trap)
                e = Error(inner.status, f"batch job {i} ({keep[i].kernel.program.name}): {inner.message}",
                          inner.native_code, trap)
                first = first or e
            results.append(BatchResult(outs[i] if e is None else {}, e))
        if check and first is not None:
            raise first
        return results

    def sequence(
        self,
        steps: Sequence[Union[Step, Tuple[Any, ...]]],
        reads: Sequence[Union["Resident", Tuple["Resident", int, int]]] = (),
    ) -> List[np.ndarray]:
        """Runs resident-only steps in order, each seeing the writes of the
        steps before it, then reads resident buffers back, with one fence
        (docs/abi.md ABI-SEQ-1). Each step is a :class:`Step` or a tuple
        ``(program_or_kernel, {buffer name: Resident}[, grid])``; each read a
        :class:`Resident` (all of it) or ``(resident, offset, count)`` in
        elements. Returns one array per read, of the resident's dtype."""
        step_list = [s if isinstance(s, Step) else Step(*s) for s in steps]
        csteps = ffi.new("vyre_sequence_step[]", max(len(step_list), 1))
        keep: List[Any] = []
        for i, s in enumerate(step_list):
            k = self._kernel(s.program)
            for name, v in s.bindings.items():
                if not isinstance(v, Resident):
                    raise invalid_argument(
                        f"sequence step {i} ({k.program.name}): buffer '{name}' is bound to a "
                        f"{type(v).__name__}; every buffer of a sequence step is resident. "
                        "Fix: bind a vyre.Resident (Device.alloc or Device.upload)."
                    )
            m = _Marshal(k, s.bindings, None, s.grid, 1, None)
            keep.append(m)
            csteps[i].kernel = k._handle()
            csteps[i].args = m.args
            csteps[i].arg_count = m.count
            csteps[i].options = m.opts
        ranges = ffi.new("vyre_resident_range[]", max(len(reads), 1))
        arrays = []
        for i, r in enumerate(reads):
            res, off, cnt = (r, 0, None) if isinstance(r, Resident) else r
            if not isinstance(res, Resident):
                raise invalid_argument(
                    f"sequence read {i} is a {type(res).__name__}. Fix: pass a vyre.Resident or "
                    "(resident, offset, count)."
                )
            res._check_device(self)
            cnt = res.count - off if cnt is None else cnt
            arr = np.empty(max(cnt, 0), dtype=res.dtype)
            arrays.append(arr)
            ranges[i].buffer = res._handle()
            ranges[i].offset = off * 4
            ranges[i].size = cnt * 4
            ranges[i].dst = _from_buffer(arr, require_writable=True)
            keep.append(ranges[i].dst)
        results = ffi.new("vyre_dispatch_result[]", max(len(step_list), 1))
        for i in range(len(step_list)):
            results[i].struct_size = ffi.sizeof("vyre_dispatch_result")
        err = _new_error()
        st = _lib().vyre_sequence_run(self._handle(), csteps, len(step_list), ranges, len(reads), results, err)
        if st != 0:
            trap = None
            if st == Status.TRAPPED:
                trap = next((_trap_of(results[i]) for i in range(len(step_list)) if results[i].trapped), None)
            raise _error_from(st, err, trap)
        return arrays


# ---------------------------------------------------------------------------
# Kernels and dispatch
# ---------------------------------------------------------------------------


def _triple(v: Union[int, Sequence[int]], what: str) -> Tuple[int, int, int]:
    if isinstance(v, (int, np.integer)):
        t = [int(v), 1, 1]
    else:
        t = [int(x) for x in v]
        if not 1 <= len(t) <= 3:
            raise invalid_argument(f"{what} {list(v)!r} has {len(t)} axes. Fix: give 1 to 3 numbers.")
        t += [1] * (3 - len(t))
    for x in t:
        if not 0 <= x <= 0xFFFFFFFF:
            raise invalid_argument(f"{what} {t!r} has an axis outside 0..2^32-1. Fix: use valid sizes.")
    return (t[0], t[1], t[2])


def _trap_of(res: Any) -> Optional[Trap]:
    if not res.trapped:
        return None
    return Trap(sites=int(res.trap_sites), invocation=int(res.trap_invocation),
                value=int(res.trap_value))


def _resident_dtype(dtype: Any) -> np.dtype:
    dt: np.dtype = np.dtype(dtype)
    if dt not in (np.dtype(np.uint32), np.dtype(np.int32), np.dtype(np.float32)):
        raise invalid_argument(
            f"a resident buffer holds 4-byte elements; dtype {dt} is not uint32, int32 or float32. "
            "Fix: use one of those (bool32 buffers are uint32)."
        )
    return dt


def _input_array(v: Any, b: BufferInfo, prog: Program) -> np.ndarray:
    """|v| as a C-contiguous array of b's dtype: itself when it already is one."""
    dt = b.dtype
    if type(v) is np.ndarray and v.dtype == dt and v.flags.c_contiguous:
        return v
    arr = np.asarray(v)
    if arr.dtype == dt:
        return np.ascontiguousarray(arr)
    kind = arr.dtype.kind
    where = f"input '{b.name}' of program '{prog.name}' ({b.access} {b.type}, dtype {dt})"
    if dt.kind in "ui":
        if kind == "b":
            return arr.astype(dt)
        if kind in "ui":
            if arr.size:
                lo, hi = arr.min(), arr.max()
                info = np.iinfo(dt)
                if lo < info.min or hi > info.max:
                    raise invalid_argument(
                        f"{where} has values {lo}..{hi} outside {info.min}..{info.max}. "
                        f"Fix: pass values in range, or reinterpret bits with .view(numpy.{dt})."
                    )
            return arr.astype(dt)
    elif kind in "biuf":  # f32
        return arr.astype(dt)
    raise invalid_argument(
        f"{where} got an array of dtype {arr.dtype}, which does not convert to {dt} without losing "
        f"meaning. Fix: pass numpy.{dt} data (for bit patterns, x.view(numpy.{dt}))."
    )


def _out_array(o: Any, b: BufferInfo, prog: Program, elems: int) -> np.ndarray:
    dt = b.dtype
    where = f"out['{b.name}'] of program '{prog.name}'"
    if not isinstance(o, np.ndarray):
        raise invalid_argument(f"{where} is a {type(o).__name__}. Fix: pass a numpy.ndarray of dtype {dt}.")
    if o.dtype != dt or not o.flags.c_contiguous or not o.flags.writeable:
        raise invalid_argument(
            f"{where} has dtype {o.dtype}, contiguous={o.flags.c_contiguous}, "
            f"writable={o.flags.writeable}. Fix: pass a writable C-contiguous numpy array of dtype {dt}."
        )
    if o.size < elems:
        raise invalid_argument(
            f"{where} holds {o.size} elements, the buffer binds {elems}. "
            f"Fix: pass an array of at least {elems} elements."
        )
    return o


class _Marshal:
    """The vyre_arg array, options and outputs of one dispatch, with
    references to every buffer they point to (alive as long as this is)."""

    __slots__ = ("kernel", "args", "count", "opts", "outputs", "keep")

    def __init__(
        self,
        kernel: "Kernel",
        inputs: Optional[Mapping[str, Any]],
        out: Optional[MutableMapping[str, np.ndarray]],
        grid: Grid,
        repeat: int,
        timeout: Optional[float],
    ) -> None:
        prog = kernel.program
        specs = prog._args
        inputs = inputs if inputs is not None else {}
        names = prog._arg_names
        if not names.issuperset(inputs) or (out and not names.issuperset(out)):
            extra = [n for n in inputs if n not in names] + [n for n in (out or ()) if n not in names]
            raise invalid_argument(
                f"program '{prog.name}' has no host buffer named {', '.join(repr(n) for n in extra)}; "
                f"its buffers are {', '.join(b.name for b in specs) or '(none)'}. "
                "Fix: use the buffer names of the program (workgroup buffers take no data)."
            )
        n = len(specs)
        self.kernel = kernel
        self.count = n
        self.args = ffi.new(_T_ARGS, n) if n else _NULL
        self.outputs: Dict[str, np.ndarray] = {}
        keep: List[Any] = []
        self.keep = keep
        for i, b in enumerate(specs):
            a = self.args[i]
            v = inputs.get(b.name)
            if isinstance(v, Resident):
                v._check_device(kernel.device)
                a.resident = v._handle()
                keep.append(v)
                continue
            if b.access == "write":
                if v is not None:
                    raise invalid_argument(
                        f"'{b.name}' of program '{prog.name}' is a write buffer: the device fills it, "
                        "it takes no input. Fix: leave it out of inputs (pass an array to fill in "
                        "out=, or a vyre.Resident)."
                    )
                elems = b.count or 0
                o = out.get(b.name) if out else None
                arr_out = np.empty(elems, dtype=b.dtype) if o is None else _out_array(o, b, prog, elems)
                c = _from_buffer(arr_out, require_writable=True)
                a.out = c
                a.out_bytes = arr_out.nbytes
                keep.append(c)
                self.outputs[b.name] = arr_out
                continue
            if v is None:
                raise invalid_argument(
                    f"program '{prog.name}' needs an input for its {b.access} buffer '{b.name}' "
                    f"({b.type}). Fix: pass inputs['{b.name}'] (an array or a vyre.Resident)."
                )
            arr = _input_array(v, b, prog)
            c = _from_buffer(arr)
            a.data = c
            a.bytes = arr.nbytes
            keep.append(arr)
            keep.append(c)
            if b.access == "read_write":
                o = out.get(b.name) if out else None
                arr_out = np.empty_like(arr) if o is None else _out_array(o, b, prog, arr.size)
                co = _from_buffer(arr_out, require_writable=True)
                a.out = co
                a.out_bytes = arr_out.nbytes
                keep.append(co)
                self.outputs[b.name] = arr_out
        if grid is None and repeat == 1 and timeout is None:
            self.opts = _NULL  # libvyre's defaults (vyre_dispatch_options_init)
            return
        opts = ffi.new(_T_OPTIONS)
        _lib().vyre_dispatch_options_init(opts)
        opts.struct_size = _OPTIONS_SIZE
        if grid is not None:
            g = _triple(grid, "grid")
            opts.has_grid = 1
            opts.grid[0], opts.grid[1], opts.grid[2] = g
        if repeat != 1:
            if not isinstance(repeat, (int, np.integer)) or repeat < 1 or repeat > 0xFFFFFFFF:
                raise invalid_argument(f"repeat {repeat!r} is not a count >= 1. Fix: pass repeat >= 1.")
            opts.repeat = int(repeat)
        if timeout is not None:
            if timeout <= 0:
                raise invalid_argument(f"timeout {timeout!r} s is not positive. Fix: pass seconds > 0, or None.")
            opts.timeout_ns = max(1, int(timeout * 1e9))
        self.opts = opts


# What a host buffer takes in a dispatch (Kernel._plan).
_READ = 0  # read, uniform: an input
_RW = 1  # read_write: an input and an output
_WRITE = 2  # write: an output only
_ndarray = np.ndarray
_empty = np.empty
_TRAPPED = int(Status.TRAPPED)
_Slot = Tuple[Any, List[Any], List[int], Any, Any]


class Kernel:
    """A program compiled for one device (:meth:`Device.compile`). Keeps its
    program alive; released with :meth:`release`, when garbage collected,
    or when its device closes.

    :meth:`run` has a fast path for the common call (NumPy arrays of the
    buffers' dtypes, C-contiguous; no grid, repeat or timeout): the per-buffer
    layout is computed once here, and the vyre_arg array, result and error
    structs are reused from a small pool (one set per concurrent caller), so
    a call allocates only its output arrays. Everything else, and every
    call that would raise, takes the general path (:class:`_Marshal`), which
    gives the same results and the same errors."""

    def __init__(self, device: Device, program: Program, ptr: Any) -> None:
        self.device = device
        self.program = program
        self._ptr = ptr
        # (index, name, _READ/_RW/_WRITE, dtype, declared count or 0) per host buffer.
        self._plan: Tuple[Tuple[int, str, int, np.dtype, int], ...] = tuple(
            (i, b.name, _WRITE if b.access == "write" else _RW if b.access == "read_write" else _READ,
             b.dtype, b.count or 0)
            for i, b in enumerate(program._args)
        )
        self._nargs = len(self._plan)
        self._n_inputs = sum(1 for p in self._plan if p[2] != _WRITE)
        self._n_outputs = sum(1 for p in self._plan if p[2] != _READ)
        # Free (args, entries, sizes, result, error) sets: the vyre_arg array,
        # its elements, the bytes and out_bytes each element holds now, and
        # the result and error structs. A caller pops one and puts it back
        # after a successful dispatch (list.pop/append are atomic, so threads
        # never share one). Only data/bytes/out/out_bytes are ever written,
        # and those a buffer's kind uses are written on every call.
        self._pool: List[_Slot] = []
        self._dispatch = _lib().vyre_dispatch

    def _new_slot(self) -> _Slot:
        n = self._nargs
        args = ffi.new(_T_ARGS, n) if n else _NULL
        entries = [args[i] for i in range(n)]
        res = ffi.new(_T_RESULT)
        res.struct_size = _RESULT_SIZE
        err = ffi.new(_T_ERROR)
        err.struct_size = _ERROR_SIZE
        return (args, entries, [0] * (2 * n), res, err)

    def _handle(self) -> Any:
        if self._ptr is None:
            raise invalid_argument(
                f"kernel of program '{self.program.name}' was released (or its device closed). "
                "Fix: compile the program again."
            )
        return self._ptr

    def _forget(self) -> None:
        if self._ptr is not None:
            self._ptr = None
            self.program._release()

    def release(self) -> None:
        """Releases the compiled module now. Idempotent."""
        ptr = self._ptr
        if ptr is None:
            return
        if not self.device.closed:
            _lib().vyre_kernel_release(ptr)
        self._forget()

    def __del__(self) -> None:
        try:
            self.release()
        except Exception:
            pass

    def __enter__(self) -> "Kernel":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()

    def plan_grid(self, inputs: Optional[Mapping[str, Any]] = None, grid: Grid = None) -> Tuple[int, int, int]:
        """The grid a dispatch with these inputs would use (IR-GRID-2), or
        the refusal a dispatch would raise; runs nothing."""
        m = _Marshal(self, inputs, None, grid, 1, None)
        g = ffi.new("uint32_t[3]")
        err = _new_error()
        _check(_lib().vyre_kernel_plan_grid(self._handle(), m.args, m.count, m.opts, g, err), err)
        return (int(g[0]), int(g[1]), int(g[2]))

    def run(
        self,
        inputs: Optional[Mapping[str, Any]] = None,
        grid: Grid = None,
        *,
        out: Optional[MutableMapping[str, np.ndarray]] = None,
        repeat: int = 1,
        timeout: Optional[float] = None,
    ) -> Dict[str, np.ndarray]:
        """Same as :meth:`Device.run` with this kernel."""
        ptr = self._ptr
        if (
            ptr is None
            or inputs.__class__ is not dict
            or grid is not None
            or repeat != 1
            or timeout is not None
            or (out is not None and out.__class__ is not dict)
        ):
            return self._run_general(inputs, grid, out, repeat, timeout)
        # The fast path: every input a C-contiguous ndarray of its buffer's
        # dtype, every out= array valid. Anything else goes to the general
        # path, which converts or raises the error that says what to fix.
        pool = self._pool
        try:
            slot = pool.pop()
        except IndexError:
            slot = self._new_slot()
        entries, sizes = slot[1], slot[2]
        outputs: Dict[str, np.ndarray] = {}
        keep = []  # the from_buffer cdata, which keep the arrays alive during the call
        n_in = n_out = 0
        bound = False
        v: Any
        fb = _fb_direct
        chars = _CHARS
        try:
            for i, name, kind, dt, count in self._plan:
                a = entries[i]
                j = i + i
                if kind != _WRITE:
                    v = inputs.get(name)
                    if v.__class__ is not _ndarray:
                        break
                    d = v.dtype
                    if d is not dt and d != dt:
                        break
                    # A buffer request without strides is refused for an array
                    # that is not C-contiguous (PEP 3118 PyBUF_SIMPLE): ValueError.
                    c = fb(chars, v, False)
                    keep.append(c)
                    a.data = c
                    nb = v.nbytes
                    if nb != sizes[j]:
                        a.bytes = sizes[j] = nb
                    n_in += 1
                    if kind == _READ:
                        continue
                    elems = v.size
                else:
                    elems = count
                o = out.get(name) if out else None
                if o is None:
                    o = _empty(v.shape, dt) if kind == _RW else _empty(count, dt)
                else:
                    if o.__class__ is not _ndarray and not isinstance(o, _ndarray):
                        break
                    d = o.dtype
                    if (d is not dt and d != dt) or o.size < elems:
                        break
                    n_out += 1
                # PyBUF_WRITABLE: a read-only array is refused (ValueError), as
                # is one that is not C-contiguous.
                c = fb(chars, o, True)
                keep.append(c)
                a.out = c
                nb = o.nbytes
                if nb != sizes[j + 1]:
                    a.out_bytes = sizes[j + 1] = nb
                outputs[name] = o
            else:
                # Every buffer was bound; an input or out= name the program
                # does not have (or an out= for a read buffer) leaves a count short.
                bound = n_in == len(inputs) and (out is None or n_out == len(out))
        except (ValueError, TypeError, BufferError):
            pass  # the general path says what is wrong
        if not bound:
            pool.append(slot)
            return self._run_general(inputs, grid, out, repeat, timeout)
        res, err = slot[3], slot[4]
        st = self._dispatch(ptr, slot[0], self._nargs, _NULL, res, err)
        if st != 0:
            # The slot's error and result now hold this failure: drop the slot.
            raise _error_from(st, err, _trap_of(res) if st == _TRAPPED else None)
        pool.append(slot)
        if out is not None and n_out != self._n_outputs:
            out.update(outputs)  # as the general path: out= gets every output
        return outputs

    def _run_general(
        self,
        inputs: Optional[Mapping[str, Any]],
        grid: Grid,
        out: Optional[MutableMapping[str, np.ndarray]],
        repeat: int,
        timeout: Optional[float],
    ) -> Dict[str, np.ndarray]:
        m = _Marshal(self, inputs, out, grid, repeat, timeout)
        res = ffi.new(_T_RESULT)
        res.struct_size = _RESULT_SIZE
        err = ffi.new(_T_ERROR)
        err.struct_size = _ERROR_SIZE
        st = _lib().vyre_dispatch(self._handle(), m.args, m.count, m.opts, res, err)
        if st != 0:
            raise _error_from(st, err, _trap_of(res) if st == Status.TRAPPED else None)
        if out is not None:
            out.update(m.outputs)
        return m.outputs

    def stream(self, capacity: int = 64, *, timeout: Optional[float] = None) -> "Stream":
        """Opens a :class:`Stream` of items through this kernel with a ring of
        ``capacity`` slots; ``timeout`` (seconds) is a deadline per item."""
        return Stream(self, capacity, timeout)

    def __repr__(self) -> str:
        return f"vyre.Kernel({self.program.name!r} on {self.device.backend!r})"


# ---------------------------------------------------------------------------
# Streams
# ---------------------------------------------------------------------------

_STREAM_FINISH = 0
_STREAM_CANCEL = 1
_WAIT_FOREVER = 0xFFFFFFFFFFFFFFFF


def _ns(timeout: Optional[float], what: str) -> int:
    if timeout is None:
        return _WAIT_FOREVER
    if timeout < 0:
        raise invalid_argument(f"{what} {timeout!r} s is negative. Fix: pass seconds >= 0, or None.")
    return int(timeout * 1e9)


class Stream:
    """Items through one kernel (vyre_stream_*, docs/guide.md section 9): a
    ring of ``capacity`` slots that :meth:`submit` fills while the device
    drains it; results come back in submission order and are collected with
    :meth:`result`. Inputs are copied at submit; each item's output arrays
    are kept by the stream until :meth:`result` returns them. A slot stays
    taken until its item is collected, so a full ring makes :meth:`submit`
    wait (``block``) or raise ``BUSY``. After a device loss the stream
    recovers and replays the items not yet collected. Close it with
    :meth:`close` (or use it as a context manager)."""

    def __init__(self, kernel: Kernel, capacity: int = 64, timeout: Optional[float] = None) -> None:
        if not isinstance(capacity, (int, np.integer)) or capacity < 1:
            raise invalid_argument(f"capacity {capacity!r} is not a count >= 1. Fix: pass capacity >= 1.")
        self.kernel = kernel
        opts = ffi.new("vyre_stream_options *")
        _lib().vyre_stream_options_init(opts)
        opts.capacity = int(capacity)
        if timeout is not None:
            if timeout <= 0:
                raise invalid_argument(f"timeout {timeout!r} s is not positive. Fix: pass seconds > 0, or None.")
            opts.timeout_ns = max(1, int(timeout * 1e9))
        out = ffi.new("vyre_stream **")
        err = _new_error()
        _check(_lib().vyre_stream_open(kernel._handle(), opts, out, err), err)
        self._ptr = out[0]
        self._pending: Dict[int, _Marshal] = {}

    def _handle(self) -> Any:
        if self._ptr is None:
            raise invalid_argument("the stream was closed. Fix: open a new one with Kernel.stream().")
        if self.kernel.device.closed:
            self._ptr = None
            raise invalid_argument("the stream's device was closed. Fix: open a new device and stream.")
        return self._ptr

    def submit(
        self,
        inputs: Optional[Mapping[str, Any]] = None,
        grid: Grid = None,
        *,
        out: Optional[MutableMapping[str, np.ndarray]] = None,
        block: bool = True,
        timeout: Optional[float] = None,
    ) -> int:
        """Queues one item (host arrays only, as for :meth:`Kernel.run`) and
        returns its sequence number. With a full ring it waits for a slot
        (``block``, up to ``timeout`` seconds; None: as long as it takes), or
        raises ``BUSY`` at once (``block=False``)."""
        ptr = self._handle()
        m = _Marshal(self.kernel, inputs, out, grid, 1, None)
        g = _NULL
        if grid is not None:
            g = ffi.new("uint32_t[3]", list(_triple(grid, "grid")))
        seq = ffi.new("uint64_t *")
        err = _new_error()
        wait = _ns(timeout, "timeout") if block else 0
        _check(_lib().vyre_stream_submit(ptr, m.args, m.count, g, wait, seq, err), err)
        self._pending[int(seq[0])] = m  # its output arrays are the stream's until result()
        return int(seq[0])

    def done(self, seq: int) -> bool:
        """True when item ``seq`` has completed (:meth:`result` returns at once)."""
        flag = ffi.new("uint32_t *")
        err = _new_error()
        _check(_lib().vyre_stream_poll(self._handle(), seq, flag, err), err)
        return bool(flag[0])

    def result(self, seq: int, timeout: Optional[float] = None) -> Dict[str, np.ndarray]:
        """Waits for item ``seq`` (up to ``timeout`` seconds; None: forever),
        collects it and returns its outputs by buffer name, or raises its
        error (``TRAPPED`` with ``.trap``; ``TIMEOUT`` leaves it queued)."""
        res = ffi.new(_T_RESULT)
        res.struct_size = _RESULT_SIZE
        err = _new_error()
        st = _lib().vyre_stream_wait(self._handle(), seq, _ns(timeout, "timeout"), res, err)
        if st == Status.TIMEOUT:
            raise _error_from(st, err)
        m = self._pending.pop(seq, None)
        if st != 0:
            raise _error_from(st, err, _trap_of(res) if st == Status.TRAPPED else None)
        return m.outputs if m is not None else {}

    def stats(self) -> Dict[str, int]:
        """items, submissions, device_time_ns, recoveries, replays and more
        (vyre_stream_stats)."""
        st = ffi.new("vyre_stream_stats *")
        st.struct_size = ffi.sizeof("vyre_stream_stats")
        err = _new_error()
        _check(_lib().vyre_stream_stats_get(self._handle(), st, err), err)
        return {f: int(getattr(st, f)) for f, _ in ffi.typeof("vyre_stream_stats").fields if f != "struct_size"}

    def close(self, cancel: bool = False) -> None:
        """Finishes every submitted item (or, with ``cancel``, drops those not
        started) and closes the stream. Uncollected results are dropped.
        Idempotent."""
        ptr, self._ptr = self._ptr, None
        if ptr is None or self.kernel.device.closed:
            self._pending.clear()
            return
        err = _new_error()
        st = _lib().vyre_stream_close(ptr, _STREAM_CANCEL if cancel else _STREAM_FINISH, err)
        self._pending.clear()
        _check(st, err)

    def __enter__(self) -> "Stream":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close(cancel=exc[0] is not None)

    def __del__(self) -> None:
        try:
            self.close(cancel=True)
        except Exception:
            pass

    def __repr__(self) -> str:
        return f"vyre.Stream({self.kernel.program.name!r} on {self.kernel.device.backend!r})"


# ---------------------------------------------------------------------------
# Resident buffers
# ---------------------------------------------------------------------------


class Resident:
    """A device buffer that lives between dispatches (docs/abi.md
    ABI-RESIDENT-1): bind it by passing it as a buffer's input to
    :meth:`Device.run`, or in a :class:`Step` of :meth:`Device.sequence`.
    Offsets and counts are in elements of :attr:`dtype`."""

    def __init__(self, device: Device, ptr: Any, count: int, dtype: np.dtype) -> None:
        self.device = device
        self._ptr = ptr
        self.count = count
        self.dtype = dtype

    @property
    def nbytes(self) -> int:
        return self.count * 4

    def _handle(self) -> Any:
        if self._ptr is None:
            raise invalid_argument(
                "resident buffer was freed (or its device closed). Fix: allocate it again with "
                "Device.alloc or Device.upload."
            )
        return self._ptr

    def _check_device(self, device: Device) -> None:
        if self.device is not device:
            raise invalid_argument(
                f"resident buffer of {self.count} elements belongs to another device "
                f"({self.device.backend}). Fix: allocate it on the device that runs the dispatch."
            )

    def _forget(self) -> None:
        self._ptr = None

    def _range(self, offset: int, count: int) -> Any:
        if offset < 0 or count < 0:
            raise invalid_argument(
                f"resident range offset {offset}, count {count} is negative. Fix: pass offsets and "
                "counts >= 0, in elements."
            )
        r = ffi.new("vyre_resident_range *")
        r.buffer = self._handle()
        r.offset = offset * 4
        r.size = count * 4
        return r

    def write(self, data: ArrayLike, offset: int = 0) -> None:
        """Copies |data| (converted to :attr:`dtype` when it is not) into the
        buffer from element |offset|."""
        arr = np.asarray(data)
        if arr.dtype != self.dtype:
            arr = arr.astype(self.dtype)
        arr = np.ascontiguousarray(arr)
        r = self._range(offset, arr.size)
        c = _from_buffer(arr)
        r.src = c
        err = _new_error()
        _check(_lib().vyre_resident_write(self.device._handle(), r, 1, err), err)

    def read(self, count: Optional[int] = None, offset: int = 0, out: Optional[np.ndarray] = None) -> np.ndarray:
        """Copies |count| elements (default: to the end) from element |offset|
        into a new array of :attr:`dtype`, or into |out|."""
        if count is None:
            count = self.count - offset if out is None else out.size
        if out is None:
            out = np.empty(max(count, 0), dtype=self.dtype)
        elif not isinstance(out, np.ndarray) or not out.flags.c_contiguous or not out.flags.writeable \
                or out.itemsize != 4 or out.size < count:
            raise invalid_argument(
                f"out for a read of {count} elements must be a writable C-contiguous numpy array of "
                f"4-byte elements holding at least {count}. Fix: pass such an array, or none."
            )
        r = self._range(offset, count)
        c = _from_buffer(out, require_writable=True)
        r.dst = c
        err = _new_error()
        _check(_lib().vyre_resident_read(self.device._handle(), r, 1, err), err)
        return out

    def free(self) -> None:
        """Frees the device buffer now. Idempotent."""
        ptr = self._ptr
        if ptr is None:
            return
        self._ptr = None
        if not self.device.closed:
            err = _new_error()
            _check(_lib().vyre_resident_free(ptr, err), err)

    def __del__(self) -> None:
        try:
            self.free()
        except Exception:
            pass

    def __enter__(self) -> "Resident":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.free()

    def __repr__(self) -> str:
        return f"vyre.Resident({self.count} x {self.dtype} on {self.device.backend!r})"


def status_name(code: int) -> str:
    """libvyre's name of a status code (``vyre_status_string``)."""
    return str(ffi.string(_lib().vyre_status_string(code)).decode())
