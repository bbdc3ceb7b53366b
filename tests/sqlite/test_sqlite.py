"""Tests of the amq SQLite extension through Python's stdlib sqlite3.

Run from the repository root with /usr/bin/python3 (the pyenv python3 cannot
load extensions): loads ./build/amq exactly as a user would, checks every
function, NULL handling, every error message word for word, the aggregates
(including 1M rows against the target false-positive rate), cuckoo full /
delete / count, byte-identical output, the per-statement filter cache, the
registered function list, the sqlite3 CLI, and value families (version 4
filters refuse a value of a family they do not hold; the filters amq 0.3.0
wrote, tests/fixtures, are read unchecked), the setting amq_work_mem, and
aggregates spilling past it to temporary files (in processes of their own,
spill_child.py). Prints "N passed, N failed".
"""

import itertools
import json
import math
import os
import random
import re
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

EXTENSION = os.environ.get("AMQ_SQLITE_EXTENSION", "./build/amq")
PYTHON = "/usr/bin/python3"

passed = 0
failed = 0


def check(cond, what):
    """Records one outcome; prints the failures."""
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {what}")


def connect(path=":memory:"):
    conn = sqlite3.connect(path, isolation_level=None)
    conn.enable_load_extension(True)
    conn.load_extension(EXTENSION)
    return conn


db = connect()


class deadline:
    """Interrupts statements on db that run past the given seconds, so a lost
    cache shows up as a failure instead of an hour-long run."""

    def __init__(self, seconds):
        self.seconds = seconds

    def __enter__(self):
        end = time.perf_counter() + self.seconds
        db.set_progress_handler(lambda: time.perf_counter() > end, 100000)

    def __exit__(self, *exc):
        db.set_progress_handler(None, 0)


def one(sql, params=()):
    return db.execute(sql, params).fetchone()[0]


def error_of(sql, params=(), conn=None):
    """The error message sql raises, or None."""
    try:
        (conn or db).execute(sql, params).fetchall()
    except sqlite3.Error as e:
        return str(e)
    return None


def expect_error(sql, message, params=()):
    got = error_of(sql, params)
    check(got == message, f"{sql}\n     got  {got!r}\n     want {message!r}")


def series(n, start=1):
    """SQL for a one-column table i = start .. start + n - 1."""
    return (f"WITH RECURSIVE n(i) AS (SELECT {start} UNION ALL SELECT i + 1 FROM n "
            f"WHERE i < {start + n - 1})")


def info(f, kind="bloom"):
    return json.loads(one(f"SELECT {kind}_info(?)", (f,)))


def fill(f, function="cuckoo_add", limit=None):
    """Adds 0, 1, 2, ... to cuckoo filter f through function until SQLite
    refuses one (or limit values went in): returns the last filter it gave,
    how many values went in and the refusal's message (None without one),
    for the checks that a full filter says so and loses nothing."""
    added = 0
    for v in itertools.count() if limit is None else range(limit):
        try:
            f = one(f"SELECT {function}(?, ?)", (f, v))
        except sqlite3.OperationalError as e:
            return f, added, str(e)
        added += 1
    return f, added, None


# The hints of sizing arguments of the wrong type (core/sql/arguments.c).
FPR_HINT = "pass a false-positive rate such as 0.01 for 1%"
CAPACITY_HINT = "pass the number of distinct values the filter must hold"
BLOOM_LAYOUTS_HINT = "use 'blocked' (the default), 'classic', 'counting', 'dleft' or 'scalable'"
CUCKOO_LAYOUTS_HINT = ("use 'b2', 'b4' or 'b8' (fingerprints per bucket), or 'semisorted' (b4 "
                       "with one bit less per item)")
NOT_A_FILTER = "pass a value built by bloom_agg, bloom_new, cuckoo_agg, cuckoo_new or fuse_agg"

# A number and a text test_bulk's random values never equal: seeds that give
# a filter both families before its rows go in.
SEED_NUMBER = -2000000000
SEED_TEXT = "seed"


# ---- the registered functions --------------------------------------------

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
FUNCTION_LIST = os.path.join(ROOT, "core", "sql", "function_list.h")
README = os.path.join(ROOT, "README.md")
# A row of core/sql/function_list.h: AMQ_SQL_FUNCTION or AMQ_SQL_AGGREGATE
# (name, kind, op, min_args, max_args, "arguments", returns, volatility), or
# AMQ_SQL_SETTING (name, min_args, max_args, "arguments", returns).
FUNCTION_ROW = re.compile(r'^AMQ_SQL_(FUNCTION|AGGREGATE)\((\w+), \w+, \w+, (\d+), (\d+), '
                          r'"[^"]*", \w+, (\w+)\)$', re.M)
SETTING_ROW = re.compile(r'^AMQ_SQL_SETTING\((\w+), (\d+), (\d+), "[^"]*", \w+\)$', re.M)
SQLITE_DETERMINISTIC = 0x800
SQLITE_INNOCUOUS = 0x200000
SQLITE_DIRECTONLY = 0x80000


def declared_functions():
    """core/sql/function_list.h's rows: {name: (aggregate, min_args, max_args,
    volatility)}, a setting's volatility SETTING, and how many lines start a
    row (parsed or not)."""
    with open(FUNCTION_LIST) as f:
        text = f.read()
    rows = {m[2]: (m[1] == "AGGREGATE", int(m[3]), int(m[4]), m[5])
            for m in FUNCTION_ROW.finditer(text)}
    rows.update({m[1]: (False, int(m[2]), int(m[3]), "SETTING")
                 for m in SETTING_ROW.finditer(text)})
    return rows, len(re.findall(r"^AMQ_SQL_(?:FUNCTION|AGGREGATE|SETTING)\(", text, re.M))


def test_registered_functions():
    declared, lines = declared_functions()
    check(len(declared) == lines and lines > 0,
          f"{FUNCTION_LIST}: parsed {len(declared)} of its {lines} rows")
    # The documented surface, independently of the registration: every
    # function has an entry `name(...` in README.md's SQL reference.
    with open(README) as f:
        readme = f.read()
    start = readme.index("\n## SQL reference\n")
    end = readme.find("\n## ", start + 1)
    reference = readme[start:end if end >= 0 else len(readme)]
    undocumented = sorted(n for n in declared if f"`{n}(" not in reference)
    check(not undocumented, f"README.md's SQL reference lacks {undocumented}")

    expected = {(name, n) for name, (_, lo, hi, _) in declared.items() for n in range(lo, hi + 1)}
    plain = sqlite3.connect(":memory:")
    listing = "SELECT name, narg, type, flags FROM pragma_function_list"
    before = {(r[0], r[1]) for r in plain.execute(listing)}
    rows = {(r[0], r[1]): r for r in db.execute(listing)}
    added = set(rows) - before
    check(added == expected,
          f"registered functions: extra {sorted(added - expected)}, "
          f"missing {sorted(expected - added)}")
    for key in sorted(added & expected):
        name, narg, kind, flags = rows[key]
        aggregate, _, _, volatility = declared[name]
        check(kind == ("a" if aggregate else "s"), f"{key} has type {kind}")
        pure = bool(flags & SQLITE_DETERMINISTIC and flags & SQLITE_INNOCUOUS)
        check(pure == (volatility == "IMMUTABLE"),
              f"{key} flags {flags:#x}: DETERMINISTIC | INNOCUOUS should be "
              f"{'set' if volatility == 'IMMUTABLE' else 'clear'} for {volatility}")
        # A setting is for top-level SQL only, never a view or trigger.
        check(bool(flags & SQLITE_DIRECTONLY) == (volatility == "SETTING"),
              f"{key} flags {flags:#x}: DIRECTONLY should be "
              f"{'set' if volatility == 'SETTING' else 'clear'} for {volatility}")
    check(any(v == "SETTING" for _, _, _, v in declared.values()),
          f"{FUNCTION_LIST}: no AMQ_SQL_SETTING row parsed")


def test_flags_in_use():
    # Innocuous functions may run inside views when the schema is untrusted.
    c = connect()
    c.execute("PRAGMA trusted_schema = OFF")
    c.execute("CREATE TABLE t(x)")
    c.execute("INSERT INTO t VALUES (1), (2)")
    c.execute("CREATE VIEW v AS SELECT bloom_contains(bloom_agg(x), 2) AS hit, "
              "cuckoo_count(cuckoo_agg(x), 1) AS n, amq_hash(1) = amq_hash(1.0) AS same FROM t")
    check(c.execute("SELECT * FROM v").fetchone() == (1, 1, 1), "functions inside a view")
    # Deterministic functions may index an expression.
    c.execute("CREATE INDEX t_hash ON t(amq_hash(x))")
    plan = " ".join(str(r) for r in c.execute(
        "EXPLAIN QUERY PLAN SELECT x FROM t WHERE amq_hash(x) = amq_hash(2)"))
    check("t_hash" in plan, f"index on amq_hash(x) is used: {plan}")
    check(c.execute("SELECT x FROM t WHERE amq_hash(x) = amq_hash(2.0)").fetchall() == [(2,)],
          "lookup through the amq_hash index")


# ---- hashing ----------------------------------------------------------------

def test_hashing():
    version = re.search(r'#define AMQ_VERSION "([^"]+)"', open("core/amq.h").read()).group(1)
    check(one("SELECT amq_version()") == version, "amq_version() is AMQ_VERSION")
    check(one("SELECT typeof(amq_hash(1))") == "integer", "amq_hash gives an INTEGER")
    check(one("SELECT amq_hash(NULL)") is None, "amq_hash(NULL) is NULL")
    check(one("SELECT amq_hash(3) = amq_hash(3.0)") == 1, "3 and 3.0 hash equally")
    check(one("SELECT amq_hash(0) = amq_hash(-0.0)") == 1, "0 and -0.0 hash equally")
    check(one("SELECT amq_hash(2) != amq_hash(2.5)") == 1, "2.5 is not truncated to 2")
    check(one("SELECT amq_hash('3') != amq_hash(3)") == 1, "'3' and 3 differ")
    check(one("SELECT amq_hash('abc') != amq_hash(X'616263')") == 1, "'abc' and X'616263' differ")
    check(one("SELECT amq_hash('') != amq_hash(X'')") == 1, "'' and X'' differ")
    hashes = {one("SELECT amq_hash(?)", (v,)) for v in (1, 2, "1", b"1", 1.5, "", b"")}
    check(len(hashes) == 7, "distinct values hash apart")
    # Text hashes as UTF-8 whatever the database encoding.
    utf16 = connect()
    utf16.execute("PRAGMA encoding = 'UTF-16le'")
    utf16.execute("CREATE TABLE t(s TEXT)")
    utf16.execute("INSERT INTO t VALUES ('h\u00e9llo \u4e16\u754c')")
    check(utf16.execute("SELECT amq_hash(s) FROM t").fetchone()[0] ==
          one("SELECT amq_hash('h\u00e9llo \u4e16\u754c')"), "text hashes as UTF-8 in a UTF-16 database")
    # The same rules inside filters (a tiny fpr rules out false positives):
    # a filter of every family answers no for the value of another family
    # that looks the same; one without blobs refuses the blob outright.
    for kind in ("bloom", "cuckoo"):
        f = one(f"SELECT {kind}_agg(x, 0.000001) FROM (SELECT 3 AS x UNION ALL SELECT 'abc' "
                "UNION ALL SELECT X'00')")
        got = db.execute(f"SELECT {kind}_contains(?1, 3.0), {kind}_contains(?1, 3), "
                         f"{kind}_contains(?1, 'abc'), {kind}_contains(?1, X'616263'), "
                         f"{kind}_contains(?1, '3'), {kind}_contains(?1, 3.5), "
                         f"{kind}_contains(?1, X'33'), {kind}_contains(?1, '')",
                         (f,)).fetchone()
        check(got == (1, 1, 1, 0, 0, 0, 0, 0), f"{kind}: 3 = 3.0, 'abc' != X'616263': {got}")
        f = one(f"SELECT {kind}_agg(x, 0.000001) FROM (SELECT 3 AS x UNION ALL SELECT 'abc')")
        expect_error(f"SELECT {kind}_contains(?, X'616263')",
                     f"{kind}_contains: value: the filter holds numbers and text, got blob "
                     "X'616263': use a number or text, the families the filter holds", (f,))
        f = one(f"SELECT {kind}_agg(x, 0.000001) FROM (SELECT 'abc' AS x)")
        expect_error(f"SELECT {kind}_contains(?, X'616263')",
                     f"{kind}_contains: value: the filter holds text, got blob X'616263': cast "
                     "the value (CAST(value AS TEXT); in PostgreSQL convert_from(value, 'UTF8'))",
                     (f,))
        check(one(f"SELECT {kind}_contains(?, CAST(X'616263' AS TEXT))", (f,)) == 1,
              f"{kind}: the cast the hint names finds 'abc'")
    # Python values arrive as the SQLite types they map to.
    check(one("SELECT amq_hash(?) = amq_hash(7.0)", (7,)) == 1, "bound 7 matches 7.0")
    check(one("SELECT amq_hash(?) = amq_hash(X'00ff')", (b"\x00\xff",)) == 1, "bound bytes are a blob")


# ---- bloom scalar functions -------------------------------------------------

def test_bloom_functions():
    f = one("SELECT bloom_new(1000, 0.01, 'classic')")
    i = info(f)
    check(isinstance(f, bytes) and f[:4] == b"AMQF", "bloom_new gives a filter blob")
    check(i["kind"] == "bloom" and i["layout"] == "classic" and i["items"] == 0 and
          i["bytes"] == len(f) and i["format_version"] == 4 and i["families"] == [] and
          f[4] == 4 and f[44] == 0, f"bloom_new info {i}")
    check(i["bits"] >= 9585 and 6 <= i["hashes"] <= 8, f"1000 items at 1%: {i}")
    for key in ("kind", "layout", "bits", "hashes", "items", "bytes", "expected_fpr",
                "format_version", "families"):
        check(key in i, f"bloom_info has {key}")
    b = one("SELECT bloom_new(1000, 0.01, 'blocked')")
    check(info(b)["layout"] == "blocked" and info(b)["bits"] % 512 == 0, "blocked layout")
    check(one("SELECT bloom_new(1000, 0.01, 'blocked') = bloom_new(1000, 0.01)") == 1,
          "'blocked' is the default layout")
    check(one("SELECT length(bloom_new(1e3, 0.01)) = length(bloom_new(1000, 0.01))") == 1,
          "an integral REAL capacity is accepted")

    for base in (f, b):
        # A filter takes its first add's family; one of every family is the
        # union of three.
        n = one("SELECT bloom_add(?, 42)", (base,))
        check(info(n)["families"] == ["numbers"] and n[44] == 1, f"bloom_add of 42: {info(n)}")
        expect_error("SELECT bloom_add(?, 'x')",
                     "bloom_add: value: the filter holds numbers, got text 'x': use a number, "
                     "the family the filter holds", (n,))
        g = one("SELECT bloom_union(bloom_union(?, bloom_add(?2, 'x')), bloom_add(?2, X'00'))",
                (n, base))
        check(info(g)["families"] == ["numbers", "text", "blobs"] and g[44] == 7,
              f"the union of three families: {info(g)}")
        check(one("SELECT bloom_contains(?, 42) AND bloom_contains(?, 42.0) AND "
                  "bloom_contains(?, 'x') AND bloom_contains(?, X'00')", (g, g, g, g)) == 1,
              "bloom_add then bloom_contains")
        check(one("SELECT bloom_contains(?, 42)", (base,)) == 0, "the original is unchanged")
        check(info(g)["items"] == 3, "bloom_add counts items")
        g2 = one("SELECT bloom_add(bloom_add(?, 'y'), X'01')", (g,))
        check(info(g2)["items"] == 5 and
              one("SELECT bloom_contains(?, 'y') AND bloom_contains(?, X'01')", (g2, g2)) == 1,
              "a filter of every family takes an add of each")
        check(one("SELECT bloom_add(?, NULL) = ?", (g, g)) == 1, "bloom_add of NULL: unchanged")
        check(one("SELECT typeof(bloom_contains(?, 7))", (g,)) == "integer", "contains is 0/1")

    a = one(f"{series(500)} SELECT bloom_agg(i, 0.01, 1000) FROM n")
    c = one(f"{series(500, 400)} SELECT bloom_agg(i, 0.01, 1000) FROM n")
    u = one("SELECT bloom_union(?, ?)", (a, c))
    x = one("SELECT bloom_intersect(?, ?)", (a, c))
    check(one(f"{series(899)} SELECT count(*) FROM n WHERE bloom_contains(?, i)", (u,)) == 899,
          "the union holds both sets")
    check(one(f"{series(101, 400)} SELECT count(*) FROM n WHERE bloom_contains(?, i)", (x,)) == 101,
          "the intersection holds the common values")
    check(one(f"{series(1000, 5000)} SELECT sum(bloom_contains(?, i)) FROM n", (x,)) <
          one(f"{series(1000, 5000)} SELECT sum(bloom_contains(?, i)) FROM n", (u,)),
          "the intersection answers yes less often than the union")
    check(one("SELECT bloom_union(?, ?) = ?", (a, a, a)) != 1 and
          one("SELECT bloom_contains(bloom_union(?, ?), 1)", (a, a)) == 1,
          "union with itself keeps membership")
    check(info(u)["items"] == 1000 and info(x)["items"] == 500, "union sums items, intersect takes min")
    streamed_all = one(f"{series(899)} SELECT bloom_agg(i, 0.01, 1000) FROM n")
    check(one("SELECT bloom_contains(?, 450)", (streamed_all,)) == 1, "streamed filter")

    big = one(f"{series(1000)} SELECT bloom_agg(i) FROM n")
    n = one("SELECT bloom_count(?)", (big,))
    check(isinstance(n, int) and abs(n - 1000) <= 30, f"bloom_count of 1000 distinct: {n}")
    check(one("SELECT bloom_count(bloom_new(100, 0.01))") == 0, "bloom_count of an empty filter")
    fpr = one("SELECT bloom_fpr(?)", (big,))
    check(isinstance(fpr, float) and 0.006 < fpr < 0.0115, f"bloom_fpr of a full filter: {fpr}")
    check(one("SELECT bloom_fpr(bloom_new(100, 0.01))") == 0.0, "bloom_fpr of an empty filter")


# ---- cuckoo scalar functions --------------------------------------------------

def test_cuckoo_functions():
    f = one("SELECT cuckoo_new(100)")
    i = info(f, "cuckoo")
    for key in ("kind", "buckets", "slots", "fingerprint_bits", "items", "load_factor", "bytes",
                "format_version", "families"):
        check(key in i, f"cuckoo_info has {key}")
    check(i["kind"] == "cuckoo" and i["items"] == 0 and i["bytes"] == len(f) and
          i["buckets"] * i["slots"] >= 100 and i["format_version"] == 4 and
          i["families"] == [] and f[4] == 4 and f[44] == 0, f"cuckoo_new info {i}")
    check(one("SELECT cuckoo_new(100) = cuckoo_new(100, 0.01)") == 1, "cuckoo fpr defaults to 0.01")
    check(info(one("SELECT cuckoo_new(100, 0.0001)"), "cuckoo")["fingerprint_bits"] >
          i["fingerprint_bits"], "a lower fpr means longer fingerprints")

    # At least capacity items fit; then it fills up with core's message.
    f, added, full = fill(f, limit=100000)
    check(added >= 100, f"cuckoo_new(100) took only {added} items")
    m = re.fullmatch(r"cuckoo filter is full \((\d+) items, load (\d+\.\d)%\): "
                     r"rebuild with cuckoo_agg or a larger capacity", full or "")
    check(m is not None, f"full message: {full!r}")
    if m:
        check(int(m.group(1)) == added, f"full message counts {m.group(1)} items")
        check(float(m.group(2)) >= 95.0, f"full at load {m.group(2)}%")
    check(one(f"{series(added, 0)} SELECT count(*) FROM n WHERE cuckoo_contains(?, i)",
              (f,)) == added, "nothing is lost when the filter refuses an add")

    # Text then a number: refused, the filter holds text. A filter of both
    # comes from cuckoo_agg over a column of both (which stores 'a' once).
    expect_error("SELECT cuckoo_add(cuckoo_add(cuckoo_add(cuckoo_new(100, 0.000001), 'a'), 'a'), 7)",
                 "cuckoo_add: value: the filter holds text, got number 7: cast the value "
                 "(CAST(7 AS TEXT), 7::text)")
    both = one("SELECT cuckoo_agg(x, 0.000001, 100) FROM (SELECT 'a' AS x UNION ALL SELECT 7)")
    check(len(both) == len(one("SELECT cuckoo_new(100, 0.000001)")) and
          info(both, "cuckoo")["families"] == ["numbers", "text"],
          f"cuckoo_agg of 'a' and 7: {info(both, 'cuckoo')}")
    g = one("SELECT cuckoo_add(?, 'a')", (both,))
    check(one("SELECT cuckoo_count(?, 'a'), cuckoo_count(?, 7), cuckoo_count(?, 7.0), "
              "cuckoo_count(?, 'b')", (g, g, g, g)) == 2, "count of a value added twice")
    check(db.execute("SELECT cuckoo_count(?, 7), cuckoo_count(?, 'b'), cuckoo_contains(?, 'a'), "
                     "cuckoo_contains(?, 'b')", (g, g, g, g)).fetchone() == (1, 0, 1, 0),
          "count and contains")
    h = one("SELECT cuckoo_delete(?, 'a')", (g,))
    check(db.execute("SELECT cuckoo_count(?, 'a'), cuckoo_contains(?, 'a')",
                     (h, h)).fetchone() == (1, 1), "delete removes one copy")
    h = one("SELECT cuckoo_delete(?, 'a')", (h,))
    check(db.execute("SELECT cuckoo_count(?, 'a'), cuckoo_contains(?, 'a'), cuckoo_contains(?, 7)",
                     (h, h, h)).fetchone() == (0, 0, 1), "delete of the last copy; others stay")
    check(info(h, "cuckoo")["items"] == 1, "items follow deletes")
    check(one("SELECT cuckoo_delete(?, 'zz') = ?", (g, g)) == 1, "delete of an absent value: unchanged")
    check(one("SELECT cuckoo_delete(?, 'a') = ?", (h, h)) == 1, "delete after the last copy: unchanged")
    check(one("SELECT cuckoo_add(?, NULL) = ? AND cuckoo_delete(?, NULL) = ?", (g, g, g, g)) == 1,
          "NULL values leave the filter unchanged")
    check(one("SELECT cuckoo_delete(cuckoo_add(?, 99), 99) = ?", (g, g)) == 1,
          "add then delete restores the bytes")


# ---- NULLs ----------------------------------------------------------------------

def test_nulls():
    f = one("SELECT bloom_new(10, 0.01)")
    c = one("SELECT cuckoo_new(10)")
    for sql, args in [
        ("bloom_new(NULL, 0.01)", ()), ("bloom_new(10, NULL)", ()),
        ("bloom_new(10, 0.01, NULL)", ()), ("bloom_add(NULL, 1)", ()),
        ("bloom_contains(NULL, 1)", ()), ("bloom_contains(?, NULL)", (f,)),
        ("bloom_union(NULL, ?)", (f,)), ("bloom_union(?, NULL)", (f,)),
        ("bloom_intersect(NULL, ?)", (f,)), ("bloom_intersect(?, NULL)", (f,)),
        ("bloom_count(NULL)", ()), ("bloom_fpr(NULL)", ()), ("bloom_info(NULL)", ()),
        ("cuckoo_new(NULL)", ()), ("cuckoo_new(10, NULL)", ()), ("cuckoo_add(NULL, 1)", ()),
        ("cuckoo_delete(NULL, 1)", ()), ("cuckoo_contains(NULL, 1)", ()),
        ("cuckoo_contains(?, NULL)", (c,)), ("cuckoo_count(NULL, 1)", ()),
        ("cuckoo_count(?, NULL)", (c,)), ("cuckoo_info(NULL)", ()), ("amq_hash(NULL)", ()),
        ("bloom_contains(NULL, NULL)", ()),
    ]:
        check(one(f"SELECT {sql}", args) is None, f"{sql} is NULL")
    check(one("SELECT bloom_add(?, NULL) = ?", (f, f)) == 1, "bloom_add(f, NULL) is f")
    # NULL is not a filter of the wrong type: NULL wins over a bad other argument.
    check(one("SELECT bloom_contains('junk', NULL)") is None, "NULL value, junk filter: NULL")


# ---- errors -------------------------------------------------------------------

def test_errors():
    f = one("SELECT bloom_new(10, 0.1, 'classic')")
    c = one("SELECT cuckoo_new(10)")
    # A filter argument that is not a blob.
    for fn, call in [
        ("bloom_add", "bloom_add({}, 1)"), ("bloom_contains", "bloom_contains({}, 1)"),
        ("bloom_count", "bloom_count({})"), ("bloom_fpr", "bloom_fpr({})"),
        ("bloom_info", "bloom_info({})"), ("cuckoo_add", "cuckoo_add({}, 1)"),
        ("cuckoo_delete", "cuckoo_delete({}, 1)"), ("cuckoo_contains", "cuckoo_contains({}, 1)"),
        ("cuckoo_count", "cuckoo_count({}, 1)"), ("cuckoo_info", "cuckoo_info({})"),
    ]:
        for literal, typ in (("'junk'", "text"), ("42", "integer"), ("4.5", "real")):
            expect_error(f"SELECT {call.format(literal)}",
                         f"{fn}: filter must be a blob, got {typ}")
    expect_error("SELECT bloom_union('junk', ?)",
                 "bloom_union: first filter must be a blob, got text", (f,))
    expect_error("SELECT bloom_union(?, 3)",
                 "bloom_union: second filter must be a blob, got integer", (f,))
    expect_error("SELECT bloom_intersect(1.5, ?)",
                 "bloom_intersect: first filter must be a blob, got real", (f,))
    expect_error("SELECT bloom_intersect(?, 'x')",
                 "bloom_intersect: second filter must be a blob, got text", (f,))
    expect_error("SELECT bloom_union_agg(x) FROM (SELECT 'junk' AS x)",
                 "bloom_union_agg: filter must be a blob, got text")

    # Blobs that are not filters: core's messages.
    expect_error("SELECT bloom_contains(X'', 1)",
                 f"bloom_contains: filter: a 0-byte value is shorter than the 64-byte header: {NOT_A_FILTER}")
    expect_error("SELECT cuckoo_contains(X'00', 1)",
                 f"cuckoo_contains: filter: a 1-byte value is shorter than the 64-byte header: {NOT_A_FILTER}")
    expect_error("SELECT bloom_count(zeroblob(100))",
                 f"bloom_count: filter: bad magic bytes: {NOT_A_FILTER}")
    expect_error("SELECT bloom_info(substr(?, 1, length(?) - 1))",
                 f"bloom_info: filter: {len(f) - 1} bytes where the header needs {len(f)}: "
                 "the value was truncated or padded; rebuild it", (f, f))
    expect_error("SELECT bloom_fpr(?)",
                 f"bloom_fpr: filter: {len(f) + 1} bytes where the header needs {len(f)}: "
                 "the value was truncated or padded; rebuild it", (f + b"\0",))
    damaged = f[:-1] + bytes([f[-1] ^ 1])
    checksum = ("{}: checksum mismatch: "
                "the stored bytes were damaged or edited; rebuild the filter")
    for sql in ("bloom_contains(?, 1)", "bloom_add(?, 1)", "bloom_count(?)"):
        expect_error(f"SELECT {sql}", checksum.format(sql.split("(")[0] + ": filter"), (damaged,))
    # Each filter argument is named: the damaged one is the second here.
    expect_error("SELECT bloom_union(?, ?)", checksum.format("bloom_union: second filter"),
                 (f, damaged))
    expect_error("SELECT bloom_union(?, ?)", checksum.format("bloom_union: first filter"),
                 (damaged, damaged))
    cdamaged = c[:-9] + bytes([c[-9] ^ 0x10]) + c[-8:]
    expect_error("SELECT cuckoo_count(?, 1)", checksum.format("cuckoo_count: filter"), (cdamaged,))
    version = bytearray(f)
    version[4] = 9
    expect_error("SELECT bloom_contains(?, 1)",
                 "bloom_contains: filter: amq filter format version 9 was written by a newer amq (this build reads "
                 "versions 1 to 5): upgrade amq here to read it, or rebuild the filter with "
                 "this version", (bytes(version),))

    # The other kind of filter.
    to_bloom = ("{}: expected a bloom filter, got a cuckoo filter: "
                "use the cuckoo_* functions for cuckoo filters")
    to_cuckoo = ("{}: expected a cuckoo filter, got a bloom filter: "
                 "use the bloom_* functions for bloom filters")
    for sql in ("bloom_contains(?, 1)", "bloom_add(?, 1)", "bloom_count(?)", "bloom_fpr(?)",
                "bloom_info(?)"):
        expect_error(f"SELECT {sql}", to_bloom.format(sql.split("(")[0] + ": filter"), (c,))
    expect_error("SELECT bloom_union(?, ?)", to_bloom.format("bloom_union: second filter"), (f, c))
    expect_error("SELECT bloom_intersect(?, ?)", to_bloom.format("bloom_intersect: first filter"),
                 (c, f))
    expect_error("SELECT bloom_union_agg(x) FROM (SELECT ? AS x UNION ALL SELECT ?)",
                 to_bloom.format("bloom_union_agg: filter"), (f, c))
    for sql in ("cuckoo_contains(?, 1)", "cuckoo_count(?, 1)", "cuckoo_add(?, 1)",
                "cuckoo_delete(?, 1)", "cuckoo_info(?)"):
        expect_error(f"SELECT {sql}", to_cuckoo.format(sql.split("(")[0] + ": filter"), (f,))
    # The kind is checked before the checksum, as in PostgreSQL: a damaged
    # filter of the other kind is reported as the other kind.
    expect_error("SELECT bloom_contains(?, 1)", to_bloom.format("bloom_contains: filter"),
                 (cdamaged,))

    # Filters that cannot be combined.
    g = one("SELECT bloom_new(1000, 0.1, 'classic')")
    mismatch = (f"cannot combine bloom filters with different parameters (classic {info(f)['bits']} "
                f"bits, {info(f)['hashes']} hashes, seed 0 vs classic {info(g)['bits']} bits, "
                f"{info(g)['hashes']} hashes, seed 0): build both filters with the same capacity, "
                "fpr and layout")
    expect_error("SELECT bloom_union(?, ?)", mismatch, (f, g))
    expect_error("SELECT bloom_intersect(?, ?)", mismatch, (f, g))
    expect_error("SELECT bloom_union_agg(x) FROM (SELECT ? AS x UNION ALL SELECT ?)", mismatch, (f, g))

    def expect_refused(value, message, *calls):
        """Each of calls, with value in place of {}, fails with message."""
        for call in calls:
            expect_error("SELECT " + call.format(value), message)

    # fpr.
    def bad_fpr(text):
        return (f"fpr must be between 0 and 1 (exclusive), got {text}: "
                "pass a false-positive rate such as 0.01 for 1%")
    for value, text in (("0", "0"), ("1", "1"), ("-0.5", "-0.5"), ("1.5", "1.5"), ("0.0", "0")):
        expect_refused(value, bad_fpr(text), "bloom_new(10, {})", "cuckoo_new(10, {})",
                       "bloom_agg(1, {})", "cuckoo_agg(1, {}, 10)")
    expect_error("SELECT bloom_new(10, '0.01')", f"fpr must be a number, got text: {FPR_HINT}")
    expect_error("SELECT cuckoo_new(10, X'01')", f"fpr must be a number, got blob: {FPR_HINT}")
    expect_error("SELECT bloom_agg(1, 'a')", f"fpr must be a number, got text: {FPR_HINT}")
    expect_error("SELECT cuckoo_agg(1, NULL)", f"fpr must be a number, got null: {FPR_HINT}")
    # SQLite turns a NaN into NULL before any function sees it.
    check(one("SELECT bloom_new(10, ?)", (float("nan"),)) is None, "a NaN fpr arrives as NULL")
    expect_error("SELECT bloom_agg(1, ?)", f"fpr must be a number, got null: {FPR_HINT}", (float("nan"),))

    # capacity.
    def bad_capacity(n):
        return (f"capacity must be at least 1, got {n}: "
                "pass the number of distinct values the filter must hold")
    for value in ("0", "-5"):
        expect_refused(value, bad_capacity(value), "bloom_new({}, 0.01)", "cuckoo_new({})",
                       "bloom_agg(1, 0.01, {})", "cuckoo_agg(1, 0.01, {})")
    expect_error("SELECT bloom_new('10', 0.01)", f"capacity must be an integer, got text: {CAPACITY_HINT}")
    expect_error("SELECT cuckoo_new(X'0a')", f"capacity must be an integer, got blob: {CAPACITY_HINT}")
    expect_error("SELECT bloom_new(1.5, 0.01)", f"capacity must be an integer, got real 1.5: {CAPACITY_HINT}")
    expect_error("SELECT cuckoo_agg(1, 0.01, 2.25)",
                 f"capacity must be an integer, got real 2.25: {CAPACITY_HINT}")
    expect_error("SELECT bloom_agg(1, 0.01, 1e19)",
                 f"capacity must be an integer, got real 1e+19: {CAPACITY_HINT}")
    too_large = re.compile(r"(bloom|cuckoo) filter would need (\d+) bytes, more than the 1 GiB "
                           r"limit: lower the capacity or raise the fpr")
    for sql in ("bloom_new(1e12, 0.01)", "bloom_new(9223372036854775807, 0.5)",
                "cuckoo_new(1e12)", "cuckoo_new(9223372036854775807, 0.5)",
                "bloom_agg(1, 0.01, 1e12)", "cuckoo_agg(1, 0.01, 1e12)",
                "bloom_new(1000000000, 0.0001, 'blocked')"):
        got = error_of(f"SELECT {sql}")
        m = too_large.fullmatch(got or "")
        check(m is not None and m.group(1) == sql[:sql.index("_")] and int(m.group(2)) > 2**30,
              f"{sql}: {got!r}")
    # SQLite's own blob limit is reported in our words.
    limited = connect()
    limited.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 100000)
    got = error_of("SELECT bloom_new(1000000, 0.01, 'classic')", conn=limited)
    check(got == "bloom_new: the filter needs 1198200 bytes, more than SQLite's blob limit of "
          "100000 bytes: lower the capacity or raise the fpr", f"blob limit: {got!r}")
    got = error_of(f"{series(100000)} SELECT cuckoo_agg(i) FROM n", conn=limited)
    check(got is not None and got.startswith("cuckoo_agg: the filter needs "), f"blob limit: {got!r}")

    # layout.
    expect_error("SELECT bloom_new(10, 0.01, 'fancy')",
                 "unknown bloom layout 'fancy': use 'blocked' (the default), 'classic', 'counting', 'dleft' or 'scalable'")
    expect_error("SELECT bloom_new(10, 0.01, 'Classic')",
                 "unknown bloom layout 'Classic': use 'blocked' (the default), 'classic', 'counting', 'dleft' or 'scalable'")
    expect_error("SELECT bloom_new(10, 0.01, 1)", f"layout must be text, got integer: {BLOOM_LAYOUTS_HINT}")
    expect_error("SELECT bloom_new(10, 0.01, X'00')", f"layout must be text, got blob: {BLOOM_LAYOUTS_HINT}")

    # Argument counts are SQLite's business.
    expect_error("SELECT bloom_new(10)", "wrong number of arguments to function bloom_new()")
    expect_error("SELECT bloom_agg(1, 0.01, 10, 'blocked', 4)",
                 "wrong number of arguments to function bloom_agg()")

    # fpr and capacity come from the first row; the rest are not consulted.
    check(one("SELECT bloom_agg(x, p) = bloom_agg(x, 0.05) FROM (SELECT 1 AS x, 0.05 AS p "
              "UNION ALL SELECT 2, 0.5)") == 1, "fpr is taken from the first row")


# ---- aggregates ---------------------------------------------------------------------

def test_aggregates():
    db.execute("CREATE TABLE empty(x)")
    for agg in ("bloom_agg", "cuckoo_agg"):
        kind = agg.split("_")[0]
        none = one(f"SELECT {agg}(x) FROM empty")
        check(isinstance(none, bytes) and info(none, kind)["items"] == 0,
              f"{agg} over no rows is an empty filter")
        check(one(f"SELECT {agg}(x) FROM (SELECT NULL AS x UNION ALL SELECT NULL)") == none,
              f"{agg} over only NULLs equals no rows")
        check(one(f"SELECT {agg}(NULL)") == none, f"{agg}(NULL) equals no rows")
        check(one(f"SELECT {kind}_contains(?, 1)", (none,)) == 0, f"{agg}: empty holds nothing")
        single = one(f"SELECT {agg}(42)")
        check(info(single, kind)["items"] == 1 and
              one(f"SELECT {kind}_contains(?, 42)", (single,)) == 1, f"{agg} over one row")
        check(one(f"SELECT {agg}(x) FROM (SELECT 42 AS x UNION ALL SELECT NULL)") == single,
              f"{agg} skips NULL values")
        dups = one(f"{series(100000)} SELECT {agg}(i % 100) FROM n")
        distinct = one(f"{series(100, 0)} SELECT {agg}(i) FROM n")
        check(dups == distinct, f"{agg}: 100,000 rows of 100 values give the 100-value filter")
        if kind == "cuckoo":
            check(one(f"{series(100, 0)} SELECT group_concat(DISTINCT cuckoo_count(?, i)) FROM n",
                      (dups,)) == "1",
                  "cuckoo_agg stores each distinct value once")
        mixed = one(f"SELECT {agg}(x) FROM (SELECT 3 AS x UNION ALL SELECT 3.0 UNION ALL SELECT '3')")
        check(info(mixed, kind)["items"] == 2, f"{agg}: 3 and 3.0 are one value, '3' another")
    # A NULL row still sets the parameters.
    check(one("SELECT bloom_agg(NULL, 0.01, 1000) = bloom_new(1000, 0.01)") == 1,
          "bloom_agg(NULL, fpr, capacity) is the empty filter of that size")
    check(one("SELECT bloom_agg(x, 0.01, 1000) FROM empty") == one("SELECT bloom_agg(NULL)"),
          "no rows at all: fpr 0.01 and no capacity")
    check(one("SELECT cuckoo_agg(NULL, 0.01, 1000) = cuckoo_new(1000, 0.01)") == 1,
          "cuckoo_agg(NULL, fpr, capacity) is the empty filter of that size")
    with_cap = one(f"{series(50)} SELECT cuckoo_agg(i, 0.01, 1000) FROM n")
    check(len(with_cap) == len(one("SELECT cuckoo_new(1000)")), "cuckoo_agg capacity fixes the size")

    # bloom_union_agg.
    check(one("SELECT bloom_union_agg(x) FROM empty") is None, "bloom_union_agg over no rows is NULL")
    check(one("SELECT bloom_union_agg(NULL)") is None, "bloom_union_agg over only NULLs is NULL")
    db.execute("CREATE TABLE parts(g, x)")
    db.execute(f"INSERT INTO parts {series(3000)} SELECT i % 7, i FROM n")
    whole = one("SELECT bloom_agg(x, 0.01, 5000) FROM parts")
    unioned = one("SELECT bloom_union_agg(f) FROM (SELECT bloom_agg(x, 0.01, 5000) AS f FROM parts "
                  "GROUP BY g UNION ALL SELECT NULL)")
    check(unioned == whole, "bloom_union_agg of per-group filters equals one bloom_agg")
    check(one("SELECT bloom_union_agg(?)", (whole,)) == whole, "bloom_union_agg of one filter is it")

    # Row order and run never change the bytes.
    values = list(range(5000)) + [f"k{i}" for i in range(2000)] + [i + 0.5 for i in range(1000)]
    shuffled = values[:]
    random.Random(7).shuffle(shuffled)
    for name, rows in (("ordered", values), ("shuffled", shuffled)):
        db.execute(f"CREATE TABLE {name}(x)")
        db.executemany(f"INSERT INTO {name} VALUES (?)", [(v,) for v in rows])
    for agg in ("bloom_agg(x)", "cuckoo_agg(x)", "bloom_agg(x, 0.001, 10000)",
                "cuckoo_agg(x, 0.05, 9000)"):
        a = one(f"SELECT {agg} FROM ordered")
        b = one(f"SELECT {agg} FROM shuffled")
        check(a == b, f"{agg} does not depend on row order")
        c = one(f"SELECT {agg} FROM (SELECT x FROM ordered ORDER BY x DESC)")
        check(a == c, f"{agg} over a reversed scan")
    kind_of = {"bloom": "bloom_contains", "cuckoo": "cuckoo_contains"}
    for kind, fn in kind_of.items():
        f = one(f"SELECT {kind}_agg(x) FROM shuffled")
        check(one(f"SELECT count(*) FROM ordered WHERE NOT {fn}(?, x)", (f,)) == 0,
              f"{kind}: every value of a mixed-type column is found")


def run_elsewhere(sql):
    """sql run in a new process through Python and through the CLI."""
    script = ("import sqlite3, sys\n"
              "c = sqlite3.connect(':memory:'); c.enable_load_extension(True)\n"
              f"c.load_extension({EXTENSION!r})\n"
              "print(c.execute(sys.argv[1]).fetchone()[0])\n")
    py = subprocess.run([PYTHON, "-c", script, sql], capture_output=True, text=True)
    cli = subprocess.run(["sqlite3", ":memory:", f".load {EXTENSION}", sql],
                         capture_output=True, text=True)
    return py.stdout.strip(), cli.stdout.strip(), cli.stderr.strip()


def test_same_bytes_every_run():
    for agg in ("bloom_agg(i)", "cuckoo_agg(i)", "bloom_agg('v' || i, 0.001, 5000)"):
        sql = f"{series(3000)} SELECT hex({agg}) FROM n"
        here = one(sql)
        py, cli, err = run_elsewhere(sql)
        check(here == py == cli and len(here) > 128, f"{agg} differs between runs: {err}")


def test_cli():
    out = subprocess.run(["sqlite3", ":memory:", f".load {EXTENSION}",
                          "SELECT amq_version(), bloom_contains(bloom_agg(7), 7.0), "
                          "cuckoo_count(cuckoo_add(cuckoo_agg(1), 1), 1) FROM (SELECT 1)"],
                         capture_output=True, text=True)
    version = one("SELECT amq_version()")
    check(out.returncode == 0 and out.stdout.strip() == f"{version}|1|2",
          f".load in the sqlite3 CLI: {out.stdout!r} {out.stderr!r}")


def test_demo():
    """The session `make demo` runs gives a real, sensible answer."""
    with open("sqlite/demo.sql") as script:
        out = subprocess.run(["sqlite3", "-batch", "-cmd", f".load {EXTENSION}", ":memory:"],
                             stdin=script, capture_output=True, text=True)
    check(out.returncode == 0 and out.stderr == "", f"demo failed: {out.stderr!r}")
    last = out.stdout.strip().splitlines()[-1].split()
    check(len(last) == 4, f"demo summary: {last}")
    if len(last) == 4:
        kept, vip_orders, false_positives = (int(v) for v in last[:3])
        percent = float(last[3])
        check(vip_orders == 100000 and kept == vip_orders + false_positives and
              0.5 <= percent <= 1.15, f"demo summary: {last}")
    check(out.stdout.count("Run Time:") == 5, "demo times five queries")


# ---- 1M rows ----------------------------------------------------------------------------

def test_million_rows():
    n = 1_000_000
    db.execute("CREATE TABLE million(x INTEGER)")
    db.execute(f"INSERT INTO million {series(n)} SELECT i * 7919 FROM n")
    absent = f"{series(n)} SELECT sum({{}}(?, i * 7919 + 1)) FROM n"
    for label, agg, fn, target in (
        ("bloom_agg", "bloom_agg(x)", "bloom_contains", 0.01),
        ("bloom_agg streaming", f"bloom_agg(x, 0.001, {n})", "bloom_contains", 0.001),
        ("cuckoo_agg", "cuckoo_agg(x)", "cuckoo_contains", 0.01),
    ):
        start = time.perf_counter()
        with deadline(30):
            f = one(f"SELECT {agg} FROM million")
            missed = one(f"SELECT count(*) FROM million WHERE NOT {fn}(?, x)", (f,))
            positives = one(absent.format(fn), (f,))
        rate = positives / n
        check(missed == 0, f"{label}: {missed} false negatives over 1M rows")
        check(target * 0.5 <= rate <= target * 1.15,
              f"{label}: measured fpr {rate:.5f} against target {target}")
        print(f"  {label}: fpr {rate:.5f} (target {target}), {len(f)} bytes, "
              f"{time.perf_counter() - start:.2f} s")


# ---- the per-statement filter cache ---------------------------------------------------------

def test_filter_cache():
    # A re-bound statement follows its parameter, even to a filter of the same size.
    a = one("SELECT bloom_agg(x, 0.01, 100) FROM (SELECT 5 AS x)")
    b = one("SELECT bloom_agg(x, 0.01, 100) FROM (SELECT 6 AS x)")
    c = one("SELECT cuckoo_agg(x, 0.01, 100) FROM (SELECT 5 AS x)")
    d = one("SELECT cuckoo_agg(x, 0.01, 100) FROM (SELECT 6 AS x)")
    check(len(a) == len(b) and len(c) == len(d), "same-size filters")
    got = [one("SELECT bloom_contains(?, 5)", (f,)) for f in (a, b, a, b)]
    check(got == [1, 0, 1, 0], f"re-bound bloom filter: {got}")
    got = [one("SELECT cuckoo_count(?, 5) + cuckoo_contains(?, 6) * 10", (f, f)) for f in (c, d, c)]
    check(got == [1, 10, 1], f"re-bound cuckoo filter: {got}")
    # A literal filter.
    check(one(f"{series(10)} SELECT group_concat(bloom_contains(X'{a.hex()}', i), '') FROM n")
          == "0000100000", "a literal filter")
    # A filter per row: each row's own filter answers, and a damaged one is
    # caught even right after identical good ones.
    db.execute("CREATE TABLE filters(id INTEGER PRIMARY KEY, f BLOB)")
    db.executemany("INSERT INTO filters(f) VALUES (?)", [(a,), (b,), (a,), (a,), (a,), (b,)])
    check([r[0] for r in db.execute("SELECT bloom_contains(f, 5) FROM filters ORDER BY id")]
          == [1, 0, 1, 1, 1, 0], "a filter per row")
    check([r[0] for r in db.execute(
        "SELECT bloom_contains((SELECT f FROM filters WHERE id = 2), i) FROM (SELECT 5 AS i "
        "UNION ALL SELECT 6)")] == [0, 1], "a filter from a scalar subquery")
    damaged = a[:-1] + bytes([a[-1] ^ 0x80])
    db.execute("INSERT INTO filters(f) VALUES (?)", (damaged,))
    expect_error("SELECT bloom_contains(f, 5) FROM filters ORDER BY id",
                 "bloom_contains: filter: checksum mismatch: "
                 "the stored bytes were damaged or edited; rebuild the filter")
    expect_error("SELECT bloom_count(f) FROM filters ORDER BY id",
                 "bloom_count: filter: checksum mismatch: "
                 "the stored bytes were damaged or edited; rebuild the filter")

    # A bound 64 MiB filter is parsed once per statement, not per row: a
    # 400,000-row scan with it finishes (without the cache it would take half
    # an hour) and answers as the 1 KiB filter holding the same values does.
    # How fast it runs against the 1 KiB one is a benchmark figure
    # (bench/sqlite, docs/BENCHMARKS.md), not a test.
    db.execute("CREATE TABLE probes(x INTEGER)")
    db.execute(f"INSERT INTO probes {series(400000)} SELECT i % 1000 FROM n")
    members = "(SELECT x * 2 AS v FROM probes WHERE x < 500 GROUP BY x)"
    small = one(f"SELECT bloom_agg(v, 0.01, 850, 'classic') FROM {members}")
    large = one(f"SELECT bloom_agg(v, 0.01, 56200000, 'classic') FROM {members}")
    check(len(small) <= 1100 and len(large) >= 64 << 20, f"{len(small)} and {len(large)} bytes")
    scan = "SELECT sum(bloom_contains(?, x)) FROM probes"
    with deadline(60):
        small_hits = one(scan, (small,))
        large_hits = one(scan, (large,))
    # The 500 even values below 1000 are members: 200,000 rows, plus a few
    # false positives among the odd ones.
    check(200000 <= large_hits <= small_hits <= 200000 + 0.03 * 200000,
          f"hits: 1 KiB {small_hits}, 64 MiB {large_hits}")


def test_layouts():
    """The layout argument of bloom_agg and cuckoo_agg, its default and NULLs."""
    db.execute("CREATE TABLE lay(x INTEGER)")
    db.execute(f"INSERT INTO lay {series(3000)} SELECT i * 7 FROM n")
    default = one("SELECT bloom_agg(x) FROM lay")
    check(info(default)["layout"] == "blocked", f"bloom_agg is blocked by default: {info(default)}")
    for form in ("bloom_agg(x, 0.01)", "bloom_agg(x, 0.01, NULL)", "bloom_agg(x, 0.01, NULL, NULL)",
                 "bloom_agg(x, 0.01, NULL, 'blocked')"):
        check(one(f"SELECT {form} FROM lay") == default, f"{form} equals bloom_agg(x)")
    classic = one("SELECT bloom_agg(x, 0.01, NULL, 'classic') FROM lay")
    i = info(classic)
    check(i["layout"] == "classic" and i["items"] == 3000 and i["bits"] == 28756,
          f"classic sized for the 3000 distinct values: {i}")
    check(len(default) > len(classic), "blocked takes a few more bytes than classic")
    for layout in ("classic", "blocked"):
        built = one(f"SELECT bloom_agg(x, 0.02, 5000, '{layout}') FROM lay")
        f = one(f"SELECT bloom_new(5000, 0.02, '{layout}')")
        for v in range(1, 3001):
            f = one("SELECT bloom_add(?, ?)", (f, v * 7))
        check(built == f, f"bloom_agg(x, fpr, capacity, '{layout}') = bloom_new + bloom_add")
        check(info(built)["layout"] == layout, f"{layout} with a capacity")
    # NULL values and the first row's arguments decide, as for the shorter forms.
    check(one("SELECT bloom_agg(NULL, 0.05, 100, 'classic') = bloom_new(100, 0.05, 'classic')") == 1,
          "a NULL value on the first row still fixes the layout")
    # cuckoo_agg takes a layout by name; at fpr 0.01 the default is 'b4'.
    cuckoo = one("SELECT cuckoo_agg(x) FROM lay")
    for form in ("cuckoo_agg(x, 0.01, NULL)", "cuckoo_agg(x, 0.01, NULL, NULL)",
                 "cuckoo_agg(x, 0.01, NULL, 'b4')"):
        check(one(f"SELECT {form} FROM lay") == cuckoo, f"{form} equals cuckoo_agg(x)")
    check(one("SELECT cuckoo_agg(x, 0.01, 4000, 'b4') = cuckoo_agg(x, 0.01, 4000) FROM lay") == 1,
          "cuckoo_agg with a capacity and 'b4'")
    # Every rejected layout, with the exact message.
    bloom_hint = "use 'blocked' (the default), 'classic', 'counting', 'dleft' or 'scalable'"
    cuckoo_hint = ("use 'b2', 'b4' or 'b8' (fingerprints per bucket), or 'semisorted' (b4 with one "
                   "bit less per item)")
    for name in ("fancy", "Blocked", "CLASSIC", "", "blocked ", "b4", "Counting"):
        expect_error(f"SELECT bloom_agg(x, 0.01, NULL, '{name}') FROM lay",
                     f"unknown bloom layout '{name}': {bloom_hint}")
        expect_error(f"SELECT bloom_agg(x, 0.01, 100, '{name}') FROM lay",
                     f"unknown bloom layout '{name}': {bloom_hint}")
    for name in ("classic", "blocked", "counting", "B4", "b16", "Semisorted", ""):
        expect_error(f"SELECT cuckoo_agg(x, 0.01, NULL, '{name}') FROM lay",
                     f"unknown cuckoo layout '{name}': {cuckoo_hint}")
    expect_error("SELECT bloom_agg(1, 0.01, 10, 4)", f"layout must be text, got integer: {BLOOM_LAYOUTS_HINT}")
    expect_error("SELECT cuckoo_agg(1, 0.01, 10, X'00')", f"layout must be text, got blob: {CUCKOO_LAYOUTS_HINT}")
    expect_error("SELECT bloom_agg(1, 0.01, 'x', 'classic')",
                 f"capacity must be an integer, got text: {CAPACITY_HINT}")
    expect_error("SELECT bloom_agg(1, NULL, NULL, 'classic')", f"fpr must be a number, got null: {FPR_HINT}")
    long_name = "x" * 100
    expect_error(f"SELECT bloom_new(10, 0.01, '{long_name}')",
                 f"unknown bloom layout '{'x' * 64}': {bloom_hint}")


def test_counting():
    """The counting layout: deletes, frequencies, aggregates that count every
    row, combinations, and the errors on the other layouts."""
    empty = one("SELECT bloom_new(1000, 0.01, 'counting')")
    classic = one("SELECT bloom_new(1000, 0.01, 'classic')")
    i = info(empty)
    check(i["layout"] == "counting" and i["counters"] == info(classic)["bits"]
          and i["hashes"] == info(classic)["hashes"] and i["counter_bits"] == 4
          and i["format_version"] == 4 and empty[4] == 4,
          f"counting: the classic m and k, 4-bit counters: {i}")
    check(info(classic)["format_version"] == 4 and classic[4] == 4,
          "classic is written as version 4 too")
    f = empty
    for v in range(1, 301):
        f = one("SELECT bloom_add(?, ?)", (f, v))
    expect_error("SELECT bloom_add(?, 'five times')",
                 "bloom_add: value: the filter holds numbers, got text 'five times': use a number, "
                 "the family the filter holds", (f,))
    # The text goes in through a union, which adds counters: then the filter
    # holds numbers and text and counts either.
    t = empty
    for r in range(5):
        t = one("SELECT bloom_add(?, 'five times')", (t,))
    f = one("SELECT bloom_union(?, ?)", (f, t))
    check(info(f)["families"] == ["numbers", "text"] and info(f)["items"] == 305,
          f"the union of numbers and text: {info(f)}")
    check(one("SELECT bloom_frequency(?, 'five times')", (f,)) == 5, "frequency of a value added 5 times")
    check(one("SELECT bloom_frequency(?, 7)", (f,)) == 1, "frequency of a value added once")
    check(one("SELECT bloom_frequency(?, 'never')", (f,)) == 0, "frequency of an absent value")
    check(one("SELECT bloom_frequency(?, NULL)", (f,)) is None, "frequency of NULL is NULL")
    g = one("SELECT bloom_delete(?, 7)", (f,))
    check(one("SELECT bloom_contains(?, 7)", (g,)) == 0 and info(g)["items"] == 304,
          "a deleted value is gone and the item count falls")
    lost = one(f"{series(300)} SELECT count(*) FROM n WHERE i <> 7 AND NOT bloom_contains(?, i)", (g,))
    check(lost == 0, f"{lost} other values lost by one delete")
    check(one("SELECT bloom_delete(?, 'never') = ?", (f, f)) == 1, "deleting an absent value changes nothing")
    check(one("SELECT bloom_delete(?, NULL) = ?", (f, f)) == 1, "deleting NULL changes nothing")
    check(one("SELECT bloom_delete(NULL, 1)") is None, "NULL filter gives NULL")
    # Twenty adds and twenty deletes of one value: its counters saturate and stay.
    h = f
    for r in range(20):
        h = one("SELECT bloom_add(?, 'hot')", (h,))
    check(one("SELECT bloom_frequency(?, 'hot')", (h,)) >= 20, "frequency never below 20 adds")
    for r in range(20):
        h = one("SELECT bloom_delete(?, 'hot')", (h,))
    check(info(h)["counters_saturated"] >= info(h)["hashes"] and one("SELECT bloom_contains(?, 'hot')", (h,)) == 1,
          f"saturated counters stay: {info(h)}")
    lost = one(f"{series(300)} SELECT count(*) FROM n WHERE NOT bloom_contains(?, i)", (h,))
    check(lost == 0, f"{lost} values lost after 20 adds and deletes of another")
    # Aggregates count every row, with or without a capacity, in any order.
    db.execute("CREATE TABLE cnt(x INTEGER)")
    db.execute(f"INSERT INTO cnt {series(5000)} SELECT i % 500 FROM n")
    for capacity in ("NULL", "1000"):
        agg = one(f"SELECT bloom_agg(x, 0.01, {capacity}, 'counting') FROM cnt")
        rev = one(f"SELECT bloom_agg(x, 0.01, {capacity}, 'counting') FROM "
                  "(SELECT x FROM cnt ORDER BY x DESC)")
        check(agg == rev, f"capacity {capacity}: the same bytes in another row order")
        below = one(f"{series(500, 0)} SELECT count(*) FROM n WHERE bloom_frequency(?, i) < 10", (agg,))
        check(below == 0 and info(agg)["items"] == 5000,
              f"capacity {capacity}: every row counted ({below} values below their 10 rows)")
    streamed = one("SELECT bloom_agg(x, 0.01, 1000, 'counting') FROM cnt")
    f = one("SELECT bloom_new(1000, 0.01, 'counting')")
    for (x,) in db.execute("SELECT x FROM cnt").fetchall():
        f = one("SELECT bloom_add(?, ?)", (f, x))
    check(streamed == f, "bloom_agg(..., 'counting') with a capacity = bloom_new + bloom_add per row")
    # Union adds counters; union_agg too; intersection keeps the smaller.
    a = one("SELECT bloom_agg(x, 0.01, 1000, 'counting') FROM cnt WHERE rowid % 2 = 0")
    b = one("SELECT bloom_agg(x, 0.01, 1000, 'counting') FROM cnt WHERE rowid % 2 = 1")
    check(one("SELECT bloom_union(?, ?)", (a, b)) == streamed, "union of the halves = the whole")
    check(one("SELECT bloom_union_agg(f) FROM (SELECT ? AS f UNION ALL SELECT ?)", (a, b)) == streamed,
          "bloom_union_agg of the halves = the whole")
    check(one("SELECT bloom_intersect(?, ?) = ?", (a, streamed, a)) == 1,
          "intersection keeps the smaller counter: a part with the whole is the part")
    check(abs(one("SELECT bloom_count(?)", (streamed,)) - 500) < 25, "bloom_count estimates 500 values")
    check(0 < one("SELECT bloom_fpr(?)", (streamed,)) < 0.01, "bloom_fpr of a counting filter")
    # The other layouts cannot delete or count; mixed layouts cannot combine.
    hint = "build the filter with layout 'counting' for that"
    for layout in ("classic", "blocked"):
        expect_error(f"SELECT bloom_delete(bloom_new(10, 0.01, '{layout}'), 1)",
                     f"a {layout} bloom filter cannot delete values: {hint}")
        expect_error(f"SELECT bloom_frequency(bloom_new(10, 0.01, '{layout}'), 1)",
                     f"a {layout} bloom filter cannot count how often a value was added: {hint}")
    expect_error("SELECT bloom_delete(cuckoo_new(10), 1)",
                 "bloom_delete: filter: expected a bloom filter, got a cuckoo filter: "
                 "use the cuckoo_* functions for cuckoo filters")
    c = one("SELECT bloom_new(1000, 0.01, 'classic')")
    i, j = info(streamed), info(c)
    expect_error("SELECT bloom_union(?, ?)",
                 f"cannot combine bloom filters with different parameters (counting {i['counters']} "
                 f"bits, {i['hashes']} hashes, seed 0 vs classic {j['bits']} bits, {j['hashes']} "
                 "hashes, seed 0): build both filters with the same capacity, fpr and layout",
                 (streamed, c))


def test_dleft():
    """The d-left layout: bloom_new and bloom_agg with 'dleft', adds, deletes
    and frequencies, the bulk aggregates, a full filter, and what it refuses
    (union and intersection)."""
    empty = one("SELECT bloom_new(1000, 0.01, 'dleft')")
    i = info(empty)
    check(i["layout"] == "dleft" and i["subtables"] == 4 and i["cells_per_bucket"] == 8
          and i["remainder_bits"] == 12 and i["buckets_per_subtable"] == 42
          and i["format_version"] == 5 and empty[4] == 5 and empty[6] == 7,
          f"dleft: 4 subtables of 42 buckets, 12-bit remainders, version 5: {i}")
    counting = one("SELECT bloom_new(1000, 0.01, 'counting')")
    check(len(empty) <= 0.6 * len(counting), f"{len(empty)} bytes against counting's {len(counting)}")
    f = fold("bloom_add", empty, list(range(1, 301)) + [7, 7])
    check(one("SELECT bloom_frequency(?, 7)", (f,)) == 3 and info(f)["items"] == 302,
          "three adds of 7 counted")
    g = one("SELECT bloom_delete(?, 7)", (f,))
    check(one("SELECT bloom_contains(?, 7)", (g,)) == 1 and one("SELECT bloom_frequency(?, 7)", (g,)) == 2,
          "a delete after repeated adds leaves the value")
    g = fold("bloom_delete", g, [7, 7, 8])
    check(one("SELECT bloom_contains(?, 7)", (g,)) == 0 and one("SELECT bloom_contains(?, 8)", (g,)) == 0,
          "deleted as often as added: gone")
    lost = one(f"{series(300)} SELECT count(*) FROM n WHERE i NOT IN (7, 8) AND NOT bloom_contains(?, i)", (g,))
    check(lost == 0, f"{lost} other values lost by the deletes")
    absent = one(f"{series(1000, 100000)} SELECT min(i) FROM n WHERE NOT bloom_contains(?, i)", (f,))
    check(one("SELECT bloom_delete(?, ?) = ?", (f, absent, f)) == 1,
          "deleting an absent value changes nothing")
    check(abs(one("SELECT bloom_count(?)", (f,)) - 300) < 5, "bloom_count of 300 values")
    check(0 < one("SELECT bloom_fpr(?)", (f,)) < 0.01, "bloom_fpr of a dleft filter")
    # Aggregates count every row, with or without a capacity, in any order.
    db.execute("CREATE TABLE dl(x INTEGER)")
    db.execute(f"INSERT INTO dl {series(5000)} SELECT i % 500 FROM n")
    for capacity in ("NULL", "1000"):
        agg = one(f"SELECT bloom_agg(x, 0.01, {capacity}, 'dleft') FROM dl")
        rev = one(f"SELECT bloom_agg(x, 0.01, {capacity}, 'dleft') FROM (SELECT x FROM dl ORDER BY x DESC)")
        check(agg == rev, f"capacity {capacity}: the same bytes in another row order")
        below = one(f"{series(500, 0)} SELECT count(*) FROM n WHERE bloom_frequency(?, i) < 10", (agg,))
        check(below == 0 and info(agg)["items"] == 5000,
              f"capacity {capacity}: every row counted ({below} values below their 10 rows)")
    # The bulk aggregates give the bytes of a fold, in row order.
    added = one("SELECT bloom_add_agg(?, x) FROM (SELECT x FROM dl WHERE rowid <= 400 ORDER BY rowid)",
                (empty,))
    check(added == fold("bloom_add", empty, [x for (x,) in db.execute(
        "SELECT x FROM dl WHERE rowid <= 400 ORDER BY rowid")]), "bloom_add_agg = a fold of bloom_add")
    deleted = one("SELECT bloom_delete_agg(?, x) FROM (SELECT x FROM dl WHERE rowid <= 100 ORDER BY rowid)",
                  (added,))
    check(info(deleted)["items"] == 300 and one("SELECT bloom_contains(?, 250)", (deleted,)) == 1,
          "bloom_delete_agg takes 100 rows out, keeps the rest")
    # A full filter: the add fails and the statement changes nothing.
    tiny = one("SELECT bloom_new(24, 0.01, 'dleft')")
    full = ("dleft bloom filter is full: the 4 buckets this value may take hold 8 values each "
            "(32 items)")
    tiny = fold("bloom_add", tiny, range(32))
    got = error_of("SELECT bloom_add(?, 1000)", (tiny,))
    check(got is not None and got.startswith(f"{full}: rebuild it with a larger capacity"),
          f"full: {got!r}")
    got = error_of(f"{series(100, 1000)} SELECT bloom_add_agg(?, i) FROM n", (tiny,))
    check(got is not None and "after adding 0 values: the statement changes nothing; rebuild it with "
          "a larger capacity" in got, f"bloom_add_agg on a full filter: {got!r}")
    # What it refuses.
    expect_error("SELECT bloom_union(?, ?)", "a dleft bloom filter cannot be combined", (f, f))
    expect_error("SELECT bloom_intersect(?, ?)", "a dleft bloom filter cannot be intersected", (f, f))
    expect_error("SELECT bloom_new(10, 1e-9, 'dleft')",
                 "a dleft bloom filter reaches fpr 5.59e-09 at the lowest, got 1e-09: pass a larger "
                 "fpr, or use layout 'counting' or 'blocked'")


def test_scalable():
    """The scalable layout: a chain that grows under bloom_add with an honest
    compound rate, its aggregate, bloom_info's chain, unions and errors."""
    f = one("SELECT bloom_new(200, 0.01, 'scalable')")
    i = info(f)
    check(i["layout"] == "scalable" and i["expansion"] == 2 and i["capacity"] == 200
          and len(i["links"]) == 1 and i["links"][0]["error"] == 0.005 and i["format_version"] == 4
          and i["families"] == [] and f[4] == 4,
          f"a new chain has one link at p/2: {i}")
    db.execute("CREATE TABLE sc(x INTEGER)")
    db.execute(f"INSERT INTO sc {series(20000)} SELECT i FROM n")
    # 1x, 10x, 100x the first capacity: grown by bloom_add one row at a time.
    grown = f
    added = 0
    for times in (1, 10, 100):
        for (x,) in db.execute("SELECT x FROM sc WHERE x > ? AND x <= ?", (added, 200 * times)).fetchall():
            grown = one("SELECT bloom_add(?, ?)", (grown, x))
        added = 200 * times
        missing = one(f"SELECT count(*) FROM sc WHERE x <= {added} AND NOT bloom_contains(?, x)", (grown,))
        fp = one(f"{series(100000, 1000000)} SELECT sum(bloom_contains(?, i)) FROM n", (grown,))
        links = info(grown)["links"]
        check(missing == 0, f"{times}x: {missing} false negatives")
        check(fp / 100000 <= 0.0115, f"{times}x: measured fpr {fp / 100000} above 1.15p")
        check((len(links) == 1) == (times == 1), f"{times}x: {len(links)} links")
        check([l["capacity"] for l in links] == [200 * 2 ** k for k in range(len(links))]
              and [l["error"] for l in links] == [0.01 / 2 ** (k + 1) for k in range(len(links))]
              and all(l["hashes"] <= 8 and l["bits"] % 512 == 0 for l in links),
              f"{times}x: links grow by 2 at p/2^(i+1), blocked: {links}")
    check(one("SELECT bloom_fpr(?)", (grown,)) < 0.01, "the compound expected rate stays below p")
    check(abs(one("SELECT bloom_count(?)", (grown,)) - 20000) < 600, "bloom_count sums the links")
    # bloom_agg: the same chain whatever the row order; grows from the capacity.
    agg = one("SELECT bloom_agg(x, 0.01, 200, 'scalable') FROM sc")
    rev = one("SELECT bloom_agg(x, 0.01, 200, 'scalable') FROM (SELECT x FROM sc ORDER BY x DESC)")
    check(agg == rev, "bloom_agg 'scalable': the same bytes in any row order")
    check(len(info(agg)["links"]) == len(info(grown)["links"]), "bloom_agg grows as bloom_add does")
    check(len(info(one("SELECT bloom_agg(x, 0.01, NULL, 'scalable') FROM sc"))["links"]) == 1,
          "without a capacity one link sized for the distinct values")
    wide = one("SELECT bloom_new(100, 0.01, 'scalable', 4)")
    for v in range(1000):
        wide = one("SELECT bloom_add(?, ?)", (wide, v))
    check([l["capacity"] for l in info(wide)["links"]] == [100, 400, 1600], "expansion 4")
    # Union of chains of one shape; any other is an error that says why.
    a = one("SELECT bloom_agg(x, 0.01, 200, 'scalable') FROM sc WHERE x <= 500")
    b = one("SELECT bloom_agg(x + 100000, 0.01, 200, 'scalable') FROM sc WHERE x <= 500")
    u = one("SELECT bloom_union(?, ?)", (a, b))
    check(one("SELECT bloom_contains(?, 7) AND bloom_contains(?, 100007)", (u, u)) == 1,
          "union of the same shape holds both")
    check(one("SELECT bloom_union_agg(f) = ? FROM (SELECT ? AS f UNION ALL SELECT ?)", (u, a, b)) == 1,
          "bloom_union_agg = bloom_union")
    err = error_of("SELECT bloom_union(?, ?)", (a, f))
    check(err is not None and err.startswith("cannot combine scalable bloom filters of different shapes (2 links"),
          f"different shapes: {err}")
    expect_error("SELECT bloom_new(10, 0.01, 'blocked', 2)",
                 "a blocked bloom filter does not grow, so it takes no expansion: "
                 "pass an expansion only with layout 'scalable'")
    expect_error("SELECT bloom_new(10, 0.01, 'scalable', 0)",
                 "expansion must be between 1 and 32, got 0")
    expect_error("SELECT bloom_new(10, 0.01, 'scalable', '2')",
                 "expansion must be an integer, got text: pass a growth factor such as 2")
    expect_error("SELECT bloom_delete(?, 1)",
                 "a scalable bloom filter cannot delete values: "
                 "build the filter with layout 'counting' for that", (f,))


def test_cuckoo_layouts():
    """The cuckoo layouts b2, b4, b8 and semisorted: what cuckoo_info says,
    the default for each fpr, adds until full that change no byte when they
    fail, copies and deletes, and the fprs a layout cannot reach."""
    slots = {"b2": 2, "b4": 4, "b8": 8, "semisorted": 4}
    # Every new filter is version 4, which records its families.
    versions = {"b2": 4, "b4": 4, "b8": 4, "semisorted": 4}
    for layout, b in slots.items():
        f = one(f"SELECT cuckoo_new(100000, 0.001, '{layout}')")
        i = info(f, "cuckoo")
        bits = math.ceil(math.log2(2 * b / 0.001))
        check(i["layout"] == layout and i["bucket_size"] == b and
              i["semisorted"] == (layout == "semisorted") and i["fingerprint_bits"] == bits and
              i["format_version"] == versions[layout] and f[4] == versions[layout] and
              i["bytes"] == len(f), f"cuckoo_new(100000, 0.001, '{layout}'): {i}")
        built = one(f"{series(5000)} SELECT cuckoo_agg(i, 0.01, NULL, '{layout}') FROM n")
        check(info(built, "cuckoo")["layout"] == layout, f"cuckoo_agg with '{layout}'")
        check(one(f"{series(5000)} SELECT count(*) FROM n WHERE NOT cuckoo_contains(?, i)",
                  (built,)) == 0, f"{layout}: no false negative")
        absent = one(f"{series(100000, 1000001)} SELECT count(*) FROM n WHERE cuckoo_contains(?, i)",
                     (built,))
        check(absent < 100000 * 0.01 * 1.15, f"{layout}: {absent} false positives in 100000 at 1%")
        # built holds numbers: copies of a number it does not hold yet.
        g = one("SELECT cuckoo_add(cuckoo_add(?, -7), -7)", (built,))
        check(one("SELECT cuckoo_count(?, -7)", (g,)) == 2 and
              one("SELECT cuckoo_count(cuckoo_delete(?, -7), -7)", (g,)) == 1,
              f"{layout}: copies and deletes")
        # Fill a small filter until an add fails: the error, the last good
        # filter unchanged, nothing lost.
        f, added, full = fill(one(f"SELECT cuckoo_new(500, 0.01, '{layout}')"))
        check(added >= 500 and full.startswith("cuckoo filter is full"), f"{layout}: {added}, {full}")
        check(one(f"{series(added, 0)} SELECT count(*) FROM n WHERE NOT cuckoo_contains(?, i)",
                  (f,)) == 0, f"{layout}: a full filter lost items")
    # The default: the fewest bits per item for the fpr.
    for p, layout in ((0.9, "b4"), (0.49, "b2"), (0.1, "b2"), (0.03125, "b2"), (0.031, "b4"),
                      (0.01, "b4"), (1e-6, "b4"), (2e-9, "b4"), (1e-9, "b2")):
        check(info(one(f"SELECT cuckoo_new(1000, {p})"), "cuckoo")["layout"] == layout and
              info(one(f"{series(10)} SELECT cuckoo_agg(i, {p}) FROM n"), "cuckoo")["layout"] == layout,
              f"default layout at {p}: {layout}")
    for p in (0.5, 0.1, 0.01, 0.001, 1e-6):
        saved = (len(one(f"SELECT cuckoo_new(100000, {p}, 'b4')")) -
                 len(one(f"SELECT cuckoo_new(100000, {p}, 'semisorted')"))) * 8 / 100000
        check(saved > 0.9, f"semisorted saves {saved} bits per item at {p}")
    expect_error("SELECT cuckoo_new(100, 1e-12, 'b4')",
                 "fpr 1e-12 does not fit a b4 cuckoo filter: it needs 43-bit fingerprints, and "
                 "fingerprints have 4 to 32 bits: use an fpr of at least 1.863e-09 with layout 'b4', "
                 "or a bloom filter")
    expect_error("SELECT cuckoo_new(100, 0.6, 'b2')",
                 "fpr 0.6 does not fit a b2 cuckoo filter: it needs 3-bit fingerprints, and "
                 "fingerprints have 4 to 32 bits: use an fpr below 0.5 with layout 'b2', or layout 'b4'")
    expect_error("SELECT cuckoo_agg(1, 1e-9, NULL, 'b8')",
                 "fpr 1e-09 does not fit a b8 cuckoo filter: it needs 34-bit fingerprints, and "
                 "fingerprints have 4 to 32 bits: use an fpr of at least 3.726e-09 with layout 'b8', "
                 "or a bloom filter")
    expect_error("SELECT cuckoo_new(10, 0.01, 'b3')",
                 "unknown cuckoo layout 'b3': use 'b2', 'b4' or 'b8' (fingerprints per bucket), or "
                 "'semisorted' (b4 with one bit less per item)")
    expect_error("SELECT cuckoo_new(10, 0.01, 4)", f"layout must be text, got integer: {CUCKOO_LAYOUTS_HINT}")
    check(one("SELECT cuckoo_new(10, 0.01, NULL)") is None, "a NULL layout gives NULL")


COPIES_HINT = ("use cuckoo_add_unique to add a value once, or a counting bloom filter "
               "(bloom_new(n, p, 'counting')) to count it")


def test_cuckoo_copies():
    """A value added once more than a cuckoo filter can hold it (2b copies: 4, 8
    and 16) is refused in its own words, however empty the filter, and the
    stored bytes stay; cuckoo_add_agg says the same with its own prefix; a
    filter full of distinct values still says it is full."""
    for layout, b in (("b2", 2), ("b4", 4), ("b8", 8), ("semisorted", 4)):
        empty = one(f"SELECT cuckoo_new(100000, 0.01, '{layout}')")
        f = empty
        for _ in range(2 * b):
            f = one("SELECT cuckoo_add(?, 'k')", (f,))
        check(one("SELECT cuckoo_count(?, 'k')", (f,)) == 2 * b, f"{layout}: {2 * b} copies")
        expect_error("SELECT cuckoo_add(?, 'k')",
                     f"cuckoo filter already holds this value {2 * b} times, the most a {layout} "
                     f"filter can: {COPIES_HINT}", (f,))
        db.execute("CREATE TEMP TABLE copies(f BLOB)")
        db.execute("INSERT INTO copies VALUES (?)", (f,))
        check(error_of("UPDATE copies SET f = cuckoo_add(f, 'k')") is not None and
              one("SELECT f FROM copies") == f, f"{layout}: the refused UPDATE kept the bytes")
        db.execute("DROP TABLE copies")
        expect_error(f"{series(2 * b + 1)} SELECT cuckoo_add_agg(?, 'k') FROM n",
                     f"cuckoo_add_agg: cuckoo filter already holds this value {2 * b} times, the "
                     f"most a {layout} filter can, after adding {2 * b} values: the statement "
                     f"changes nothing; {COPIES_HINT}", (empty,))
        _, added, full = fill(one(f"SELECT cuckoo_new(100, 0.01, '{layout}')"))
        check(re.fullmatch(r"cuckoo filter is full \(\d+ items, load \d+\.\d%\): "
                           r"rebuild with cuckoo_agg or a larger capacity", full or "") is not None,
              f"{layout}: distinct values fill it: {full!r}")


def test_cuckoo_lowest_fpr():
    """The lowest fpr of each layout is 2b/2^32 (32-bit fingerprints): that
    value is accepted and the double below it refused. The hint of a refusal
    quotes it rounded up to 4 digits: the value quoted is accepted, one less
    in its last digit is refused, and README.md and docs/CUCKOO.md quote the
    same values (and no longer the 3-digit ones that were refused)."""
    docs = {}
    for name in ("README.md", os.path.join("docs", "CUCKOO.md")):
        with open(os.path.join(ROOT, name)) as fh:
            docs[name] = fh.read()

    def fingerprint_bits(layout, p):
        f = one(f"SELECT cuckoo_new(100, ?, '{layout}')", (p,))
        return info(f, "cuckoo")["fingerprint_bits"]

    for layout, b in (("b2", 2), ("b4", 4), ("b8", 8), ("semisorted", 4)):
        lowest = 2 * b / 2 ** 32
        check(fingerprint_bits(layout, lowest) == 32, f"{layout}: 2b/2^32 accepted")
        err = error_of(f"SELECT cuckoo_new(100, ?, '{layout}')", (math.nextafter(lowest, 0),))
        check(err is not None and "needs 33-bit fingerprints" in err,
              f"{layout}: the double below 2b/2^32: {err!r}")
        err = error_of(f"SELECT cuckoo_new(100, 1e-12, '{layout}')") or ""
        m = re.search(r"use an fpr of at least ((\d)\.(\d{3})e(-\d+)) with layout "
                      f"'{layout}', or a bloom filter$", err)
        check(m is not None, f"{layout}: a 4-digit bound in {err!r}")
        if m is None:
            continue
        quoted = m.group(1)
        check(fingerprint_bits(layout, float(quoted)) == 32, f"{layout}: the quoted {quoted} accepted")
        digits = int(m.group(2)) * 1000 + int(m.group(3)) - 1
        below = f"{digits // 1000}.{digits % 1000:03d}e{m.group(4)}"
        err = error_of(f"SELECT cuckoo_new(100, {below}, '{layout}')")
        check(err is not None and "needs 33-bit fingerprints" in err,
              f"{layout}: {below}, one less in the last digit of {quoted}, refused: {err!r}")
        for name, text in docs.items():
            check(f"`{quoted}`" in text or f"| {quoted} |" in text, f"{name} quotes {quoted}")
    for name, text in docs.items():
        for old in ("1.86·10⁻⁹", "9.31·10⁻¹⁰", "9.3·10⁻¹⁰", "1.87e-09", "3.73e-09"):
            check(old not in text, f"{name} still says {old}")


def fold(function, f, values):
    """The filter a one-row-at-a-time loop of function(f, value) gives."""
    for v in values:
        f = one(f"SELECT {function}(?, ?)", (f, v))
    return f


def test_bulk():
    """bloom_add_agg, bloom_delete_agg, cuckoo_add_agg, cuckoo_delete_agg:
    the bytes of a fold in row order, the UPDATE forms, NULLs, no rows, the
    same-filter rule, a full cuckoo filter that leaves the stored bytes as
    they were, and cuckoo_add_unique."""
    db.execute("CREATE TABLE bv(id INTEGER PRIMARY KEY, x)")
    rng = random.Random(11)
    values = [rng.choice([rng.randrange(-10**9, 10**9), f"k{rng.randrange(10**6)}",
                          rng.random() * 1000]) for _ in range(2000)]
    db.executemany("INSERT INTO bv(x) VALUES (?)", [(v,) for v in values] + [(None,)])
    ordered = "(SELECT x FROM bv ORDER BY id)"
    # bv mixes numbers and text, so the filters the rows go into hold both
    # from the start: the aggregate (with a capacity: bloom_new's and
    # cuckoo_new's size) of two seeds none of bv's values equals. An empty
    # filter takes the first row's family and refuses the first row of the
    # other (test_families).
    db.execute("CREATE TABLE seeds(x)")
    db.execute(f"INSERT INTO seeds VALUES ({SEED_NUMBER}), ('{SEED_TEXT}')")
    for kind, args in [("bloom", "5000, 0.01, 'blocked'"), ("bloom", "5000, 0.01, 'classic'"),
                       ("bloom", "5000, 0.01, 'counting'"), ("bloom", "300, 0.01, 'scalable'"),
                       ("cuckoo", "5000, 0.01"), ("cuckoo", "5000, 0.01, 'b2'"),
                       ("cuckoo", "5000, 0.01, 'b8'"), ("cuckoo", "5000, 0.01, 'semisorted'")]:
        capacity, fpr, *layout = args.split(", ")
        start = f"{kind}_agg(x, {', '.join([fpr, capacity] + layout)})"
        f = one(f"SELECT {start} FROM seeds")
        check(len(f) == len(one(f"SELECT {kind}_new({args})")) and
              info(f, kind)["families"] == ["numbers", "text"] and info(f, kind)["items"] == 2,
              f"{start} over the seeds: the size of {kind}_new({args}), numbers and text: "
              f"{info(f, kind)}")
        got = one(f"SELECT {kind}_add_agg(?, x) FROM {ordered}", (f,))
        want = fold(f"{kind}_add", f, values)
        check(got == want, f"{start}: {kind}_add_agg = a fold of {kind}_add in row order")
        lost = one(f"SELECT count(*) FROM bv WHERE x IS NOT NULL AND NOT {kind}_contains(?, x)",
                   (got,))
        check(lost == 0, f"{start}: {lost} values lost")
        if "'scalable'" in start:
            check(len(info(got)["links"]) > 1, "scalable: the chain grew under bloom_add_agg")
        if kind == "cuckoo" or "'counting'" in start:
            # Delete the first half and some never added: the fold's bytes.
            half = values[:1000] + ["never", -1.5, 10**12]
            db.execute("CREATE TEMP TABLE del AS SELECT x FROM bv WHERE id <= 1000 "
                       "UNION ALL VALUES ('never'), (-1.5), (1000000000000)")
            deleted = one(f"SELECT {kind}_delete_agg(?, x) FROM del", (got,))
            check(deleted == fold(f"{kind}_delete", got, half),
                  f"{start}: {kind}_delete_agg = a fold of {kind}_delete")
            kept = one(f"SELECT count(*) FROM bv WHERE id > 1000 AND x IS NOT NULL "
                       f"AND NOT {kind}_contains(?, x)", (deleted,))
            check(kept == 0, f"{start}: {kept} values lost by deleting others")
            db.execute("DROP TABLE del")
    # The UPDATE of a stored filter, correlated: one statement per filter.
    db.execute("CREATE TABLE bf(name TEXT PRIMARY KEY, f BLOB)")
    seeded = one("SELECT bloom_agg(x, 0.01, 5000) FROM seeds")
    db.execute("INSERT INTO bf VALUES ('a', ?1), ('b', ?1)", (seeded,))
    db.execute("UPDATE bf SET f = coalesce((SELECT bloom_add_agg(bf.f, x) FROM bv), f) "
               "WHERE name = 'a'")
    check(one("SELECT f FROM bf WHERE name = 'a'") == one("SELECT bloom_add_agg(?, x) FROM bv",
                                                          (seeded,)),
          "UPDATE ... SET f = (SELECT bloom_add_agg(f, x) ...) stores the bulk result")
    db.execute("UPDATE bf SET f = coalesce((SELECT bloom_add_agg(bf.f, x) FROM bv WHERE 0), f) "
               "WHERE name = 'b'")
    check(one("SELECT f = ? FROM bf WHERE name = 'b'", (seeded,)) == 1,
          "no rows: NULL, and COALESCE keeps the stored filter")
    # Several filters in one statement: aggregate per filter.
    db.execute("CREATE TABLE bg(name TEXT, x)")
    db.execute(f"INSERT INTO bg {series(3000)} SELECT CASE i % 2 WHEN 0 THEN 'a' ELSE 'b' END, i "
               "FROM n")
    per = dict(db.execute("SELECT bf.name, bloom_add_agg(bf.f, bg.x) FROM bf JOIN bg USING (name) "
                          "GROUP BY bf.name").fetchall())
    check(one(f"{series(3000)} SELECT count(*) FROM n WHERE NOT bloom_contains(?, i) "
              "AND i % 2 = 1", (per["b"],)) == 0 and
          one("SELECT bloom_count(?)", (per["b"],)) in range(1400, 1600),
          "GROUP BY: each filter gets its own rows")
    expect_error("SELECT bloom_add_agg(bf.f, bg.x) FROM bf JOIN bg USING (name)",
                 "bloom_add_agg: every row must pass the same filter, but row 2's filter differs "
                 "from row 1's: to change several filters in one statement, aggregate per filter "
                 "(GROUP BY the filter's key)")
    # NULLs and no rows.
    f = one("SELECT bloom_new(100, 0.01)")
    check(one("SELECT bloom_add_agg(?, x) FROM (SELECT NULL AS x UNION ALL SELECT NULL)", (f,)) == f,
          "NULL values are skipped")
    for agg in ("bloom_add_agg", "bloom_delete_agg", "cuckoo_add_agg", "cuckoo_delete_agg"):
        kind = agg.split("_")[0]
        check(one(f"SELECT {agg}({kind}_new(100, 0.01), x) FROM bv WHERE 0") is None,
              f"{agg} over no rows is NULL")
        expect_error(f"SELECT {agg}(NULL, 1)",
                     f"{agg}: filter is null: pass the stored filter; where there is none yet, "
                     f"start from COALESCE(filter, {kind}_new(...))")
        expect_error(f"SELECT {agg}(f, x) FROM (SELECT {kind}_new(100, 0.01) AS f, NULL AS x "
                     "UNION ALL SELECT NULL, 1)",
                     f"{agg}: filter is null: pass the stored filter; where there is none yet, "
                     f"start from COALESCE(filter, {kind}_new(...))")
        expect_error(f"SELECT {agg}('junk', 1)", f"{agg}: filter must be a blob, got text")
        other = "cuckoo" if kind == "bloom" else "bloom"
        expect_error(f"SELECT {agg}({other}_new(100, 0.01), 1)",
                     f"{agg}: filter: expected a {kind} filter, got a {other} filter: use the "
                     f"{other}_* functions for {other} filters")
        # A damaged filter: the scalar functions' message, with this name.
        damaged = f"substr({kind}_new(100, 0.01), 1, 70)"
        want = error_of(f"SELECT {kind}_contains({damaged}, 1)").replace(f"{kind}_contains", agg)
        check(want.startswith(f"{agg}: filter: "), f"damaged: {want}")
        expect_error(f"SELECT {agg}({damaged}, 1)", want)
    expect_error("SELECT bloom_delete_agg(bloom_new(100, 0.01), x) FROM bv",
                 "bloom_delete_agg: a blocked bloom filter cannot delete values: "
                 "build the filter with layout 'counting' for that")
    # A cuckoo filter too small for the rows: an error, and the stored bytes stay.
    db.execute("CREATE TABLE cf(name TEXT PRIMARY KEY, f BLOB)")
    db.execute("INSERT INTO cf SELECT 'c', cuckoo_agg(x, 0.01, 500) FROM seeds")
    before = one("SELECT f FROM cf")
    check(len(before) == len(one("SELECT cuckoo_new(500)")), "the seeded cuckoo_new(500)")
    err = error_of("UPDATE cf SET f = (SELECT cuckoo_add_agg(cf.f, x) FROM bv)")
    m = re.fullmatch(r"cuckoo_add_agg: cuckoo filter is full \((\d+) items, load (\d+\.\d)%\) "
                     r"after adding (\d+) values: the statement changes nothing; rebuild it larger, "
                     r"with cuckoo_new\(capacity\) or cuckoo_agg over every value", err or "")
    # The items: the values added and the two seeds.
    check(m is not None and int(m.group(1)) == int(m.group(3)) + 2 and float(m.group(2)) > 90,
          f"full cuckoo_add_agg: {err!r}")
    check(one("SELECT f FROM cf") == before, "the failed UPDATE left the stored filter as it was")
    db.execute("BEGIN")
    check(error_of("UPDATE cf SET f = (SELECT cuckoo_add_agg(cf.f, x) FROM bv)") is not None,
          "full inside a transaction")
    db.execute("COMMIT")
    check(one("SELECT f FROM cf") == before, "still the old bytes after COMMIT")
    # cuckoo_add_unique: one copy per value.
    c = one("SELECT cuckoo_agg(x, 0.001, 5000) FROM seeds")
    check(len(c) == len(one("SELECT cuckoo_new(5000, 0.001)")), "the seeded cuckoo_new(5000, 0.001)")
    c1 = one("SELECT cuckoo_add_unique(?, 'a')", (c,))
    check(c1 == one("SELECT cuckoo_add(?, 'a')", (c,)), "cuckoo_add_unique of a new value = cuckoo_add")
    check(one("SELECT cuckoo_add_unique(?, 'a')", (c1,)) == c1,
          "cuckoo_add_unique of a value held already: the same bytes")
    check(one("SELECT cuckoo_add_unique(?, NULL)", (c1,)) == c1, "NULL value: the filter unchanged")
    check(one("SELECT cuckoo_add_unique(NULL, 1)") is None, "NULL filter: NULL")
    expect_error("SELECT cuckoo_add_unique('junk', 1)", "cuckoo_add_unique: filter must be a blob, got text")
    expect_error("SELECT cuckoo_add_unique(bloom_new(10, 0.01), 1)",
                 "cuckoo_add_unique: filter: expected a cuckoo filter, got a bloom filter: "
                 "use the bloom_* functions for bloom filters")
    u = c
    for rnd in range(2):
        for v in values[:1500]:
            u = one("SELECT cuckoo_add_unique(?, ?)", (u, v))
    distinct = len(set(values[:1500]))
    copies = one("SELECT max(cuckoo_count(?, x)) FROM (SELECT x FROM bv WHERE id <= 1500)", (u,))
    check(info(u, "cuckoo")["items"] <= distinct + 2 and copies == 1,
          f"twice over 1,500 values: {info(u, 'cuckoo')['items']} items for {distinct} distinct "
          "and the 2 seeds, "
          f"at most {copies} copies")
    _, _, err = fill(one("SELECT cuckoo_new(4)"), "cuckoo_add_unique", 100)
    check(err is not None and err.startswith("cuckoo filter is full ("), f"full: {err!r}")


# ---- value families ---------------------------------------------------------------------------

FIXTURES = os.path.join(ROOT, "tests", "fixtures", "amq-0.3.0.tsv")
# The format version amq 0.3.0 wrote each layout with (docs/FORMAT.md).
OLD_VERSIONS = {"classic": 1, "blocked": 1, "b4": 1, "counting": 2, "scalable": 2, "b2": 3,
                "b8": 3, "semisorted": 3}
LAYOUTS = [("bloom", layout) for layout in ("classic", "blocked", "counting", "scalable")] + \
          [("cuckoo", layout) for layout in ("b2", "b4", "b8", "semisorted")]
# Header byte 44 of a version 4 filter: the families it holds.
FAMILY_BITS = {"numbers": 1, "text": 2, "blobs": 4}


def refused(fn, holds, got, hint):
    """The message of a value whose family the filter does not hold."""
    return f"{fn}: value: the filter holds {holds}, got {got}: {hint}"


def use(held):
    """The hint when no cast keeps the value's meaning."""
    return f"use {held}, the famil{'ies' if ' or ' in held else 'y'} the filter holds"


def families_of(f, kind="bloom"):
    """What the filter says it holds, checked against its header: version 4
    and byte 44 for known families, the old version and a zero byte for
    unknown ones."""
    i = info(f, kind)
    known = i["families"] is not None
    bits = sum(FAMILY_BITS[name] for name in i["families"]) if known else 0
    check(f[44] == bits and f[4] == i["format_version"] and (i["format_version"] == 4) == known,
          f"header bytes 4 and 44 ({f[4]}, {f[44]}) against {i}")
    return i["families"]


def fixtures():
    """tests/fixtures/amq-0.3.0.tsv: (kind, layout, bytes) of each filter amq
    0.3.0 wrote."""
    rows = []
    with open(FIXTURES) as fh:
        for line in fh:
            name, kind, hexed = line.rstrip("\n").split("\t")
            rows.append((kind, name.split()[1], bytes.fromhex(hexed)))
    return rows


def shape(f, kind):
    """The parameters of bloom_info that two filters must share to combine."""
    i = info(f, kind)
    keep = ("kind", "layout", "bits", "counters", "counter_bits", "hashes", "seed", "bytes",
            "fpr", "capacity", "expansion")
    links = [(l["capacity"], l["bits"], l["hashes"], l["error"]) for l in i.get("links", [])]
    return {k: i[k] for k in keep if k in i}, links


def test_families():
    """Value families: a filter records which of numbers, text and blobs it
    holds (format version 4, header byte 44) and refuses a probe, add, delete
    or count of another family in exact words with the cast that helps;
    aggregates record every family of a mixed column, an empty filter takes
    its first add's, union and intersection combine them; NULLs stay NULL;
    and the filters amq 0.3.0 wrote (tests/fixtures) are read with unknown
    families, never checked, and combine into filters that release reads."""
    ints = one(f"{series(100)} SELECT bloom_agg(i) FROM n")
    cints = one(f"{series(100)} SELECT cuckoo_agg(i) FROM n")
    check(families_of(ints) == ["numbers"] and families_of(cints, "cuckoo") == ["numbers"],
          "an aggregate of integers holds numbers")

    # The newcomer's case: 42 inserted into a TEXT column is stored as the
    # text '42', which hashes apart from the integer 42. The probe is an
    # error that names the cast, not a silent "no"; the cast answers.
    db.execute("CREATE TABLE fam_keys(k TEXT)")
    db.execute("INSERT INTO fam_keys VALUES (42)")
    check(one("SELECT typeof(k) FROM fam_keys") == "text", "42 in a TEXT column is text")
    for kind, f in (("bloom", ints), ("cuckoo", cints)):
        hint = "cast the value (CAST('42' AS INTEGER), '42'::int8)"
        expect_error(f"SELECT {kind}_contains(?, k) FROM fam_keys",
                     refused(f"{kind}_contains", "numbers", "text '42'", hint), (f,))
        expect_error(f"SELECT count(*) FROM fam_keys WHERE {kind}_contains(?, k)",
                     refused(f"{kind}_contains", "numbers", "text '42'", hint), (f,))
        check(one(f"SELECT {kind}_contains(?, CAST(k AS INTEGER)) FROM fam_keys", (f,)) == 1,
              f"{kind}: CAST(k AS INTEGER) finds 42")
    # An INTEGER column stores '42' as 42: no cast needed.
    db.execute("CREATE TABLE fam_ints(k INTEGER)")
    db.execute("INSERT INTO fam_ints VALUES ('42')")
    check(one("SELECT typeof(k) || bloom_contains(?, k) FROM fam_ints", (ints,)) == "integer1",
          "'42' in an INTEGER column is the number 42")
    # A scan that meets a text row after numbers: the error, not a count.
    db.execute("CREATE TABLE fam_rows(id INTEGER PRIMARY KEY, x)")
    db.executemany("INSERT INTO fam_rows(x) VALUES (?)", [(1,), (2,), (3.0,), ("a",), (4,), (None,)])
    expect_error("SELECT count(*) FROM fam_rows WHERE bloom_contains(?, x)",
                 refused("bloom_contains", "numbers", "text 'a'", use("a number")), (ints,))
    # The hints: a number in text casts to INTEGER or REAL; other text and
    # blobs name the family; text cut after 40 bytes at a character, blobs
    # after 16 bytes.
    for value, got, hint in [
        ("4.5", "text '4.5'", "cast the value (CAST('4.5' AS REAL), '4.5'::float8)"),
        ("-1e3", "text '-1e3'", "cast the value (CAST('-1e3' AS REAL), '-1e3'::float8)"),
        ("+7", "text '+7'", "cast the value (CAST('+7' AS INTEGER), '+7'::int8)"),
        ("0x10", "text '0x10'", use("a number")),
        (" 1", "text ' 1'", use("a number")),
        ("it's", "text 'it''s'", use("a number")),
        ("a\nb", "text 'a?b'", use("a number")),
        ("x" * 40, f"text '{'x' * 40}'", use("a number")),
        ("x" * 41, f"text '{'x' * 40}'...", use("a number")),
        ("\u00e9" * 30, f"text '{chr(0xe9) * 20}'...", use("a number")),
        ("\u20ac" * 14, f"text '{chr(0x20ac) * 13}'...", use("a number")),
        (b"abc", "blob X'616263'", use("a number")),
        (b"", "blob X''", use("a number")),
        (bytes(range(16)), "blob X'000102030405060708090A0B0C0D0E0F'", use("a number")),
        (bytes(range(17)), "blob X'000102030405060708090A0B0C0D0E0F'...", use("a number")),
    ]:
        expect_error("SELECT bloom_contains(?, ?)",
                     refused("bloom_contains", "numbers", got, hint), (ints, value))

    # A mixed column: every layout's aggregate holds numbers and text,
    # answers for each member, and refuses a blob (here 'k1' as bytes).
    db.execute("CREATE TABLE fam_mixed(x)")
    db.executemany("INSERT INTO fam_mixed VALUES (?)",
                   [(i,) for i in range(1, 201)] + [(f"k{i}",) for i in range(1, 51)])
    check(one("SELECT group_concat(t, ',') FROM (SELECT DISTINCT typeof(x) AS t FROM fam_mixed "
              "ORDER BY t)") == "integer,text", "fam_mixed holds integers and text")
    mixed = {}
    for kind, layout in LAYOUTS:
        for capacity in ("NULL", "1000"):
            f = one(f"SELECT {kind}_agg(x, 0.01, {capacity}, '{layout}') FROM fam_mixed")
            what = f"{kind}_agg(x, 0.01, {capacity}, '{layout}') of a mixed column"
            check(families_of(f, kind) == ["numbers", "text"] and f[4] == 4 and f[44] == 3,
                  f"{what}: {info(f, kind)}")
            check(one(f"SELECT count(*) FROM fam_mixed WHERE NOT {kind}_contains(?, x)",
                      (f,)) == 0, f"{what}: every member found")
            check(one(f"SELECT {kind}_contains(?, 7.0) AND {kind}_contains(?, 'k7')", (f, f)) == 1,
                  f"{what}: 7.0 and 'k7'")
            expect_error(f"SELECT {kind}_contains(?, X'6B31')",
                         refused(f"{kind}_contains", "numbers and text", "blob X'6B31'",
                                 use("a number or text")), (f,))
            mixed[kind, layout, capacity] = f
    three = one("SELECT cuckoo_agg(x) FROM (SELECT 1 AS x UNION ALL SELECT 'a' UNION ALL "
                "SELECT X'00' UNION ALL SELECT 2.5)")
    check(families_of(three, "cuckoo") == ["numbers", "text", "blobs"] and three[44] == 7,
          "cuckoo_agg of three families")

    # An empty filter holds no family: it answers any probe, takes its first
    # add's family, then refuses another.
    for kind, layout in LAYOUTS:
        empty = one(f"SELECT {kind}_new(1000, 0.01, '{layout}')")
        check(families_of(empty, kind) == [] and empty[4] == 4 and empty[44] == 0,
              f"{kind}_new '{layout}' holds no family yet")
        check(one(f"SELECT {kind}_contains(?1, 1) + {kind}_contains(?1, 'a') + "
                  f"{kind}_contains(?1, X'00')", (empty,)) == 0,
              f"{kind} '{layout}': an empty filter answers every family")
        t = one(f"SELECT {kind}_add(?, 'a')", (empty,))
        check(families_of(t, kind) == ["text"] and t[44] == 2, f"{kind} '{layout}': 'a' first")
        expect_error(f"SELECT {kind}_add(?, 1)",
                     refused(f"{kind}_add", "text", "number 1",
                             "cast the value (CAST(1 AS TEXT), 1::text)"), (t,))
        expect_error(f"SELECT {kind}_contains(?, 2.5)",
                     refused(f"{kind}_contains", "text", "number 2.5",
                             "cast the value (CAST(2.5 AS TEXT), 2.5::text)"), (t,))
        expect_error(f"SELECT {kind}_contains(?, X'61')",
                     refused(f"{kind}_contains", "text", "blob X'61'",
                             "cast the value (CAST(value AS TEXT); in PostgreSQL "
                             "convert_from(value, 'UTF8'))"), (t,))
        check(one(f"SELECT {kind}_contains(?, CAST(X'61' AS TEXT))", (t,)) == 1,
              f"{kind} '{layout}': the cast finds 'a'")
        b = one(f"SELECT {kind}_add(?, X'616263')", (empty,))
        check(families_of(b, kind) == ["blobs"] and b[44] == 4, f"{kind} '{layout}': a blob first")
        expect_error(f"SELECT {kind}_add(?, 'abc')",
                     refused(f"{kind}_add", "blobs", "text 'abc'",
                             "cast the value (CAST('abc' AS BLOB), 'abc'::bytea)"), (b,))
        check(one(f"SELECT {kind}_contains(?, CAST('abc' AS BLOB))", (b,)) == 1,
              f"{kind} '{layout}': the cast finds X'616263'")
        r = one(f"SELECT {kind}_add(?, 2.5)", (empty,))
        check(families_of(r, kind) == ["numbers"] and
              one(f"SELECT {kind}_contains(?, 2.5)", (r,)) == 1, f"{kind} '{layout}': a real first")
        if kind == "cuckoo":
            u = one("SELECT cuckoo_add_unique(?, X'00')", (empty,))
            check(families_of(u, kind) == ["blobs"], f"cuckoo_add_unique '{layout}' records blobs")
            expect_error("SELECT cuckoo_add_unique(?, 0)",
                         refused("cuckoo_add_unique", "blobs", "number 0", use("a blob")), (u,))

    # bloom_add_agg / cuckoo_add_agg over a mixed column into an empty filter:
    # the first row decides, the first row of another family is refused, and
    # a stored filter stays as it was.
    ordered = "(SELECT x FROM fam_rows ORDER BY id)"
    text_first = "(SELECT x FROM fam_rows ORDER BY typeof(x) = 'text' DESC, id)"
    for kind, layout in LAYOUTS:
        empty = one(f"SELECT {kind}_new(1000, 0.01, '{layout}')")
        expect_error(f"SELECT {kind}_add_agg(?, x) FROM {ordered}",
                     refused(f"{kind}_add_agg", "numbers", "text 'a'", use("a number")), (empty,))
        expect_error(f"SELECT {kind}_add_agg(?, x) FROM {text_first}",
                     refused(f"{kind}_add_agg", "text", "number 1",
                             "cast the value (CAST(1 AS TEXT), 1::text)"), (empty,))
        numbers = one(f"SELECT {kind}_add_agg(?, x) FROM {ordered} WHERE typeof(x) <> 'text'",
                      (empty,))
        check(families_of(numbers, kind) == ["numbers"] and info(numbers, kind)["items"] == 4,
              f"{kind}_add_agg '{layout}' of numbers")
        db.execute("CREATE TEMP TABLE fam_stored(f BLOB)")
        db.execute("INSERT INTO fam_stored VALUES (?)", (empty,))
        err = error_of(f"UPDATE fam_stored SET f = (SELECT {kind}_add_agg(fam_stored.f, x) "
                       f"FROM {ordered})")
        check(err == refused(f"{kind}_add_agg", "numbers", "text 'a'", use("a number")) and
              one("SELECT f FROM fam_stored") == empty,
              f"{kind}_add_agg '{layout}': the refused UPDATE kept the bytes: {err!r}")
        db.execute("DROP TABLE fam_stored")

    # Delete and count: the same check. A delete of an empty filter records
    # nothing; a filter's families outlive the deletes of its values.
    counting = one(f"{series(100)} SELECT bloom_agg(i, 0.01, NULL, 'counting') FROM n")
    for sql, f, message in [
        ("cuckoo_delete(?, 'a')", cints,
         refused("cuckoo_delete", "numbers", "text 'a'", use("a number"))),
        ("cuckoo_count(?, '5')", cints,
         refused("cuckoo_count", "numbers", "text '5'",
                 "cast the value (CAST('5' AS INTEGER), '5'::int8)")),
        ("cuckoo_add_unique(?, X'05')", cints,
         refused("cuckoo_add_unique", "numbers", "blob X'05'", use("a number"))),
        ("bloom_delete(?, X'00')", counting,
         refused("bloom_delete", "numbers", "blob X'00'", use("a number"))),
        ("bloom_frequency(?, '5')", counting,
         refused("bloom_frequency", "numbers", "text '5'",
                 "cast the value (CAST('5' AS INTEGER), '5'::int8)")),
        ("bloom_frequency(?, 'abc')", mixed["bloom", "counting", "NULL"], None),
    ]:
        if message is None:
            check(one(f"SELECT {sql}", (f,)) == 0, f"{sql}: a family the filter holds")
        else:
            expect_error(f"SELECT {sql}", message, (f,))
    expect_error(f"SELECT cuckoo_delete_agg(?, x) FROM {ordered}",
                 refused("cuckoo_delete_agg", "numbers", "text 'a'", use("a number")), (cints,))
    expect_error(f"SELECT bloom_delete_agg(?, x) FROM {ordered}",
                 refused("bloom_delete_agg", "numbers", "text 'a'", use("a number")), (counting,))
    check(one("SELECT cuckoo_count(?, 5) + bloom_frequency(?, 5)", (cints, counting)) == 2,
          "count and frequency of a number")
    for kind, layout in (("cuckoo", "b4"), ("bloom", "counting")):
        empty = one(f"SELECT {kind}_new(100, 0.01, '{layout}')")
        check(one(f"SELECT {kind}_delete(?, 'a')", (empty,)) == empty,
              f"{kind} '{layout}': deleting from an empty filter records no family")
        gone = one(f"SELECT {kind}_delete({kind}_add(?, 'a'), 'a')", (empty,))
        check(info(gone, kind)["items"] == 0 and families_of(gone, kind) == ["text"],
              f"{kind} '{layout}': the family outlives the value's delete")
        expect_error(f"SELECT {kind}_add(?, 1)",
                     refused(f"{kind}_add", "text", "number 1",
                             "cast the value (CAST(1 AS TEXT), 1::text)"), (gone,))

    # Union: both filters' families; intersection: the ones both hold.
    base = one("SELECT bloom_new(1000, 0.01)")
    n = one("SELECT bloom_add(?, 1)", (base,))
    t = one("SELECT bloom_add(?, 'a')", (base,))
    b = one("SELECT bloom_add(?, X'00')", (base,))
    nt = one("SELECT bloom_union(?, ?)", (n, t))
    for left, right, union, intersection in [
        (n, t, ["numbers", "text"], []), (n, base, ["numbers"], []), (n, n, ["numbers"], ["numbers"]),
        (nt, n, ["numbers", "text"], ["numbers"]), (t, b, ["text", "blobs"], []),
        (nt, b, ["numbers", "text", "blobs"], []),
    ]:
        for x, y in ((left, right), (right, left)):
            got = (families_of(one("SELECT bloom_union(?, ?)", (x, y))),
                   families_of(one("SELECT bloom_intersect(?, ?)", (x, y))))
            check(got == (union, intersection),
                  f"{families_of(x)} with {families_of(y)}: union and intersection {got}")
    check(one("SELECT bloom_contains(?, 1) AND bloom_contains(?, 'a')", (nt, nt)) == 1,
          "the union answers both families")
    expect_error("SELECT bloom_contains(?, X'00')",
                 refused("bloom_contains", "numbers and text", "blob X'00'",
                         use("a number or text")), (nt,))
    all3 = one("SELECT bloom_union_agg(f) FROM (SELECT ? AS f UNION ALL SELECT ? UNION ALL "
               "SELECT NULL UNION ALL SELECT ?)", (n, t, b))
    check(families_of(all3) == ["numbers", "text", "blobs"] and all3[44] == 7 and
          one("SELECT bloom_contains(?1, 1) + bloom_contains(?1, 'a') + bloom_contains(?1, X'00')",
              (all3,)) == 3, "bloom_union_agg holds every family of its filters")
    # Disjoint families intersect to none: such a filter answers any family.
    none = one("SELECT bloom_intersect(?, ?)", (n, t))
    check(one("SELECT bloom_contains(?1, X'00') + bloom_contains(?1, 'zz')", (none,)) == 0,
          "an intersection of no shared family answers every family")

    # NULL values: NULL answers, unchanged filters, no family recorded.
    for sql, f, want in [
        ("bloom_contains(?, NULL)", ints, None), ("cuckoo_contains(?, NULL)", cints, None),
        ("cuckoo_count(?, NULL)", cints, None), ("bloom_frequency(?, NULL)", counting, None),
        ("bloom_add(?, NULL)", ints, ints), ("bloom_add(?, NULL)", base, base),
        ("cuckoo_add(?, NULL)", cints, cints), ("cuckoo_delete(?, NULL)", cints, cints),
        ("cuckoo_add_unique(?, NULL)", cints, cints), ("bloom_delete(?, NULL)", counting, counting),
        ("bloom_add_agg(?, NULL)", t, t), ("cuckoo_add_agg(?, NULL)", cints, cints),
        ("bloom_contains(?, NULL)", t, None),
    ]:
        check(one(f"SELECT {sql}", (f,)) == want, f"{sql} of {families_of(f, sql[:sql.index('_')])}")
    for kind in ("bloom", "cuckoo"):
        nulls = one(f"SELECT {kind}_agg(x) FROM (SELECT NULL AS x UNION ALL SELECT NULL)")
        check(families_of(nulls, kind) == [] and nulls[44] == 0, f"{kind}_agg of NULLs: no family")
        one_null = one(f"SELECT {kind}_agg(x) FROM (SELECT NULL AS x UNION ALL SELECT 'a')")
        check(families_of(one_null, kind) == ["text"], f"{kind}_agg of NULL and 'a': text")
        added = one(f"SELECT {kind}_add_agg({kind}_new(100, 0.01), x) FROM "
                    "(SELECT NULL AS x UNION ALL SELECT X'01' UNION ALL SELECT NULL)")
        check(families_of(added, kind) == ["blobs"], f"{kind}_add_agg of NULLs and a blob: blobs")

    # A header that names families no version has, or families in an older
    # version: refused before the checksum, in core's words.
    for pos, value, problem in ((44, 8, "unknown value families 0x08"),
                                (44, 0xFF, "unknown value families 0xff"),
                                (4, 3, "reserved header bytes are not zero")):
        bad = bytearray(nt)
        bad[pos] = value
        expect_error("SELECT bloom_contains(?, 1)",
                     f"bloom_contains: filter: {problem}: {NOT_A_FILTER}", (bytes(bad),))

    # The filters amq 0.3.0 wrote: unknown families, their own version,
    # every member found, any family probed without error.
    old = fixtures()
    check(sorted((k, l) for k, l, _ in old) == sorted(LAYOUTS),
          f"{FIXTURES}: one filter per kind and layout")
    for kind, layout, f in old:
        what = f"amq 0.3.0 {kind} '{layout}'"
        i = info(f, kind)
        check(i["families"] is None and i["format_version"] == OLD_VERSIONS[layout] and
              f[4] == OLD_VERSIONS[layout] and f[44] == 0 and i["items"] == 250 and
              i["layout"] == layout, f"{what}: {i}")
        check(one(f"SELECT count(*) FROM fam_mixed WHERE NOT {kind}_contains(?, x)", (f,)) == 0,
              f"{what}: every member found (ints 1..200, 'k1'..'k50')")
        got = db.execute(f"SELECT {kind}_contains(?1, X'6B31'), {kind}_contains(?1, '7'), "
                         f"{kind}_contains(?1, 7.0), {kind}_contains(?1, NULL)", (f,)).fetchone()
        check(got[0] in (0, 1) and got[1] in (0, 1) and got[2:] == (1, None),
              f"{what}: a blob, a text '7' and 7.0 answer without error: {got}")
        # This release's aggregate over the same column: the same payload;
        # only the version, the families and the checksum differ.
        new = mixed[kind, layout, "NULL"]
        diff = [k for k, (a, b) in enumerate(zip(new, f)) if a != b]
        check(len(new) == len(f) and diff[:2] == [4, 44] and set(diff[2:]) <= set(range(56, 64)),
              f"{what}: this release's bytes differ at {diff}")
        # Adds of any family keep the old version and unknown families.
        add = one(f"SELECT {kind}_add(?, X'0102')", (f,))
        check(families_of(add, kind) is None and add[4] == f[4] and
              one(f"SELECT {kind}_contains(?, X'0102')", (add,)) == 1,
              f"{what}: a blob added, still version {f[4]}")
        bulk = one(f"SELECT {kind}_add_agg(?, x) FROM (SELECT 'z' AS x UNION ALL SELECT 9.5 "
                   "UNION ALL SELECT X'09')", (f,))
        check(families_of(bulk, kind) is None and bulk[4] == f[4] and
              info(bulk, kind)["items"] == 253, f"{what}: {kind}_add_agg of three families")
        if kind == "cuckoo":
            check(one("SELECT cuckoo_count(?, 'k1') + cuckoo_count(?, 5)", (f, f)) == 2,
                  f"{what}: counts")
            d = one("SELECT cuckoo_delete(?, 'k1')", (f,))
            check(one("SELECT cuckoo_contains(?, 'k1')", (d,)) == 0 and d[4] == f[4] and
                  families_of(d, kind) is None, f"{what}: a delete")
            u = one("SELECT cuckoo_add_unique(?, X'00')", (f,))
            check(u[4] == f[4] and one("SELECT cuckoo_add_unique(?, 'k2') = ?", (f, f)) == 1,
                  f"{what}: cuckoo_add_unique")
            continue
        if layout == "counting":
            check(one("SELECT bloom_frequency(?, 'k3') >= 1 AND bloom_frequency(?, X'00') >= 0",
                      (f, f)) == 1, f"{what}: frequencies of any family")
            d = one("SELECT bloom_delete(?, 'k3')", (f,))
            check(d[4] == f[4] and families_of(d) is None and info(d)["items"] == 249,
                  f"{what}: a delete")
        # bloom_new(250, 0.01, layout) has the fixture's shape: combined with
        # a new filter, the result has unknown families and the old version.
        fresh = one(f"SELECT bloom_new(250, 0.01, '{layout}')")
        check(shape(fresh, kind) == shape(f, kind),
              f"{what}: bloom_new(250, 0.01, '{layout}') has its shape: "
              f"{shape(fresh, kind)} vs {shape(f, kind)}")
        for x, y in ((f, fresh), (fresh, f)):
            check(one("SELECT bloom_union(?, ?)", (x, y)) == f and
                  one("SELECT bloom_union_agg(g) FROM (SELECT ? AS g UNION ALL SELECT ?)",
                      (x, y)) == f,
                  f"{what}: union with an empty new filter gives the old bytes back")
        blobs = one("SELECT bloom_add(?, X'CAFE')", (fresh,))
        check(families_of(blobs) == ["blobs"], f"{what}: a new filter of blobs")
        for x, y in ((f, blobs), (blobs, f)):
            u = one("SELECT bloom_union(?, ?)", (x, y))
            check(families_of(u) is None and u[4] == f[4] and u[44] == 0 and
                  info(u)["items"] == 251, f"{what}: union with a new filter: {info(u)}")
            check(one("SELECT count(*) FROM fam_mixed WHERE NOT bloom_contains(?, x)", (u,)) == 0
                  and one("SELECT bloom_contains(?, X'CAFE')", (u,)) == 1,
                  f"{what}: the union holds both filters' values")
            check(one("SELECT bloom_union_agg(g) FROM (SELECT ? AS g UNION ALL SELECT ?)",
                      (x, y)) == u, f"{what}: bloom_union_agg = bloom_union")
            inter = one("SELECT bloom_intersect(?, ?)", (x, y))
            check(families_of(inter) is None and inter[4] == f[4] and inter[44] == 0,
                  f"{what}: intersection with a new filter: {info(inter)}")
        # The other way round: a new mixed filter takes the old one in.
        newer = one(f"SELECT bloom_agg(x, 0.01, 250, '{layout}') FROM fam_mixed WHERE "
                    "typeof(x) = 'integer'")
        u = one("SELECT bloom_union_agg(g) FROM (SELECT ? AS g UNION ALL SELECT ?)", (newer, f))
        check(families_of(newer) == ["numbers"] and families_of(u) is None and u[4] == f[4],
              f"{what}: bloom_union_agg(new, old) is old")


def test_interrupt():
    """sqlite3_interrupt from another thread ends a long amq call with
    SQLITE_INTERRUPT, and the connection works afterwards. From SQLite 3.41
    amq sees it inside the call (sqlite3_is_interrupted, polled by core's long
    loops); older SQLite ends the statement when the call returns."""
    conn = connect()
    inside = sqlite3.sqlite_version_info >= (3, 41)
    single_calls = ["SELECT length(bloom_new(500000000, 0.001))",
                    "SELECT length(cuckoo_new(500000000, 0.001))"]
    if not inside:
        print(f"NOT TESTED: an interrupt inside one call (SQLite {sqlite3.sqlite_version} has no "
              "sqlite3_is_interrupted; the roots with 3.41 and later test it)")
    for sql in (single_calls if inside else []) + [
            "WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 30000000) "
            "SELECT length(bloom_agg(i)) FROM g"]:
        timer = threading.Timer(0.05, conn.interrupt)
        timer.start()
        start = time.perf_counter()
        try:
            conn.execute(sql).fetchone()
            code = None
        except sqlite3.OperationalError as e:
            code = getattr(e, "sqlite_errorcode", None)
        finally:
            timer.cancel()
        took = time.perf_counter() - start
        check(code == sqlite3.SQLITE_INTERRUPT,
              f"{sql[:40]}...: SQLITE_INTERRUPT after {took:.2f} s (SQLite "
              f"{sqlite3.sqlite_version}), got {code}")
        check(conn.execute("SELECT bloom_contains(bloom_agg(7), 7)").fetchone()[0] == 1,
              "the connection works after the interrupt")


# ---- working memory and temporary files -------------------------------------------------

WORK_MEM_DEFAULT = 64 << 20


def bad_work_mem(got):
    return (f"amq_work_mem: bytes must be an integer between 65536 and 1099511627776, got {got}: "
            "pass the working memory in bytes, such as 67108864 for 64 MiB")


def test_work_mem():
    c = connect()
    check(c.execute("SELECT amq_work_mem()").fetchone()[0] == WORK_MEM_DEFAULT,
          "amq_work_mem() is 64 MiB until set")
    check(c.execute("SELECT amq_work_mem(65536)").fetchone()[0] == 65536 and
          c.execute("SELECT amq_work_mem()").fetchone()[0] == 65536,
          "amq_work_mem(65536) sets the least and returns it")
    check(c.execute("SELECT amq_work_mem(1099511627776)").fetchone()[0] == 1 << 40,
          "amq_work_mem takes up to 1 TiB")
    check(c.execute("SELECT amq_work_mem(1e6), typeof(amq_work_mem())").fetchone() ==
          (1000000, "integer"), "an integral REAL is taken, an INTEGER given back")
    check(connect().execute("SELECT amq_work_mem()").fetchone()[0] == WORK_MEM_DEFAULT,
          "amq_work_mem is per connection")
    check(one("SELECT amq_work_mem()") == WORK_MEM_DEFAULT, "db keeps its own")
    for value, got in (("65535", "65535"), ("0", "0"), ("-1", "-1"),
                       ("1099511627777", "1099511627777"), ("'65536'", "text"),
                       ("65536.5", "real 65536.5"), ("NULL", "null"), ("X'00'", "blob"),
                       ("9223372036854775807", "9223372036854775807"), ("1e300", "real 1e+300")):
        got_error = error_of(f"SELECT amq_work_mem({value})", conn=c)
        check(got_error == bad_work_mem(got),
              f"amq_work_mem({value})\n     got  {got_error!r}\n     want {bad_work_mem(got)!r}")
    check(c.execute("SELECT amq_work_mem()").fetchone()[0] == 1000000,
          "a refused amq_work_mem changes nothing")
    expect_error("SELECT amq_work_mem(1, 2)", "wrong number of arguments to function amq_work_mem()")
    # SQLITE_DIRECTONLY: a view or trigger of the schema cannot call it,
    # whatever trusted_schema says.
    c.execute("CREATE TABLE t(x)")
    c.execute("CREATE VIEW v AS SELECT amq_work_mem() AS m")
    c.execute("CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT amq_work_mem(100000); END")
    for sql in ("SELECT m FROM v", "INSERT INTO t VALUES (1)"):
        check(error_of(sql, conn=c) == "unsafe use of amq_work_mem()",
              f"{sql}: {error_of(sql, conn=c)!r}")
    check(c.execute("SELECT amq_work_mem()").fetchone()[0] == 1000000,
          "the trigger did not set amq_work_mem")
    # A running aggregate shares the connection's setting: changed on every
    # row, from 64 KiB to 20 MiB and back, it still gives the same bytes.
    c.execute(f"CREATE TABLE w AS {series(200000)} SELECT i * 7919 AS x FROM n")
    for agg in ("bloom_agg(x)", "cuckoo_agg(x)", "bloom_agg(x, 0.01, NULL, 'counting')"):
        whole = c.execute(f"SELECT {agg} FROM w").fetchone()[0]
        changing = c.execute(f"SELECT {agg} FROM w WHERE "
                             "amq_work_mem(65536 + (rowid % 3) * 10000000) > 0").fetchone()[0]
        check(changing == whole, f"{agg} with amq_work_mem changed on every row")


def spill_child(mode, tmpdir, **env):
    """tests/sqlite/spill_child.py MODE's JSON, run with SQLITE_TMPDIR=tmpdir."""
    out = subprocess.run([PYTHON, os.path.join(os.path.dirname(__file__), "spill_child.py"), mode],
                         capture_output=True, text=True,
                         env=dict(os.environ, SQLITE_TMPDIR=tmpdir, **env), timeout=600)
    try:
        return json.loads(out.stdout)
    except ValueError:
        check(False, f"spill_child.py {mode}: {out.returncode} {out.stdout!r} {out.stderr!r}")
        return None


def test_spill():
    """Collecting aggregates past amq_work_mem spill to SQLite's temporary
    files and still give the same bytes; the files go where SQLite's own go,
    and none is left open after an aggregate finishes, fails or is
    interrupted."""
    with tempfile.TemporaryDirectory() as tmp:
        got = spill_child("same", tmp)
        if got is not None:
            results = got["results"]
            check(len(results) == 48, f"48 builds, got {len(results)}")
            for what, r in results.items():
                memory = what.split()[-1]
                check(r["same"], f"{what}: amq_work_mem({memory}) gives other bytes than the "
                      "default")
                # 1 MiB holds the 20,000 distinct duplicates (not their rows).
                spills = memory == "65536" or "duplicates" not in what or "counting" in what
                check((r["most_open"] > 0) == spills,
                      f"{what}: {r['most_open']} files open at amq_work_mem({memory})")
                check(r["open_after"] == 0, f"{what}: {r['open_after']} files open afterwards")
            print(f"  {sum(r['same'] for r in results.values())} of {len(results)} builds the "
                  f"same with 64 KiB and 1 MiB, {sum(r['most_open'] > 0 for r in results.values())}"
                  f" spilled, at most {max(r['most_open'] for r in results.values())} temporary "
                  "files open")
            check(got["listing"] == [], f"files left in SQLITE_TMPDIR: {got['listing']}")

        got = spill_child("cleanup", tmp)
        if got is not None:
            for kind in ("bloom", "cuckoo"):
                check(got[f"{kind} interrupted"] == ["interrupted", 0],
                      f"{kind}_agg interrupted while spilling: {got[f'{kind} interrupted']}")
                check(got[f"{kind} error"] == ["user-defined function raised exception", 0],
                      f"{kind}_agg failed while spilling: {got[f'{kind} error']}")
            check(got["after"][0] == 0 and got["after"][1] > 0 and got["after"][2] == 0,
                  f"the connection spills again afterwards: {got['after']}")
        check(os.listdir(tmp) == [], f"files left in SQLITE_TMPDIR: {os.listdir(tmp)}")

    # Where the files go: SQLite's temporary directory, by SQLite's rules.
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        for what, sqlite_tmpdir, env, want in (
                ("SQLITE_TMPDIR", a, {}, a),
                ("TMPDIR when SQLITE_TMPDIR does not exist", os.path.join(a, "missing"),
                 {"TMPDIR": b}, b),
                ("PRAGMA temp_store_directory over SQLITE_TMPDIR", a,
                 {"TEMP_STORE_DIRECTORY": b}, b)):
            got = spill_child("where", sqlite_tmpdir, **env)
            check(got is not None and got["dirs"] == [want] and got["open_after"] == 0,
                  f"{what}: temporary files in {got and got['dirs']}, want {want}")

    # A temporary file that cannot be written or created: an I/O error with
    # the system's reason and what to do, and no file left open.
    with tempfile.TemporaryDirectory() as tmp:
        got = spill_child("fsize", tmp)
        want = ("could not write a temporary file: File too large: free space in SQLite's "
                "temporary directory, or raise amq_work_mem so less spills")
        check(got == {"error": want, "code": sqlite3.SQLITE_IOERR, "open_after": 0},
              f"a write past RLIMIT_FSIZE: {got}")
        got = spill_child("nofile", tmp)
        want = ("could not create a temporary file: the file could not be opened: check "
                "SQLite's temporary directory (SQLITE_TMPDIR, TMPDIR, /var/tmp, /tmp) and the "
                "limit of open files, or raise amq_work_mem so nothing spills")
        check(got == {"error": want, "code": sqlite3.SQLITE_IOERR, "open_after": 0},
              f"one file descriptor to spare: {got}")


def main():
    tests = [test_registered_functions, test_flags_in_use, test_hashing, test_bloom_functions,
             test_cuckoo_functions, test_nulls, test_errors, test_aggregates, test_interrupt,
             test_same_bytes_every_run, test_cli, test_demo, test_million_rows,
             test_filter_cache, test_layouts, test_counting, test_dleft, test_scalable,
             test_cuckoo_layouts, test_cuckoo_copies, test_cuckoo_lowest_fpr, test_bulk, test_families,
             test_work_mem, test_spill]
    for test in tests:
        start = time.perf_counter()
        before = failed
        try:
            test()
        except Exception as e:  # a crash in one test must not hide the rest
            check(False, f"{test.__name__} raised {type(e).__name__}: {e}")
        print(f"{test.__name__}: {'ok' if failed == before else 'FAILED'} "
              f"({time.perf_counter() - start:.1f} s)")
    print(f"python: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
