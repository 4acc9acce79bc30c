"""Check one --help text (stdin) against the style written down in tools/sasstune/cli.c."""
import re
import sys

name = sys.argv[1]
text = sys.stdin.read()
lines = text.rstrip("\n").split("\n")
bad = []
if not lines[0].startswith("usage: "):
    bad.append("first line is not 'usage: ...'")
for i, l in enumerate(lines, 1):
    if len(l) > 100:
        bad.append("line %d has %d columns" % (i, len(l)))
    if len(l) <= 30 and re.match(r"^[A-Za-z][^:]*:$", l) and not l[0].islower():
        bad.append("line %d: heading not lowercase: %r" % (i, l))
    if re.match(r"^(Environment|Exit status|Options|Commands)\b", l):
        bad.append("line %d: capitalised section: %r" % (i, l[:40]))
if "options:" not in lines:
    bad.append("no 'options:' heading")
if not any(re.match(r"^  -h, --help\b", l) for l in lines):
    bad.append("no '  -h, --help' entry")
if not lines[-1].startswith("exit status: ") and not any(l.startswith("exit status: ") for l in lines[-3:]):
    bad.append("does not end with an 'exit status: ...' line")
if any(l.startswith("environment:") and l != "environment:" for l in lines):
    bad.append("'environment:' must be a heading alone on its line")
for b in bad:
    print("%s: %s" % (name, b))
print("%s: %s" % (name, "bad" if bad else "ok"))
sys.exit(1 if bad else 0)
