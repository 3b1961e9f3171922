#!/usr/bin/python3
"""Derive the built-in `like` profiles from real files and write
libtestdata/like_builtin.c (the profiles' JSON, as C strings).

Usage: tools/gen_like_profiles.py --cli build/programs/testdata
           [--shared /work/shared] [--out libtestdata/like_builtin.c] [--json-dir DIR]

Every profile is `testdata profile --name NAME -` over the concatenation of
its sources, named reproducibly: the project's shared real data
(../shared/realdata, ../shared/corpus: see their READMEs) and files of
Debian 12 packages (package and path below).  The SQLite database is built
here, deterministically, with Python's sqlite3 from iso-codes' JSON.  Only
the derived statistics are committed, never the data.

The model part of a profile depends only on the bytes, so re-running the
script on the same files gives the same generator (the same digests).  The
compressor timings of the fingerprint are measurements: they are left out
of built-in profiles (their ratios are kept), so that the file is
reproducible too.
"""
import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

# name -> (description, [sources]); a source is a path, "shared:REL" under
# --shared, or ("sqlite", builder name).
PROFILES = [
    ("english", "English prose: four Canterbury corpus texts (../shared/corpus)",
     ["shared:corpus/alice29.txt", "shared:corpus/asyoulik.txt", "shared:corpus/lcet10.txt",
      "shared:corpus/plrabn12.txt"]),
    ("html", "HTML pages (../shared/realdata: html, cp.html)",
     ["shared:realdata/html", "shared:realdata/cp.html"]),
    ("source", "C source and headers (../shared/realdata/fields.c; zlib1g-dev /usr/include/zlib.h, "
     "liblz4-dev /usr/include/lz4.h, liblzma-dev /usr/include/lzma/container.h)",
     ["shared:realdata/fields.c", "/usr/include/zlib.h", "/usr/include/lz4.h",
      "/usr/include/lzma/container.h"]),
    ("executable", "x86-64 ELF code (gzip /bin/gzip, libzstd1 /usr/lib/x86_64-linux-gnu/libzstd.so.1.5.4)",
     ["/bin/gzip", "/usr/lib/x86_64-linux-gnu/libzstd.so.1.5.4"]),
    ("json", "JSON records (iso-codes /usr/share/iso-codes/json/iso_639-3.json)",
     ["/usr/share/iso-codes/json/iso_639-3.json"]),
    ("lines", "text records, one a line (../shared/realdata/urls.10K)",
     ["shared:realdata/urls.10K"]),
    ("database", "SQLite database pages (built here from iso-codes iso_639-3.json, iso_4217.json)",
     [("sqlite", "iso")]),
    ("office", "Office spreadsheet, binary BIFF (../shared/realdata/kennedy.xls)",
     ["shared:realdata/kennedy.xls"]),
    ("pdf", "PDF with compressed streams (../shared/realdata/paper-100k.pdf)",
     ["shared:realdata/paper-100k.pdf"]),
    ("bitmap", "CCITT fax bitmap (../shared/realdata/ptt5)", ["shared:realdata/ptt5"]),
    ("protobuf", "protocol buffers (../shared/realdata/geo.protodata)", ["shared:realdata/geo.protodata"]),
    ("jpeg", "JPEG photo: compressed, incompressible (../shared/realdata/fireworks.jpeg)",
     ["shared:realdata/fireworks.jpeg"]),
]


def build_sqlite(path):
    """A SQLite database of iso-codes' languages and currencies: fixed page
    size, no journal, rows in file order, two indexes; the same bytes on
    every run with the same SQLite."""
    if os.path.exists(path):
        os.remove(path)
    con = sqlite3.connect(path)
    con.execute("PRAGMA page_size=4096")
    con.execute("PRAGMA journal_mode=OFF")
    con.execute("CREATE TABLE language (id INTEGER PRIMARY KEY, alpha3 TEXT, alpha2 TEXT, "
                "name TEXT, scope TEXT, type TEXT, inverted TEXT)")
    con.execute("CREATE TABLE currency (id INTEGER PRIMARY KEY, alpha3 TEXT, numeric INTEGER, "
                "name TEXT)")
    langs = json.load(open("/usr/share/iso-codes/json/iso_639-3.json", encoding="utf-8"))["639-3"]
    for i, e in enumerate(langs):
        con.execute("INSERT INTO language VALUES (?,?,?,?,?,?,?)",
                    (i, e.get("alpha_3"), e.get("alpha_2"), e.get("name"), e.get("scope"),
                     e.get("type"), e.get("inverted_name")))
    cur = json.load(open("/usr/share/iso-codes/json/iso_4217.json", encoding="utf-8"))["4217"]
    for i, e in enumerate(cur):
        con.execute("INSERT INTO currency VALUES (?,?,?,?)",
                    (i, e.get("alpha_3"), int(e.get("numeric", "0")), e.get("name")))
    con.execute("CREATE INDEX language_name ON language(name)")
    con.execute("CREATE INDEX currency_name ON currency(name)")
    con.commit()
    con.close()
    return open(path, "rb").read()


def source_bytes(src, shared, tmp):
    if isinstance(src, tuple):
        return build_sqlite(os.path.join(tmp, "db.sqlite"))
    if src.startswith("shared:"):
        src = os.path.join(shared, src[len("shared:"):])
    return open(src, "rb").read()


def c_string(s):
    """A C string literal in 4000-character pieces (compilers limit one)."""
    out = []
    for i in range(0, len(s), 4000):
        piece = s[i:i + 4000].replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        out.append('    "%s"' % piece)
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--shared", default=os.path.normpath(os.path.join(here, "..", "..", "shared")))
    ap.add_argument("--out", default=os.path.join(here, "..", "libtestdata", "like_builtin.c"))
    ap.add_argument("--json-dir", help="also write each profile as NAME.json here")
    a = ap.parse_args()
    if not os.path.isdir(a.shared):
        a.shared = "/work/shared"
    entries = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, desc, srcs in PROFILES:
            data = b"".join(source_bytes(s, a.shared, tmp) for s in srcs)
            r = subprocess.run([a.cli, "profile", "--name", name, "-"], input=data,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)
            prof = json.loads(r.stdout)
            for c in prof.get("fingerprint", {}).values():
                if isinstance(c, dict):
                    c.pop("ns_per_byte", None)
            text = json.dumps(prof, separators=(",", ":"), sort_keys=False) + "\n"
            if len(text) > 64 * 1024:
                sys.exit("%s: profile larger than 64 KiB" % name)
            entries.append((name, desc, text))
            if a.json_dir:
                os.makedirs(a.json_dir, exist_ok=True)
                open(os.path.join(a.json_dir, name + ".json"), "w").write(text)
            print("%-10s %8d bytes of sample -> %6d bytes of profile  (%s)" %
                  (name, len(data), len(text), desc), file=sys.stderr)
    with open(a.out, "w") as f:
        f.write("/* Built-in profiles of the `like` kind.  Generated by tools/gen_like_profiles.py:\n"
                " * do not edit.  Each string is a profile in its JSON form (docs/format.md). */\n")
        f.write('#include "like.h"\n\n')
        for name, desc, text in entries:
            f.write("/* %s */\nstatic const char p_%s[] =\n%s;\n\n" % (desc.replace("*/", "* /"), name,
                                                                     c_string(text)))
        f.write("const td__like_builtin td__like_builtins[] = {\n")
        for name, _, _ in entries:
            f.write('    {"%s", p_%s},\n' % (name, name))
        f.write("};\nconst unsigned td__like_nbuiltins = %d;\n" % len(entries))
        f.write("td_profile *td__like_builtin_objs[%d];\n" % len(entries))
        f.write("const char *const td__like_builtin_names[] = {%s, NULL};\n"
                % ", ".join('"%s"' % name for name, _d, _t in entries))


if __name__ == "__main__":
    main()
