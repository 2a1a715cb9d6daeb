#!/usr/bin/env python3
"""Every function of our C++ in 60 lines or fewer (issue 24), the mains and the tests included.

    scripts/function_length.py [--max N] [FILE...]   (default: every tracked file of ours)

Prints each longer function as `path:line: N lines` and exits 1 if there is one. Not a C++
parser: comments, string and character literals and preprocessor lines are blanked, then braces
are matched; a brace opens a function when the text before it (since the last `;`, `{` or `}`)
has parentheses and it is not inside another function (lambdas and blocks inside count toward
their function). A TEST_CASE is a function.
"""

import argparse
import re
import subprocess
import sys

OURS = ["libcelos/*.cc", "libcelos/*.h", "celos-*/*.cc", "celos-*/*.h", "bench/*.cc",
        "bench/*.h", "fuzz/*.cc", "fuzz/*.h", "samples/*.cc", "samples/*.h"]
SCOPE = re.compile(r"^(template\s*<.*>\s*)?(namespace|class|struct|enum|union|extern)\b")
CONTROL = re.compile(r"^(if|for|while|switch|catch|do|else)\b")


def blank(text):
    """`text` with comments, literals and preprocessor lines turned to spaces (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i) or (text[i] == "#" and (i == 0 or text[i - 1] == "\n")):
            j = text.find("\n", i)
            j = n if j < 0 else j
            while text[j - 1] == "\\" and j < n:  # a continued macro
                j = text.find("\n", j + 1)
                j = n if j < 0 else j
            end = j
        elif text.startswith("/*", i):
            end = text.find("*/", i) + 2
        elif text.startswith('R"', i) and (i == 0 or not text[i - 1].isalnum()):
            delim = text[i + 2:text.index("(", i)]
            end = text.index(")" + delim + '"', i) + len(delim) + 2
        elif text[i] == '"' or (text[i] == "'" and not (i > 0 and text[i - 1].isalnum())):
            end = i + 1
            while text[end] != text[i]:
                end += 2 if text[end] == "\\" else 1
            end += 1
        else:
            out.append(text[i])
            i += 1
            continue
        out.append(re.sub(r"[^\n]", " ", text[i:end]))
        i = end
    return "".join(out)


def long_functions(path, limit):
    code = blank(open(path, encoding="utf-8").read())
    stack, last, found = [], 0, []
    for i, c in enumerate(code):
        if c == ";":
            last = i + 1
        elif c == "{":
            header = code[last:i].strip()
            kind = "block"
            if SCOPE.match(header):
                kind = "scope"
            elif all(k == "scope" for k, _ in stack) and "(" in header and not CONTROL.match(header):
                before = header.split("(")[0]
                kind = "function" if "=" not in before or "operator" in before else "block"
            stack.append((kind, i))
            last = i + 1
        elif c == "}":
            if stack:
                kind, start = stack.pop()
                if kind == "function":
                    first = code.count("\n", 0, start) + 1
                    lines = code.count("\n", start, i) + 1
                    if lines > limit:
                        found.append((first, lines))
            last = i + 1
    return found


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--max", type=int, default=60)
    p.add_argument("files", nargs="*")
    args = p.parse_args()
    files = args.files or subprocess.check_output(["git", "ls-files", "--"] + OURS,
                                                  text=True).split()
    bad = 0
    for path in files:
        for line, lines in long_functions(path, args.max):
            print("%s:%d: %d lines (at most %d)" % (path, line, lines, args.max))
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
