#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Copies every docs/guide/*.c into its block of docs/guide.md:
#   <!-- snippet: docs/guide/NN_name.c -->
#   ```c
#   ...replaced by the file...
#   ```
#   <!-- /snippet -->
# tests/guide/check_guide.cmake (ctest guide_markdown) checks they agree.
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parents[2]
guide = root / "docs" / "guide.md"
text = guide.read_text()
pat = re.compile(r"(<!-- snippet: (\S+) -->\n```c\n)(.*?)(```\n<!-- /snippet -->)", re.S)


def fill(m):
    path = root / m.group(2)
    if not path.exists():
        sys.exit("docs/guide.md names %s, which does not exist" % m.group(2))
    return m.group(1) + path.read_text() + m.group(4)


new = pat.sub(fill, text)
if new != text:
    guide.write_text(new)
    print("docs/guide.md: snippets updated")
