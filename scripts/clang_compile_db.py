#!/usr/bin/env python3
"""Print a GCC build's compile_commands.json as clang-based tools can read it.

A unity build (cmake/CelosUnity.cmake, on by default) compiles
generated files that include several sources each (`.../celos_unity/<target>/unity_0.cc`); each
of them becomes one entry per source it includes (a relative include is resolved from the
unity file's folder), with the same command, so that a tool can be asked about a source file.

GCC's precompiled header (CELOS_PCH, `-include .../cmake_pch.hxx` with a `.gch` beside it) is
not a file clang can load, and `-Winvalid-pch` means nothing to it: both are dropped. Every
translation unit compiles without the PCH (a CELOS_PCH=OFF build proves it), so nothing else
changes. Usage: clang_compile_db.py build/dev/compile_commands.json > out/compile_commands.json
"""
import json
import os
import re
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


UNITY_INCLUDE = re.compile(r'^#include "(.+)"$', re.M)


def unity_sources(entry):
    """The sources a unity file includes, or None for an ordinary source."""
    path = os.path.join(entry.get("directory", ""), entry["file"])
    if not re.search(r"/celos_unity/[^/]+/unity_[^/]*$", path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            includes = UNITY_INCLUDE.findall(f.read())
    except OSError as error:
        sys.exit(f"clang_compile_db: cannot read the unity file {path}: {error}")
    return [os.path.normpath(os.path.join(os.path.dirname(path), i)) for i in includes]


def expanded(entries):
    """Each unity file's entry replaced by one per source it includes."""
    out = []
    for entry in entries:
        sources = unity_sources(entry)
        if sources is None:
            out.append(entry)
            continue
        for source in sources:
            one = dict(entry, file=source)
            if "arguments" in entry:
                one["arguments"] = [source if a == entry["file"] else a for a in entry["arguments"]]
            else:
                one["command"] = shlex.join(source if w == entry["file"] else w
                                            for w in shlex.split(entry["command"]))
            out.append(one)
    return out


def main(path):
    try:
        with open(path, encoding="utf-8") as f:
            entries = json.load(f)
    except (OSError, ValueError) as error:
        sys.exit(f"clang_compile_db: cannot read {path}: {error}")
    entries = expanded(entries)
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
