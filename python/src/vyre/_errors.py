# SPDX-License-Identifier: Apache-2.0
"""vyre.Error and vyre.Status: every failure of the package raises Error."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Optional


class Status(enum.IntEnum):
    """The status codes of VYRE_STATUS_LIST (abi/vyre/vyre_backend.h;
    docs/errors.md says what causes each and what to do). ``.name`` is the
    stable name libvyre's ``vyre_status_string`` gives, ``.value`` the code.
    A code this package does not know becomes a member named ``UNKNOWN``
    carrying that code."""

    OK = 0
    INVALID_PROGRAM = 1
    INVALID_ARGUMENT = 2
    UNSUPPORTED = 3
    OUT_OF_MEMORY = 4
    COMPILE_FAILED = 5
    DISPATCH_FAILED = 6
    TRAPPED = 7
    TIMEOUT = 8
    DEVICE_LOST = 9
    UNAVAILABLE = 10
    INCOMPATIBLE_ABI = 11
    CACHE_ERROR = 12
    INTERNAL = 13
    BUSY = 14

    @classmethod
    def _missing_(cls, value: object) -> Optional["Status"]:
        if not isinstance(value, int):
            return None
        member = int.__new__(cls, value)
        member._name_ = "UNKNOWN"
        member._value_ = value
        return member


@dataclass(frozen=True)
class Trap:
    """What a trap that fired reported (docs/ir.md IR-TRAP-1): the bit mask
    of the sites that fired, the lowest linear invocation id that trapped and
    the value of its trap (IR-TRAP-3; 0 for a trap without a value)."""

    sites: int
    invocation: int
    value: int = 0


class Error(Exception):
    """A failure: ``.status`` (a :class:`Status`, with ``.name`` and the code as
    its value), ``.code`` (the code as an int), ``.message`` (libvyre's full
    message, which names what failed with its values and ends with
    ``Fix: ...``), ``.native_code`` (CUresult, VkResult, errno... or 0) and,
    for ``TRAPPED``, ``.trap``. ``str(error)`` is ``"NAME (code): message"``."""

    status: Status
    message: str
    native_code: int
    trap: Optional[Trap]

    def __init__(
        self,
        status: int,
        message: str,
        native_code: int = 0,
        trap: Optional[Trap] = None,
    ) -> None:
        self.status = Status(status)
        self.message = message
        self.native_code = native_code
        self.trap = trap
        super().__init__(str(self))

    @property
    def code(self) -> int:
        return int(self.status)

    def __str__(self) -> str:
        return f"{self.status.name} ({int(self.status)}): {self.message}"

    def __repr__(self) -> str:
        return f"vyre.Error({self.status.name}, {self.message!r})"

    def __reduce__(self) -> Any:
        return (Error, (int(self.status), self.message, self.native_code, self.trap))


def invalid_argument(message: str) -> Error:
    """An INVALID_ARGUMENT found by the package itself, before libvyre is
    called; |message| ends with "Fix: ..." like libvyre's."""
    return Error(Status.INVALID_ARGUMENT, message)
