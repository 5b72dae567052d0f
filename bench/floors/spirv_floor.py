# SPDX-License-Identifier: Apache-2.0
"""spirv_floor.py -- what the generators of the hand-written SPIR-V floors
(gen_spirv_sgemm_rb.py, gen_spirv_int_hash.py) share: assemble the text
with `spirv-as --target-env vulkan1.0`, check it with `spirv-val`, and
write the assembly and a C header of its words, or with --check report
either file stale.
"""
import os
import struct
import subprocess
import sys
import tempfile


def header(name, guard, array, comment, words):
    """The C header holding |words| as `static const uint32_t |array|[]`,
    opened by |comment| (lines after the SPDX line, without the `// `)."""
    out = ["// SPDX-License-Identifier: Apache-2.0", "//", "// %s -- %s" % (name, comment[0])]
    out += ["// " + line if line else "//" for line in comment[1:]]
    out += ["", "#ifndef " + guard, "#define " + guard, "", "#include <stdint.h>", "",
            "static const uint32_t %s[] = {" % array]
    for i in range(0, len(words), 8):
        out.append("    " + ", ".join("0x%08x" % w for w in words[i:i + 8]) + ",")
    out += ["};", "", "#endif // " + guard, ""]
    return "\n".join(out)


def run(argv, tool, text, asm_path, hdr_path, make_header):
    """The generators' main: |text| assembled and validated, then written to
    |asm_path| and |hdr_path| (make_header(words) gives the header), or with
    --check in |argv| compared with them. Returns the exit status (77: the
    SPIR-V tools are missing under --check, a skip for ctest)."""
    check = "--check" in argv
    with tempfile.TemporaryDirectory() as d:
        src, spv = os.path.join(d, "k.spvasm"), os.path.join(d, "k.spv")
        with open(src, "w") as f:
            f.write(text)
        try:
            subprocess.run(["spirv-as", "--target-env", "vulkan1.0", src, "-o", spv], check=True)
            subprocess.run(["spirv-val", "--target-env", "vulkan1.0", spv], check=True)
        except FileNotFoundError:
            print("%s: spirv-as or spirv-val not found. Fix: install spirv-tools." % tool,
                  file=sys.stderr)
            return 77 if check else 2
        except subprocess.CalledProcessError as err:
            print("%s: %s failed (%d). Fix: correct the generator."
                  % (tool, err.cmd[0], err.returncode), file=sys.stderr)
            return 1
        data = open(spv, "rb").read()
    words = struct.unpack("<%dI" % (len(data) // 4), data)
    hdr = make_header(words)
    if check:
        stale = [p for p, want in ((asm_path, text), (hdr_path, hdr))
                 if not os.path.exists(p) or open(p).read() != want]
        for p in stale:
            print("%s: %s is stale. Fix: run python3 bench/floors/%s." % (tool, p, tool),
                  file=sys.stderr)
        return 1 if stale else 0
    with open(asm_path, "w") as f:
        f.write(text)
    with open(hdr_path, "w") as f:
        f.write(hdr)
    print("wrote %s (%d lines) and %s (%d words)"
          % (asm_path, text.count("\n"), hdr_path, len(words)))
    return 0
