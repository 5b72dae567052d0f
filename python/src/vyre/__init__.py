# SPDX-License-Identifier: Apache-2.0
"""vyre: run GPU compute programs on whatever accelerator a machine has.

The Python binding of libvyre (host/include/vyre/vyre.h)::

    import numpy as np
    import vyre

    dev = vyre.Device()                         # VYRE_BACKEND, else automatic
    prog = vyre.Program.from_file("examples/vadd.json")
    out = dev.run(prog, {"a": a, "b": b})["out"]   # numpy.uint32 array

Every failure raises :class:`vyre.Error` with ``.status`` (a
:class:`vyre.Status`: name and code) and libvyre's full message, which ends
with ``Fix: ...``. See docs/python.md.
"""

from ._core import (
    DTYPES,
    Backend,
    BatchResult,
    BufferInfo,
    Caps,
    Device,
    Job,
    Kernel,
    Program,
    Resident,
    Step,
    Stream,
    backends,
    status_name,
)
from ._errors import Error, Status, Trap
from . import ir

__version__ = "0.1.0"

__all__ = [
    "DTYPES",
    "Backend",
    "BatchResult",
    "BufferInfo",
    "Caps",
    "Device",
    "Error",
    "Job",
    "Kernel",
    "Program",
    "Resident",
    "Status",
    "Step",
    "Stream",
    "Trap",
    "backends",
    "ir",
    "status_name",
    "__version__",
]
