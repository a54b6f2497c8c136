#!/usr/bin/env python3
"""List the functions in src/ longer than a limit (default 150 lines), longest first.

Usage: scripts/long_fns.py [LIMIT] [DIR]
A function starts at a line whose first token after the indentation is `fn` (with any of
`pub`, `pub(crate)`, `const`, `unsafe`, `async` before it) and ends at the first later line
that is a `}` at the same indentation; one-line and bodiless functions are skipped. A
function that carries a reason for its length says "Long by design" in the comment block
directly above it (doc comments and attributes included); such functions are marked
"(reason given)".
"""
import os
import re
import sys

START = re.compile(r'^(\s*)(?:pub(?:\([^)]*\))?\s+)?(?:const\s+|unsafe\s+|async\s+)*fn\s+(\w+)')


def scan(path):
    lines = open(path, encoding='utf-8').read().split('\n')
    out = []
    for i, line in enumerate(lines):
        m = START.match(line)
        if not m:
            continue
        indent = m.group(1)
        # Find the end: a line `}` at the same indentation.
        for j in range(i, len(lines)):
            if lines[j] == indent + '}':
                k = i
                while k > 0 and lines[k - 1].strip().startswith(('//', '#[')):
                    k -= 1
                above = '\n'.join(lines[k:i]).lower()
                out.append((j - i + 1, path, i + 1, m.group(2), 'long by design' in above))
                break
            if j > i and START.match(lines[j]) and len(START.match(lines[j]).group(1)) <= len(indent):
                break  # a bodiless declaration (trait method): no closing brace of its own
    return out


def main():
    limit = int(sys.argv[1]) if len(sys.argv) > 1 else 150
    root = sys.argv[2] if len(sys.argv) > 2 else 'src'
    found = []
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith('.rs'):
                found += scan(os.path.join(d, f))
    for n, path, ln, name, reason in sorted(found, reverse=True):
        if n > limit:
            print(f"{n:5} {path}:{ln} {name}{'  (reason given)' if reason else ''}")


if __name__ == '__main__':
    main()
