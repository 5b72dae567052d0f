#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""check_req_ids.py -- requirement ids (docs/README.md "Requirement ids").

    python3 tests/docs/check_req_ids.py [SOURCE_DIR]

Fails (exit 1) when a docs page defines an id twice (**IR-F32-1** at the start
of a sentence), when any source, test or docs file cites an id
(IR-F32-1, or a topic wildcard IR-F32-*) that no docs page defines, or when a
file cites the section numbers of the original spec (IR.md §N, ABI.md §N),
which differ from docs/. Run by ctest as test_docs_req_ids.
"""

import os
import re
import sys

DEFINE = re.compile(r"\*\*((?:IR|ABI|LOWER)-[A-Z0-9]+-[0-9]+)\*\*")
CITE = re.compile(r"(?<![A-Za-z0-9_-])((?:IR|ABI|LOWER)-[A-Z][A-Z0-9]*-(?:[0-9]+|\*))")
OLD = re.compile(r"\b(?:IR|ABI|CONFORMANCE|PERFORMANCE)\.md\b")
EXTS = (".c", ".h", ".hpp", ".cpp", ".py", ".sh", ".txt", ".md", ".cmake", ".json", ".1")
# v1_0: tests/abi/v1_0 is a frozen copy of the ABI 1.0 header, kept word for word.
SKIP_DIRS = {".git", "shared", "v1_0"}


def files(root):
    for d, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS and not x.startswith("build")]
        for n in names:
            if n.endswith(EXTS) or n == "CMakeLists.txt":
                yield os.path.join(d, n)


def check(root):
    errors = []
    defined = {}
    docs = os.path.join(root, "docs")
    for n in sorted(os.listdir(docs)):
        if not n.endswith(".md"):
            continue
        p = os.path.join(docs, n)
        with open(p, encoding="utf-8") as f:
            for i, line in enumerate(f, 1):
                for m in DEFINE.finditer(line):
                    rid = m.group(1)
                    if rid in defined:
                        errors.append("docs/%s:%d: %s is already defined at %s. Fix: give the "
                                      "new rule the next free number of its topic." %
                                      (n, i, rid, defined[rid]))
                    else:
                        defined[rid] = "docs/%s:%d" % (n, i)
    topics = {r.rsplit("-", 1)[0] for r in defined}
    for p in files(root):
        rel = os.path.relpath(p, root)
        try:
            with open(p, encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue
        for i, line in enumerate(text.split("\n"), 1):
            for m in CITE.finditer(line):
                rid = m.group(1)
                ok = rid.rsplit("-", 1)[0] in topics if rid.endswith("*") else rid in defined
                if not ok:
                    errors.append("%s:%d: cites %s, which no docs page defines. Fix: cite an id "
                                  "of docs/ir.md, docs/abi.md or docs/caches.md, or define it "
                                  "there." % (rel, i, rid))
            if OLD.search(line) and rel != os.path.join("tests", "docs", "check_req_ids.py"):
                errors.append("%s:%d: cites the original spec (%s), whose section numbers "
                              "differ from docs/. Fix: cite the docs/ id or page instead." %
                              (rel, i, OLD.search(line).group(0)))
    return defined, errors


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    defined, errors = check(os.path.abspath(root))
    for e in errors:
        print(e)
    if not defined:
        print("no requirement ids found under docs/. Fix: run from the source tree.")
        return 1
    print("%d ids defined, %d problems" % (len(defined), len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
