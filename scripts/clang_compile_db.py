#!/usr/bin/env python3
"""Print a GCC build's compile_commands.json as clang-based tools can read it.

GCC's precompiled header (CELOS_PCH, `-include .../cmake_pch.hxx` with a `.gch` beside it) is
not a file clang can load, and `-Winvalid-pch` means nothing to it: both are dropped. Every
translation unit compiles without the PCH (a CELOS_PCH=OFF build proves it), so nothing else
changes. Usage: clang_compile_db.py build/dev/compile_commands.json > out/compile_commands.json
"""
import json
import shlex
import sys


def without_pch(words):
    out = []
    skip = False
    for i, word in enumerate(words):
        if skip:
            skip = False
            continue
        if word == "-Winvalid-pch":
            continue
        if word == "-include" and i + 1 < len(words) and words[i + 1].endswith("cmake_pch.hxx"):
            skip = True
            continue
        out.append(word)
    return out


def main(path):
    try:
        with open(path, encoding="utf-8") as f:
            entries = json.load(f)
    except (OSError, ValueError) as error:
        sys.exit(f"clang_compile_db: cannot read {path}: {error}")
    for entry in entries:
        if "arguments" in entry:
            entry["arguments"] = without_pch(entry["arguments"])
        else:
            entry["command"] = shlex.join(without_pch(shlex.split(entry["command"])))
    json.dump(entries, sys.stdout, indent=1)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: clang_compile_db.py BUILD/compile_commands.json")
    main(sys.argv[1])
