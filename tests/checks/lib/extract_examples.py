#!/usr/bin/python3
"""Prints the shell examples of README.md and the man pages, one per record.

Each record is "DOC:LINE<TAB>EXPECT<TAB>COMMAND" with newlines in COMMAND
written as \\n, where EXPECT is "ok", "fail" (the example says it fails) or
"skip:REASON" (the document marks it as not runnable on one machine).

What counts as an example:
- README.md: every ```sh block, one example per command (continuation
  lines joined); a "$ " prompt is removed and lines without one after a
  prompted line are output, not commands. A block preceded by
  "<!-- example: not run here: REASON -->" is skipped with REASON; blocks
  marked "<!-- nrt-example:... -->" are run by nrt_c_api.sh, not here.
- man pages: the EXAMPLES section's .Dl lines (".Dl \\ \\ " continues the
  previous one) and .Bd -literal blocks; a "\\e" ends a continued line. A
  comment line '.\\" example: not run here: REASON' skips the next example.
Usage: extract_examples.py ROOT
"""
import os
import re
import sys


def commands_of(lines):
    """Joins continuation lines and drops prompts and shown output.

    `lines` holds (line number, text) pairs; returns (number, command)."""
    out = []
    prompted = any(text.lstrip().startswith("$ ") for _, text in lines)
    pending = None
    for number, text in lines:
        stripped = text.strip()
        if pending is not None:
            pending[1] += "\n" + stripped
            if not stripped.endswith("\\"):
                out.append(tuple(pending))
                pending = None
            continue
        if not stripped:
            continue
        if prompted:
            if not stripped.startswith("$ "):
                continue  # what the command prints
            stripped = stripped[2:]
        if stripped.endswith("\\"):
            pending = [number, stripped]
        else:
            out.append((number, stripped))
    if pending is not None:
        out.append(tuple(pending))
    return out


def expectation(command, skip):
    if skip:
        return "skip:" + skip
    return "fail" if re.search(r"#\s*fails\b", command) else "ok"


def readme_examples(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    skip = None
    block = None
    marker = None
    for i, text in enumerate(lines, 1):
        m = re.match(r"\s*<!-- example: not run here: (.*?) -->", text)
        if m:
            skip = m.group(1)
            continue
        if re.match(r"\s*<!-- nrt-example:", text):
            marker = "nrt"
            continue
        if block is None and text.startswith("```sh"):
            block = []
            continue
        if block is not None and text.startswith("```"):
            if marker != "nrt":
                for number, command in commands_of(block):
                    yield number, expectation(command, skip), command
            block, skip, marker = None, None, None
            continue
        if block is not None:
            block.append((i, text))
        elif text.strip() and not text.lstrip().startswith("<!--"):
            skip, marker = None, None  # a mark holds for the block right after it


def man_text(text):
    """Turns mdoc escapes in a literal line into what the reader types."""
    text = text.replace("\\e", "\\").replace("\\-", "-").replace("\\ ", " ")
    text = text.replace("\\(aq", "'").replace("\\(dq", '"').replace("\\&", "")
    return text


def man_examples(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    in_section = False
    skip = None
    literal = None
    dl = None  # the (number, text) lines of one .Dl example

    def flush_dl():
        nonlocal dl, skip
        if dl is not None:
            for number, command in commands_of(dl):
                yield number, expectation(command, skip), command
            dl, skip = None, None

    for i, raw in enumerate(lines, 1):
        if raw.startswith(".Sh "):
            yield from flush_dl()
            in_section = raw.strip() == ".Sh EXAMPLES"
            continue
        if not in_section:
            continue
        m = re.match(r'\.\\" example: not run here: (.*)', raw)
        if m:
            yield from flush_dl()
            skip = m.group(1).strip()
            continue
        if literal is not None:
            if raw.startswith(".Ed"):
                for number, command in commands_of(literal):
                    yield number, expectation(command, skip), command
                literal, skip = None, None
            else:
                literal.append((i, man_text(raw)))
            continue
        if raw.startswith(".Bd -literal"):
            yield from flush_dl()
            literal = []
            continue
        if raw.startswith(".Dl "):
            body = raw[4:]
            if body.startswith("\\ \\ ") and dl is not None:
                dl.append((i, man_text(body)))
                continue
            yield from flush_dl()
            dl = [(i, man_text(body))]
            continue
        yield from flush_dl()
    yield from flush_dl()


def main():
    root = sys.argv[1]
    docs = [("README.md", readme_examples)]
    for name in sorted(os.listdir(os.path.join(root, "man"))):
        if re.search(r"\.[0-9]$", name):
            docs.append((os.path.join("man", name), man_examples))
    for doc, extract in docs:
        for number, expect, command in extract(os.path.join(root, doc)):
            flat = command.replace("\\\n", " ").replace("\n", " ")
            print(f"{doc}:{number}\t{expect}\t{flat}")


if __name__ == "__main__":
    main()
