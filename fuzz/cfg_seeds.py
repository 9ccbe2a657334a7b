#!/usr/bin/env python3
"""Seed corpus and dictionary of fuzz/fuzz_cfg.c.

The corpus: the configurations of the regression tests and the example
configuration.

Every `haproxy NAME -conf[-OK|-BAD "..."] { ... }` block of reg-tests/**/*.vtc
becomes one file of fuzz/corpus/cfg/, its varnishtest macros replaced by
values the parser accepts: addresses and ports of the test servers, fd@N for
pre-bound sockets, and the fuzzer's file directory (FZ_DIR of fuzz_cfg.c,
which holds the map, list and error files the tests name) for ${testdir}
and ${tmpdir}. Macros of the environment (${SLUICE_TEST_...}) are kept: the
parser expands them.

The dictionary, fuzz/cfg.dict: the words of the keyword tables of src/
(configuration keywords, actions, fetches, converters, options: the first
strings of every `{ "word", ...` table line) and the syntax of the
language (conditions, directives, address prefixes, flags).

Run from the repository root: python3 fuzz/cfg_seeds.py
"""
import glob
import os
import re
import sys

FZ_DIR = "/tmp/sluice-fuzz-cfg"
OUT = "fuzz/corpus/cfg"
DICT = "fuzz/cfg.dict"

SYNTAX = [
    "global", "defaults", "frontend", "backend", "listen", "http-errors",
    "if", "unless", "{", "}", "||", "or", "!", "from",
    ".if", ".elif", ".else", ".endif", ".notice", ".warning", ".alert", ".diag",
    "defined(", "feature(", "streq(", "strneq(", "version_atleast(", "version_before(",
    "%[", "]", "%{+Q}", "%%", "${", "}", "${FZ}", "${FZ_ADDR}", "\\", "\"", "'",
    "-m", "-i", "-f", "-u", "-n", "-M", "--", "-m found", "-m str", "-m reg", "-m beg",
    "127.0.0.1:8080", "[::1]:80", "/tmp/s.sock", "unix@", "fd@3", "localhost",
    "host.invalid", "10.0.0.0/8", "1.2.3.4", FZ_DIR + "/map_acl.map",
    FZ_DIR + "/map_acl.lst", FZ_DIR + "/str.map", FZ_DIR + "/503.http",
    FZ_DIR + "/body.txt", "len", "code", "status", "content-type", "hdr",
    "lf-file", "lf-string", "string", "file", "errorfiles", "deny_status",
    "location", "prefix", "scheme", "weight", "maxconn", "backup", "check",
    "level admin", "mode http", "mode tcp", "10s", "100ms", "1d",
]

ENTRY = re.compile(r'^\s*\{\s*"([^"\\]{1,40})"\s*,\s*(?:"([^"\\]{1,40})")?')


def dict_words():
    words = set(SYNTAX)
    for path in sorted(glob.glob("src/**/*.c", recursive=True)):
        for line in open(path, encoding="utf-8", errors="replace"):
            m = ENTRY.match(line)
            if m:
                words.update(w for w in m.groups() if w)
    return sorted(words)


def write_dict():
    with open(DICT, "w") as f:
        f.write("# libFuzzer dictionary of fuzz_cfg.c, written by fuzz/cfg_seeds.py\n")
        for w in dict_words():
            esc = w.replace("\\", "\\\\").replace('"', '\\"')
            f.write('"%s"\n' % esc)


HEAD = re.compile(r'^\s*haproxy\s+(\w+)\s+-conf(?:-OK|-BAD\s+"(?:[^"\\]|\\.)*")?\s*\{', re.M)


def block_at(text, start):
    """The text between the brace at <start> and its matching brace."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[start + 1:i]
    return None


def macro(m):
    name = m.group(1)
    if name in ("testdir", "tmpdir"):
        return FZ_DIR
    if name.endswith("_addr"):
        return "127.0.0.1"
    if name.endswith("_port"):
        return "8080"
    if name.endswith("_sock"):
        return "127.0.0.1:8080"
    if name.endswith("_pid"):
        return "4242"
    if re.fullmatch(r"[a-z][a-z0-9_]*", name):
        return "3"          # a socket varnishtest binds: fd@${fe1}
    return m.group(0)       # environment: the parser's business


def dedent(body):
    lines = body.split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    indents = [len(l) - len(l.lstrip()) for l in lines if l.strip()]
    cut = min(indents) if indents else 0
    return "\n".join(l[cut:] for l in lines).rstrip() + "\n"


def main():
    os.makedirs(OUT, exist_ok=True)
    count = 0
    for vtc in sorted(glob.glob("reg-tests/**/*.vtc", recursive=True)):
        text = open(vtc, encoding="utf-8", errors="replace").read()
        for m in HEAD.finditer(text):
            body = block_at(text, m.end() - 1)
            if body is None:
                continue
            body = re.sub(r"\$\{([^}]*)\}", macro, dedent(body))
            base = os.path.splitext(vtc[len("reg-tests/"):])[0].replace("/", "-")
            with open(os.path.join(OUT, "%s-%s.cfg" % (base, m.group(1))), "w") as f:
                f.write(body)
            count += 1
    with open("examples/proxy.cfg") as src, open(os.path.join(OUT, "example.cfg"), "w") as f:
        f.write(src.read())
    print("%d configurations written to %s" % (count + 1, OUT), file=sys.stderr)
    write_dict()


if __name__ == "__main__":
    main()
