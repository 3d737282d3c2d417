#!/usr/bin/python3
"""The byte tables of docs/journal-format.md, made from journal/format/format.h.

format.h is the one authority on bytes: each layout there is a namespace of
Field constants, one per field, each with a comment saying what it holds.
This script turns each layout into a markdown table and puts it in the
document between the lines

    <!-- fields: NAMESPACE -->
    <!-- end fields -->

  scripts/format_tables.py           rewrite the tables in the document
  scripts/format_tables.py --check   exit 1, naming the layout, if one differs
                                     (the ctest format_doc)
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADER = ROOT / "journal" / "format" / "format.h"
DOC = ROOT / "docs" / "journal-format.md"

CONSTANT = re.compile(r"^inline constexpr \w+ (k\w+) = (\d+);")
FIELD = re.compile(r"^inline constexpr Field (k\w+)\{(\d+), ([^}]+)\};\s*(?://\s*(.*))?$")
BLOCK = re.compile(r"<!-- fields: (\w+) -->\n.*?<!-- end fields -->", re.S)


def layouts(header_text):
    """{namespace: [(name, offset, size, text)]} in the header's order."""
    constants, found, current, comment = {}, {}, None, []
    for line in header_text.splitlines():
        line = line.strip()
        if m := CONSTANT.match(line):
            constants[m.group(1)] = int(m.group(2))
        if m := re.match(r"^namespace (\w+) \{$", line):
            current, comment = m.group(1), []
            found[current] = []
        elif line.startswith("}  // namespace") and current:
            current = None
        elif current and line.startswith("//"):
            comment.append(line[2:].strip())
        elif current and (m := FIELD.match(line)):
            name, at, size, text = m.groups()
            size = eval(re.sub(r"k\w+", lambda k: str(constants[k.group(0)]), size))
            text = " ".join(comment + ([text] if text else []))
            found[current].append((name, int(at), size, text))
            comment = []
        else:
            comment = []
    return found


def table(fields):
    rows = ["| offset | size | field |", "|---:|---:|---|"]
    for name, at, size, text in fields:
        rows.append(f"| {at} | {size} | `{name}`{': ' + text if text else ''} |")
    return "\n".join(rows)


def main():
    check = sys.argv[1:] == ["--check"]
    found = layouts(HEADER.read_text())
    doc = DOC.read_text()
    stale = []

    def fill(m):
        name = m.group(1)
        if name not in found:
            sys.exit(f"{DOC}: no layout '{name}' in {HEADER}")
        block = f"<!-- fields: {name} -->\n{table(found[name])}\n<!-- end fields -->"
        if block != m.group(0):
            stale.append(name)
        return block

    new = BLOCK.sub(fill, doc)
    if check:
        if stale:
            sys.exit(f"{DOC}: the tables of {', '.join(stale)} differ from {HEADER}: run {sys.argv[0]}")
        print(f"{DOC}: {len(BLOCK.findall(doc))} tables match {HEADER}")
        return
    DOC.write_text(new)
    print(f"rewrote {', '.join(stale) or 'nothing'}")


if __name__ == "__main__":
    main()
