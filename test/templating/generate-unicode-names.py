#!/usr/bin/env python3
"""The Unicode name table of functions/templating/unicode-names-data.ts, for `\\N{NAME}` escapes.

Written from CPython's own database (the Python that runs Jinja2 is the reference): every name
that a `\\N{...}` escape in a Python string resolves (checked one by one through the
unicode-escape codec, which is how Jinja2's lexer decodes string literals), beside the names
Python computes (CJK UNIFIED IDEOGRAPH-XXXX, whose ranges are written too, and HANGUL SYLLABLE,
which the engine composes). Name aliases are not in it: Python does not list them.

Run from the repository root with the Python the goldens are written with (3.11, Unicode 14.0.0):

    python3 test/templating/generate-unicode-names.py
"""

import base64
import os
import unicodedata
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "functions", "templating", "unicode-names-data.ts")


def resolves(name, char):
    try:
        return ("\\N{%s}" % name).encode("ascii").decode("unicode-escape") == char
    except UnicodeDecodeError:
        return False


def main():
    lines = []
    cjk = []
    previous = 0
    for cp in range(0x110000):
        char = chr(cp)
        name = unicodedata.name(char, None)
        if name is None:
            continue
        if name.startswith("CJK UNIFIED IDEOGRAPH-"):
            if cjk and cjk[-1][1] == cp - 1:
                cjk[-1][1] = cp
            else:
                cjk.append([cp, cp])
            continue
        if name.startswith("HANGUL SYLLABLE ") or not resolves(name, char):
            continue
        lines.append(f"{cp - previous:x} {name}")
        previous = cp
    packed = zlib.compress("\n".join(lines).encode("ascii"), 9)[2:-4]  # raw deflate
    text = base64.b64encode(packed).decode("ascii")
    ranges = ", ".join(f"[0x{a:x}, 0x{b:x}]" for a, b in cjk)
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(
            "// Written by test/templating/generate-unicode-names.py from CPython's Unicode database\n"
            f"// ({unicodedata.unidata_version}): do not edit. {len(lines)} names, raw-deflated lines of\n"
            "// `<code point minus the previous one, in hex> <NAME>`.\n"
            f"export const UNICODE_VERSION = '{unicodedata.unidata_version}';\n"
            f"export const CJK_UNIFIED_RANGES: readonly (readonly [number, number])[] = [{ranges}];\n"
            f"export const NAMES_DEFLATED =\n  '{text}';\n"
        )
    print(f"{len(lines)} names, {len(packed)} bytes deflated, {len(text)} base64 -> {os.path.relpath(OUT)}")


if __name__ == "__main__":
    main()
