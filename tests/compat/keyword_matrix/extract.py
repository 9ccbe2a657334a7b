#!/usr/bin/env python3
"""Extracts HAProxy 2.6's keyword lists from its manuals.

Reads configuration.txt and management.txt (plain or .gz, as Debian's
haproxy-doc installs them) and prints one keyword per line:

    <category> TAB <keyword> TAB <where> TAB <synopsis>

<where> is, for proxy keywords, the sections of the manual's matrix (4.1)
that accept the keyword: d (defaults), f (frontend), l (listen), b
(backend); "-" elsewhere. <synopsis> is the manual's first line for the
entry (its arguments), which the probe generator uses to guess them.

Usage: extract.py DOCDIR > keywords.txt
"""

import gzip
import os
import re
import sys

# Sections of the configuration language with a body of their own; the
# manual describes each in a chapter, not in a list.
SECTIONS = ["userlist", "peers", "resolvers", "mailers", "ring", "program",
            "cache", "fcgi-app", "log-forward", "http-errors"]

# Rule sets whose actions have one entry each in 4.2, and the category
# name they get in the list.
RULESETS = [("http-request", "http-request"),
            ("http-response", "http-response"),
            ("http-after-response", "http-after-response"),
            ("tcp-request connection", "tcp-request-connection"),
            ("tcp-request session", "tcp-request-session"),
            ("tcp-request content", "tcp-request-content"),
            ("tcp-response content", "tcp-response-content")]


def read_doc(docdir, name):
    for path, opener in ((name, open), (name + ".gz", gzip.open)):
        full = os.path.join(docdir, path)
        if os.path.exists(full):
            with opener(full, "rt", encoding="utf-8", errors="replace") as f:
                return f.read().split("\n")
    return None


HEADING = re.compile(r"^(\d+(\.\d+)*)\.\s+\S")


def chapter(lines, number):
    """Lines of chapter <number> ("5.1"), from its title (the second one:
    the first is in the table of contents) to the next title."""
    start = None
    for i, line in enumerate(lines):
        m = HEADING.match(line)
        if not m:
            continue
        if start is not None:
            return lines[start:i]
        if m.group(1) == number and i + 1 < len(lines) and \
                lines[i + 1].startswith("---"):
            start = i + 2
    return lines[start:] if start is not None else []


def entries(lines, gap=False):
    """Synopsis lines of the entries of a reference chapter: runs of lines
    at column 0, after a blank line, immediately followed by an indented
    line (the description). Text paragraphs are followed by a blank line
    or by more text at column 0 and are skipped. With <gap>, a blank line
    may separate the synopsis from its description (4.2 does that)."""
    out = []
    i = 0
    while i < len(lines):
        if lines[i] and not lines[i][0].isspace() and \
                (i == 0 or not lines[i - 1].strip()):
            j = i
            while j < len(lines) and lines[j] and not lines[j][0].isspace():
                j += 1
            k = j + 1 if gap and j < len(lines) and not lines[j] else j
            if k < len(lines) and lines[k][:1] in (" ", "\t") and \
                    lines[k].strip():
                out.extend(lines[i:j])
            i = j
        i += 1
    return out


def emit(out, seen, cat, kw, where="-", synopsis=""):
    if (cat, kw) in seen:
        return
    seen.add((cat, kw))
    out.append("\t".join((cat, kw, where, synopsis.strip())))


def global_keywords(conf, out, seen):
    """The bullet list at the start of chapter 3, with the first synopsis
    of each keyword from 3.1 to 3.3."""
    syn = {}
    for num in ("3.1", "3.2", "3.3"):
        for line in entries(chapter(conf, num)):
            syn.setdefault(line.split()[0], line)
    for line in chapter(conf, "3"):
        m = re.match(r"^\s+- (\S+)", line)
        if m:
            emit(out, seen, "global", m.group(1), "-", syn.get(m.group(1), ""))


def proxy_keywords(conf, out, seen):
    syn = {}
    for line in entries(chapter(conf, "4.2"), gap=True):
        words = line.split()
        for n in (3, 2, 1):
            syn.setdefault(" ".join(words[:n]), line)
    for line in chapter(conf, "4.1"):
        m = re.match(r"^(\S.*?)\s{2,}(?:\(\S+\)\s+)?"
                     r"(X|-)(?: \(!\))?\s+(X|-)\s+(X|-)\s+(X|-)\s*$", line)
        if not m:
            continue
        kw = re.sub(r"\s*\(\*\)$", "", m.group(1)).strip()
        if kw == "keyword":
            continue
        where = "".join(c for c, v in zip("dflb", m.groups()[1:]) if v == "X")
        emit(out, seen, "proxy", kw, where or "-", syn.get(kw, ""))


def actions(conf, out, seen):
    for line in entries(chapter(conf, "4.2"), gap=True):
        for prefix, cat in RULESETS:
            if not line.startswith(prefix + " "):
                continue
            rest = line[len(prefix) + 1:].split()
            if not rest or rest[0].startswith("<"):
                continue
            kw = re.sub(r"\(.*", "", rest[0])
            if kw in ("connection", "session", "content", "inspect-delay"):
                continue
            emit(out, seen, cat, kw, "-", line)


def option_keywords(conf, number, cat, out, seen):
    for line in entries(chapter(conf, number)):
        kw = line.split()[0]
        emit(out, seen, cat, kw, "-", line)


# map_<match_type>[_<output_type>] stands for one converter per match type
MAP_MATCH = ["str", "beg", "sub", "dir", "dom", "end", "reg", "regm", "int",
             "ip"]


def samples(conf, out, seen):
    for line in entries(chapter(conf, "7.3.1")):
        kw = re.split(r"[(\s]", line)[0]
        if kw == "map_<match_type>":
            for m in MAP_MATCH:
                emit(out, seen, "converter", "map_" + m, "-", line)
        elif kw == "map_<match_type>_<output_type>":
            for m in MAP_MATCH:
                for o in ("int", "ip"):
                    emit(out, seen, "converter", "map_%s_%s" % (m, o), "-",
                         line)
        elif re.match(r"^[a-z0-9][a-z0-9_.+-]*$", kw):
            emit(out, seen, "converter", kw, "-", line)
    for num in ("7.3.2", "7.3.3", "7.3.4", "7.3.5", "7.3.6"):
        for line in entries(chapter(conf, num)):
            if " : " not in line:
                continue
            kw = re.split(r"[(\s]", line)[0]
            if re.match(r"^[a-z0-9][a-z0-9_.+-]*$", kw):
                emit(out, seen, "fetch", kw, "-", line)


def cli_commands(mgmt, out, seen):
    """Entries of management.txt 9.3: the words of the synopsis before the
    first argument ("show servers state")."""
    for line in entries(chapter(mgmt, "9.3")):
        words = []
        for w in line.split():
            if re.match(r"^[a-z][a-z0-9_-]*$", w):
                words.append(w)
            else:
                break
        if words:
            emit(out, seen, "cli", " ".join(words), "-", line)


def main():
    docdir = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/doc/haproxy"
    conf = read_doc(docdir, "configuration.txt")
    if conf is None:
        sys.exit("extract.py: no configuration.txt under %s" % docdir)
    out, seen = [], set()
    global_keywords(conf, out, seen)
    proxy_keywords(conf, out, seen)
    option_keywords(conf, "5.1", "bind", out, seen)
    option_keywords(conf, "5.2", "server", out, seen)
    actions(conf, out, seen)
    samples(conf, out, seen)
    for s in SECTIONS:
        emit(out, seen, "section", s)
    mgmt = read_doc(docdir, "management.txt")
    if mgmt is not None:
        cli_commands(mgmt, out, seen)
    print("# HAProxy 2.6 keywords, from %s (tests/compat/keyword_matrix/"
          "extract.py)" % docdir)
    print("# category\tkeyword\twhere (proxy: d f l b)\tsynopsis")
    print("\n".join(out))


if __name__ == "__main__":
    main()
