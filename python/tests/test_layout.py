# SPDX-License-Identifier: Apache-2.0
"""The cffi declarations (vyre/_ffi.py) match the C headers: every struct's
size and every field's offset, compiled from host/include/vyre/vyre.h."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from vyre._ffi import STRUCTS, ffi

from conftest import REPO


def test_struct_layouts_match_the_headers(tmp_path) -> None:
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    inc = REPO / "host" / "include"
    if cc is None or not (inc / "vyre" / "vyre.h").is_file():
        pytest.skip(f"needs a C compiler and the headers in {inc}")
    lines = ['#include <stddef.h>', '#include <stdio.h>', '#include "vyre/vyre.h"', "int main(void) {"]
    expected = []
    for s in STRUCTS:
        lines.append(f'  printf("{s} %zu\\n", sizeof({s}));')
        expected.append(f"{s} {ffi.sizeof(s)}")
        for field, _ in ffi.typeof(s).fields:
            lines.append(f'  printf("{s}.{field} %zu\\n", offsetof({s}, {field}));')
            expected.append(f"{s}.{field} {ffi.offsetof(s, field)}")
    lines += ["  return 0;", "}"]
    src = tmp_path / "layout.c"
    src.write_text("\n".join(lines) + "\n")
    exe = tmp_path / "layout"
    subprocess.run([cc, "-std=c11", "-I", str(inc), "-I", str(REPO / "abi"), str(src), "-o", str(exe)],
                   check=True)
    got = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split("\n")
    assert got[:-1] == expected
