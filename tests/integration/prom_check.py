#!/usr/bin/env python3
# prom_check.py FILE: FILE is Prometheus text exposition (format 0.0.4)
# as a scraper reads it: each family a HELP and a TYPE line once, then
# all of its samples together (a family's samples after another family
# began are what the format forbids and prometheus_client's parser
# reads as a second family); sample names are the family's; labels
# well-formed; values numbers; gauges and counters only.  Exit 1 with
# the first fault on stderr.
import re
import sys

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)'
                    r'(\{[a-zA-Z_][a-zA-Z0-9_]*="[^"\\]*"'
                    r'(,[a-zA-Z_][a-zA-Z0-9_]*="[^"\\]*")*\})? '
                    r'(-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?)$')


def main(path):
    seen_help, seen_type, done = set(), {}, set()
    current = None
    series = set()
    for n, line in enumerate(open(path), 1):
        line = line.rstrip("\n")
        where = "%s:%d: " % (path, n)
        if line.startswith("# HELP "):
            name = line.split()[2]
            if name in seen_help:
                sys.exit(where + "a second HELP for " + name)
            if current and current != name:
                done.add(current)
            if name in done:
                sys.exit(where + name + " again after other families")
            seen_help.add(name)
            current = name
            continue
        if line.startswith("# TYPE "):
            f = line.split()
            if len(f) != 4 or f[3] not in ("counter", "gauge"):
                sys.exit(where + "bad TYPE line: " + line)
            if f[2] in seen_type:
                sys.exit(where + "a second TYPE for " + f[2])
            if current != f[2]:
                sys.exit(where + "TYPE of %s under HELP of %s" % (f[2], current))
            seen_type[f[2]] = f[3]
            continue
        if not line.strip():
            continue            # empty lines are ignored
        if line.startswith("#"):
            sys.exit(where + "unexpected line: " + line)
        m = SAMPLE.match(line)
        if not m:
            sys.exit(where + "bad sample: " + line)
        if m.group(1) != current or current not in seen_type:
            sys.exit(where + "%s sampled in the family %s" % (m.group(1), current))
        key = m.group(1) + (m.group(2) or "")
        if key in series:
            sys.exit(where + "the same series twice: " + key)
        series.add(key)
        if seen_type[current] == "counter" and not current.endswith("_total"):
            sys.exit(where + "counter %s without _total" % current)
        if seen_type[current] == "counter" and float(m.group(4)) < 0:
            sys.exit(where + "negative counter: " + line)
    print("ok: %d families, %d series" % (len(seen_type), len(series)))


if __name__ == "__main__":
    main(sys.argv[1])
