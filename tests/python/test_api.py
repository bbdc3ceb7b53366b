"""The amq Python package in process: value hashing (docs/HASHING.md's
known answers, every supported type, TypeError for the rest), Filter and its
methods on every layout (None as SQL's NULL), value families (a value of a
family the filter does not hold is amq.Error with core's message and Python's
hint; filters of amq 0.3.0, tests/fixtures, are never checked), the builders,
work_mem and spilling (the same bytes on every layout; no file or descriptor
left after success, error or Ctrl-C; a temporary directory that fails is
amq.Error 58030), the progress of a spilled build's merge (its phases in order,
never for a build in memory; a callable that raises stops the build with its
exception), amq.load, the namespace, the amq command (-o written whole or not at
all; keys read by the filter's families; --work-mem; its progress line on a
terminal, through the merge) and the README's
example of it, run as written, and damaged bytes (mutated filters of every
kind and layout, the fuzz seed corpus, random bytes): each gives a Filter or amq.Error, never a crash, and amq.Error exactly
when SQLite refuses the same bytes, with the same words.

Usage: test_api.py [SEED_DIR] (files of valid filters and states, as
build/fuzz/seed_corpus writes them). Run with the Python the package is
installed in; ends with "N passed, N failed".
"""

import copy
import datetime
import decimal
import json
import operator
import os
import pickle
import random
import re
import shutil
import sqlite3
import signal
import subprocess
import sys
import tempfile
import threading
import uuid

import amq

# The tally of checks, shared with the other suites.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from harness import Results  # noqa: E402

BLOOM_LAYOUTS = amq.LAYOUTS["bloom"]
CUCKOO_LAYOUTS = amq.LAYOUTS["cuckoo"]
# Each kind's builder (amq.bloom, amq.cuckoo, ...) with its layouts.
BUILDERS = [(getattr(amq, kind), layouts) for kind, layouts in amq.LAYOUTS.items()]
# The SQL function of each kind and operation, from the function table:
# SQL[("cuckoo", "FREQUENCY")] == "cuckoo_count"; and each aggregate's arguments.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "core", "sql",
                       "function_list.h"), encoding="utf-8") as _table:
    _ROWS = re.findall(r'^AMQ_SQL_(?:FUNCTION|AGGREGATE)\((\w+), (\w+), (\w+), \d+, \d+, "([^"]*)"',
                       _table.read(), re.M)
SQL = {(kind, op): name for name, kind, op, _ in reversed(_ROWS)}
AGG_ARGUMENTS = {kind: arguments for _, kind, op, arguments in _ROWS if op == "AGG"}


def sized(build, layout, **kwargs):
    """kwargs with layout=layout when build's aggregate takes a layout (a kind
    of one layout, fuse, takes none)."""
    if "layout" in AGG_ARGUMENTS[build.__name__]:
        kwargs["layout"] = layout
    return kwargs
D = decimal.Decimal


def signed(hex_hash):
    """docs/HASHING.md's unsigned hex hash as amq_hash's signed integer."""
    n = int(hex_hash, 16)
    return n - (1 << 64) if n >= 1 << 63 else n


def hash_vectors(r):
    """docs/HASHING.md's known answers, and the values that must hash alike."""
    vectors = [(0, "313c2dd2ec996e80"), (3, "e0dc1e7b2fc050ab"), (3.0, "e0dc1e7b2fc050ab"),
               (-1, "53a5f4bc2fc0168c"), (-2**63, "6f16315aee313307"),
               (1.5, "360276011e12cf43"), (float("nan"), "78e9b9b2fa2fac40"),
               (float("inf"), "7bbac6f0db7f77d1"), (1e20, "00c0b44ec06a94e5"),
               ("abc", "8e8fd78217d7b3dd"), ("", "13e608bc156defed"),
               (b"abc", "1a8cafcdf467a415")]
    for value, want in vectors:
        r.equal(f"amq.hash({value!r}) is HASHING.md's {want}", amq.hash(value), signed(want))
    r.equal("amq.hash(3) is -2243884999906406229", amq.hash(3), -2243884999906406229)
    same = [(True, 1), (False, 0), (-0.0, 0), (D("3.000"), 3), (D("-0"), 0), (D("1E+2"), 100),
            (D("3.5"), 3.5), (D("0.1"), 0.1), (D("NaN"), float("nan")),
            (D("-Infinity"), float("-inf")), (D("1E+400"), float("inf")),
            (D(2**63), float(2**63)), (D(2**63 - 1), 2**63 - 1), (2**64, float(2**64)),
            (-(2**70), float(-(2**70))), (10**400, float("inf")),
            (bytearray(b"abc"), b"abc"), (memoryview(b"abc"), b"abc"),
            (uuid.UUID("A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"),
             "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
            (datetime.date(2024, 2, 29), "2024-02-29"), (datetime.date(1, 1, 1), "0001-01-01"),
            (datetime.datetime(2024, 1, 2, 3, 4, 5), "2024-01-02 03:04:05"),
            (datetime.datetime(2024, 1, 2, 3, 4, 5, 120000), "2024-01-02 03:04:05.12"),
            (datetime.datetime(2024, 1, 2, 3, 4, 5, 1), "2024-01-02 03:04:05.000001"),
            (datetime.datetime(2024, 1, 2, 1, 0, tzinfo=datetime.timezone(
                datetime.timedelta(hours=2))), "2024-01-01 23:00:00"),
            (datetime.datetime(2024, 1, 2, 1, 0, tzinfo=datetime.timezone.utc),
             "2024-01-02 01:00:00"),
            (datetime.time(13, 14, 15), "13:14:15"), (datetime.time(0, 0, 0, 500), "00:00:00.0005")]
    for value, equal in same:
        r.equal(f"{value!r} hashes as {equal!r}", amq.hash(value), amq.hash(equal))
    different = [(3, "3"), ("abc", b"abc"), (D("0.5"), "0.5"),
                 (datetime.date(2024, 1, 1), datetime.datetime(2024, 1, 1))]
    for a, b in different:
        r.check(f"{a!r} and {b!r} hash differently", amq.hash(a) != amq.hash(b))
    for bad in [[1], {}, object(), 1j, {1}, (1,)]:
        r.raises(f"amq.hash({type(bad).__name__}) is a TypeError", TypeError, amq.hash, bad)
    r.raises("a time with a zone (timetz) is a TypeError", TypeError, amq.hash,
             datetime.time(1, 2, tzinfo=datetime.timezone.utc))
    r.raises("a signalling NaN is a ValueError", ValueError, amq.hash, D("sNaN"))
    r.raises("a str that is not UTF-8 (lone surrogate) is a UnicodeEncodeError",
             UnicodeEncodeError, amq.hash, "\ud800")


def filter_basics(r):
    """Membership, the read-only methods, copies, pickling, equality, the buffer."""
    f = amq.bloom(range(1000))
    r.check("every value added is in the filter", all(i in f for i in range(1000)))
    r.check("f.contains agrees with `in`", all(f.contains(i) == (i in f)
                                               for i in range(-500, 3000)))
    probes = list(range(-500, 3000)) + [3.0, 2.5, True, D("7"), 2**70]
    r.equal("contains_many agrees with contains", f.contains_many(probes),
            [f.contains(v) for v in probes])
    r.equal("contains_many of a tuple, a generator and a range agree",
            (f.contains_many(tuple(probes[:100])), f.contains_many(v for v in probes[:100]),
             f.contains_many(range(-500, -400))),
            ([f.contains(v) for v in probes[:100]],) * 2 + ([f.contains(v) for v in
                                                            range(-500, -400)],))
    fp = sum(f.contains_many(range(10**6, 10**6 + 20000))) / 20000
    r.check("false-positive rate near the 1% asked for", fp < 0.02, fp)
    r.equal("kind and layout", (f.kind, f.layout), ("bloom", "blocked"))
    info = f.info()
    r.check("info() is bloom_info's dict", info["kind"] == "bloom" and info["items"] == 1000
            and info["bytes"] == len(bytes(f)), info)
    r.check("repr names kind, layout, items and size",
            repr(f) == f"<amq.Filter bloom blocked, 1000 items, {len(bytes(f))} bytes>", repr(f))
    r.equal("Filter(bytes(f)) == f", amq.Filter(bytes(f)), f)
    r.equal("Filter of a bytearray and of a memoryview", (amq.Filter(bytearray(bytes(f))),
                                                          amq.Filter(memoryview(bytes(f)))), (f, f))
    r.equal("pickle round trip", pickle.loads(pickle.dumps(f)), f)
    g = copy.copy(f)
    g.add(123456789)
    r.check("a copy is independent", g != f and 123456789 in g and amq.Filter(bytes(f)) == f)
    r.equal("deepcopy", copy.deepcopy(f), f)
    r.raises("a Filter is unhashable (it changes)", TypeError, hash, f)
    r.equal("memoryview(f) is bytes(f), read-only", (bytes(memoryview(f)),
                                                    memoryview(f).readonly), (bytes(f), True))
    r.raises("Filter(str) is a TypeError", TypeError, amq.Filter, "not bytes")
    r.check("amq.Error is a ValueError", issubclass(amq.Error, ValueError))


def none_is_null(r):
    """None is SQL's NULL in every method, as the SQL functions answer NULL
    (checked against the SQLite extension on every layout): contains, count
    and amq.hash give None, `in` False, contains_many None in its place, add,
    delete, add_unique and add_many change nothing, the builders skip it."""
    con = sqlite3.connect(":memory:")
    amq.load(con)

    def sql(expr, f):
        return con.execute(f"SELECT {expr}", (bytes(f),)).fetchone()[0]

    r.equal("amq.hash(None) is None, as amq_hash(NULL)",
            (amq.hash(None), con.execute("SELECT amq_hash(NULL)").fetchone()[0]), (None, None))
    for kind, layouts in amq.LAYOUTS.items():
        build = getattr(amq, kind)
        for layout in layouts:
            name = f"{kind} {layout}"
            f = build(range(50), **sized(build, layout))
            before = bytes(f)
            r.equal(f"{name}: builders skip None, as {kind}_agg skips NULL",
                    (build([None, *range(50), None], **sized(build, layout)), build([None], **sized(build, layout))),
                    (f, build([], **sized(build, layout))))
            r.equal(f"{name}: contains(None) is None, as {kind}_contains(f, NULL)",
                    (f.contains(None), sql(f"{kind}_contains(?, NULL)", f)), (None, None))
            r.check(f"{name}: None in f is False (NULL is never a member)",
                    (None in f) is False and (None not in f) is True)
            r.equal(f"{name}: contains_many gives None at a None's place",
                    f.contains_many([1, None, 10**9, None]), [True, None, f.contains(10**9), None])
            # Each as its SQL function answers NULL, where the kind has one.
            frequency = SQL.get((kind, "FREQUENCY"))
            r.equal(f"{name}: count(None) is None, as {frequency}(f, NULL), on any layout",
                    (f.count(None), frequency and sql(f"{frequency}(?, NULL)", f)),
                    (None, frequency and None))
            add, delete = SQL.get((kind, "ADD")), SQL.get((kind, "DELETE"))
            r.equal(f"{name}: add(None) changes nothing, as {add}(f, NULL) returns f",
                    (f.add(None), bytes(f), add and sql(f"{add}(?, NULL)", f)),
                    (None, before, add and before))
            r.equal(f"{name}: delete(None) is False and changes nothing on any layout, "
                    f"as {delete}(f, NULL) returns f",
                    (f.delete(None), bytes(f), delete and sql(f"{delete}(?, NULL)", f)),
                    (False, before, delete and before))
            r.equal(f"{name}: add_unique(None) is False and changes nothing",
                    (f.add_unique(None), bytes(f)), (False, before))
            if (kind, "ADD_UNIQUE") in SQL:
                r.equal(f"{name}: ... as {SQL[kind, 'ADD_UNIQUE']}(f, NULL) returns f",
                        sql(f"{SQL[kind, 'ADD_UNIQUE']}(?, NULL)", f), before)
            f.add_many([None, None])
            r.equal(f"{name}: add_many([None, None]) changes nothing", bytes(f), before)
            view = memoryview(f)
            r.equal(f"{name}: add(None) and delete(None) need no unexported buffer",
                    (f.add(None), f.delete(None), f.add_unique(None)), (None, False, False))
            view.release()
    f = amq.bloom(range(0, 2000, 2))
    values = [None if i % 7 == 3 else i for i in range(3000)]
    r.equal("contains_many keeps each None's place across batches, from any iterable",
            (f.contains_many(values), f.contains_many(iter(values)),
             f.contains_many(tuple(values))), ([f.contains(v) for v in values],) * 3)
    r.equal("contains_many of Nones only", f.contains_many([None] * 600), [None] * 600)
    r.raises("union(None) is a TypeError: None is a value's NULL, not a filter's",
             TypeError, f.union, None)


def mutation(r):
    """add, delete, add_unique, count on every layout, in place, and sealed
    bytes that verify again; mutation is refused while the bytes are exported."""
    for layout in BLOOM_LAYOUTS:
        # A filter of every family (an empty one would take only its first add's).
        f = amq.bloom([0, "", b""], capacity=100, layout=layout)
        for v in [1, "one", b"1", 1.5]:
            f.add(v)
        r.check(f"bloom {layout}: added values are in", all(v in f for v in [1, "one", b"1", 1.5]))
        r.equal(f"bloom {layout}: the bytes verify again", amq.Filter(bytes(f)), f)
        if layout in ("counting", "dleft"):
            f.add(1)
            r.equal(f"{layout}: count(1) after two adds", f.count(1), 2)
            r.equal(f"{layout}: delete(1) twice, then absent", (f.delete(1), f.delete(1),
                                                               1 in f, f.delete(1)),
                    (True, True, False, False))
        else:
            r.raises(f"bloom {layout}: delete is amq.Error", amq.Error, f.delete, 1,
                     message=f"a {layout} bloom filter cannot delete values: build the filter "
                     "with amq.bloom(values, layout='counting') for that")
            r.raises(f"bloom {layout}: count is amq.Error", amq.Error, f.count, 1)
    s = amq.bloom([], capacity=10, layout="scalable")
    s.add_many(range(1000))
    r.check("scalable: grows past its capacity, every value in",
            len(s.info()["links"]) > 1 and all(s.contains_many(range(1000))))
    for layout in CUCKOO_LAYOUTS:
        f = amq.cuckoo([], capacity=100, fpr=0.001, layout=layout)
        r.equal(f"cuckoo {layout}: add_unique twice", (f.add_unique("k"), f.add_unique("k")),
                (True, False))
        f.add("k")
        r.equal(f"cuckoo {layout}: count", f.count("k"), 2)
        r.equal(f"cuckoo {layout}: delete until gone",
                (f.delete("k"), f.delete("k"), "k" in f, f.delete("k")), (True, True, False, False))
        r.equal(f"cuckoo {layout}: the bytes verify again", amq.Filter(bytes(f)), f)
    f = amq.bloom(range(10))
    view = memoryview(f)
    r.raises("add while a memoryview is alive is a BufferError", BufferError, f.add, 99)
    view.release()
    f.add(99)
    r.check("add after the view is released", 99 in f)


FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures",
                        "amq-0.3.0.tsv")


def family_error(r, name, fn, *args, message, hint):
    """A check that fn(*args) raises the family check's amq.Error: core's
    message, Python's hint, SQLSTATE 22023, str() "<message>: <hint>"."""
    e = r.raises(name, amq.Error, fn, *args, message=f"{message}: {hint}")
    r.equal(f"{name}: message, hint, SQLSTATE", e and (e.message, e.hint, e.sqlstate),
            (message, hint, "22023"))
    return e


def families(r):
    """Filters know the families of what they hold (numbers, text, blobs):
    a probe, add, delete or count of a value of another family raises
    amq.Error with core's message and Python's hint, single and bulk; the
    builders record every family they see, an empty filter takes its first
    add's, union joins them; None is still NULL."""
    ints = amq.bloom([1, 2, 42])
    r.equal("a filter of ints holds numbers", (ints.families, ints.info()["families"],
                                                ints.info()["format_version"]),
            (("numbers",), ["numbers"], 4))
    r.equal("... and says so in its bytes (header byte 44, version 4)",
            (bytes(ints)[4], bytes(ints)[44], amq.Filter(bytes(ints)).families),
            (4, 1, ("numbers",)))
    probe = "bloom_contains: value: the filter holds numbers, got text '42'"
    family_error(r, "'42' against a filter of ints", ints.contains, "42", message=probe,
                 hint="convert the value (int('42'))")
    family_error(r, "'42' in f", lambda: "42" in ints, message=probe,
                 hint="convert the value (int('42'))")
    family_error(r, "'4.5' against a filter of ints", ints.contains, "4.5",
                 message="bloom_contains: value: the filter holds numbers, got text '4.5'",
                 hint="convert the value (float('4.5'))")
    family_error(r, "'abc' against a filter of ints: no conversion keeps its meaning",
                 ints.contains, "abc",
                 message="bloom_contains: value: the filter holds numbers, got text 'abc'",
                 hint="use a number, the family the filter holds")
    r.equal("every number is taken: int, float, bool, Decimal, an int past int64",
            [ints.contains(v) for v in (42, 42.0, True, D("42"), 2**70, 1.5)],
            [True, True, True, True, False, False])
    r.equal("None is still NULL on a filter of ints",
            (ints.contains(None), None in ints, ints.contains_many([None, 1])),
            (None, False, [None, True]))

    text = amq.cuckoo(["a", "b"])
    family_error(r, "bytes against a filter of text", text.contains, b"a",
                 message="cuckoo_contains: value: the filter holds text, got blob X'61'",
                 hint="convert the value (value.decode())")
    family_error(r, "an int against a filter of text", text.count, 7,
                 message="cuckoo_count: value: the filter holds text, got number 7",
                 hint="convert the value (str(7))")
    before = bytes(text)
    family_error(r, "delete of an int from a filter of text", text.delete, 7,
                 message="cuckoo_delete: value: the filter holds text, got number 7",
                 hint="convert the value (str(7))")
    family_error(r, "add of bytes to a cuckoo filter of text", text.add, b"\x00\xff",
                 message="cuckoo_add: value: the filter holds text, got blob X'00FF'",
                 hint="convert the value (value.decode())")
    family_error(r, "add_unique of a float to a cuckoo filter of text", text.add_unique, 1.5,
                 message="cuckoo_add_unique: value: the filter holds text, got number 1.5",
                 hint="convert the value (str(1.5))")
    r.equal("... none of them changed a byte or a family", (bytes(text), text.families),
            (before, ("text",)))
    when = datetime.date(2024, 5, 1)
    r.equal("date, datetime, time and UUID are text", [
        amq.bloom([v]).families for v in (when, datetime.datetime(2024, 5, 1, 12), datetime.time(9),
                                          uuid.UUID(int=1))], [("text",)] * 4)
    r.check("... and a filter of text takes them", amq.bloom(["2024-05-01"]).contains(when))
    r.equal("bytes, bytearray and memoryview are blobs",
            [amq.bloom([v]).families for v in (b"a", bytearray(b"a"), memoryview(b"a"))],
            [("blobs",)] * 3)

    words = amq.bloom(["x"], capacity=100)
    before = bytes(words)
    family_error(r, "add of an int to a bloom filter of text", words.add, 1,
                 message="bloom_add: value: the filter holds text, got number 1",
                 hint="convert the value (str(1))")
    family_error(r, "add_unique on a bloom filter names bloom_add", words.add_unique, 1,
                 message="bloom_add: value: the filter holds text, got number 1",
                 hint="convert the value (str(1))")
    r.equal("... and changed no byte", bytes(words), before)
    counting = amq.bloom([1, 2], layout="counting")
    family_error(r, "bloom_frequency: count of text on a counting filter of numbers",
                 counting.count, "x",
                 message="bloom_frequency: value: the filter holds numbers, got text 'x'",
                 hint="use a number, the family the filter holds")
    family_error(r, "the family is checked before the layout (delete on a blocked filter)",
                 ints.delete, "x",
                 message="bloom_delete: value: the filter holds numbers, got text 'x'",
                 hint="use a number, the family the filter holds")

    mixed = amq.bloom([1, "a"])
    r.equal("amq.bloom([1, 'a']) holds numbers and text", (mixed.families,
                                                            mixed.info()["families"]),
            (("numbers", "text"), ["numbers", "text"]))
    r.equal("... and answers both", (1 in mixed, "a" in mixed, mixed.contains_many([1, "a", 2])),
            (True, True, [True, True, False]))
    family_error(r, "... but refuses bytes", mixed.contains, b"a",
                 message="bloom_contains: value: the filter holds numbers and text, got blob X'61'",
                 hint="use a number or text, the families the filter holds")
    r.equal("amq.cuckoo keeps every family it sees too",
            amq.cuckoo([b"x", None, 2.5, "t"]).families, ("numbers", "text", "blobs"))

    empty = amq.bloom([], capacity=100)
    r.equal("an empty filter holds no family yet", (empty.families, empty.info()["families"]),
            ((), []))
    r.equal("... answers every family, with no error",
            (empty.contains(1), empty.contains("a"), empty.contains_many([b"b", 2.5])),
            (False, False, [False, False]))
    empty.add("x")
    r.equal("... takes its first add's family", (empty.families,
                                                 amq.Filter(bytes(empty)).families), (("text",),) * 2)
    family_error(r, "... and then refuses another", empty.add, 1,
                 message="bloom_add: value: the filter holds text, got number 1",
                 hint="convert the value (str(1))")
    c = amq.cuckoo([], capacity=100)
    before = bytes(c)
    family_error(r, "add_many([1, 'a']) on an empty filter stops at 'a', as cuckoo_add_agg",
                 c.add_many, [1, "a"],
                 message="cuckoo_add_agg: value: the filter holds numbers, got text 'a'",
                 hint="use a number, the family the filter holds")
    r.equal("... and changed nothing", (bytes(c), c.families), (before, ()))
    c.add_many([1, None, 2])
    r.equal("add_many records its family", (c.families, amq.Filter(bytes(c)).families),
            (("numbers",),) * 2)
    b = amq.bloom([], capacity=100)
    b.add_many(iter([b"x", b"y"]))
    r.equal("a bloom filter's add_many too", b.families, ("blobs",))
    before = bytes(b)
    family_error(r, "bloom add_many of another family", b.add_many, [b"z", "z"],
                 message="bloom_add_agg: value: the filter holds blobs, got text 'z'",
                 hint="convert the value ('z'.encode())")
    r.equal("... changed nothing", bytes(b), before)

    family_error(r, "contains_many with a wrong-family element", ints.contains_many,
                 [1, None, 2, "3"],
                 message="bloom_contains: value: the filter holds numbers, got text '3'",
                 hint="convert the value (int('3'))")
    family_error(r, "contains_many of a range against a filter of text",
                 amq.bloom(["a"]).contains_many, range(5, 10),
                 message="bloom_contains: value: the filter holds text, got number 5",
                 hint="convert the value (str(5))")
    family_error(r, "contains_many on a cuckoo filter, past the first batch",
                 amq.cuckoo(range(10)).contains_many, list(range(1000)) + [b"\x01"],
                 message="cuckoo_contains: value: the filter holds numbers, got blob X'01'",
                 hint="use a number, the family the filter holds")
    r.equal("contains_many of an empty range on a filter of text", amq.bloom(["a"]).contains_many(
        range(0)), [])

    one, two = amq.bloom([1], capacity=100), amq.bloom(["a"], capacity=100)
    r.equal("the union of numbers and text holds both", ((one | two).families,
                                                        one.union(two).families),
            (("numbers", "text"),) * 2)
    joined = one.copy()
    joined |= two
    r.check("... in place too, and answers both", joined.families == ("numbers", "text") and
            1 in joined and "a" in joined, joined.families)
    r.equal("an intersection keeps the families both hold",
            (amq.bloom([1, "a"], capacity=100) & one).families, ("numbers",))

    # The message is SQL's for the same filter and value; only the hint is Python's.
    lite = sqlite3.connect(":memory:")
    amq.load(lite)
    for name, f, sql, value in [("bloom_contains", ints, "bloom_contains(?, ?)", "42"),
                                ("cuckoo_count", text, "cuckoo_count(?, ?)", 7),
                                ("bloom_add", words, "bloom_add(?, ?)", b"\x00")]:
        try:
            lite.execute(f"SELECT {sql}", (bytes(f), value)).fetchone()
            sql_text = None
        except sqlite3.Error as e:
            sql_text = str(e)
        try:
            getattr(f, {"bloom_contains": "contains", "cuckoo_count": "count",
                        "bloom_add": "add"}[name])(value)
            ours = None
        except amq.Error as e:
            ours = e
        r.check(f"{name}: SQLite's error starts with Python's message, then SQL's cast",
                ours is not None and sql_text is not None and
                sql_text.startswith(ours.message + ": ") and ours.hint not in sql_text,
                (sql_text, ours and str(ours)))


def old_filters(r):
    """Filters amq 0.3.0 wrote (tests/fixtures/amq-0.3.0.tsv, format 1 to 3,
    over the ints 1..200 and the text 'k1'..'k50'): their families are None
    (unknown), nothing is checked, changes keep their version, and a union
    with a new filter is unknown too."""
    with open(FIXTURES, encoding="ascii") as f:
        rows = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    r.equal("the fixtures hold every kind and layout", len(rows), 8)
    ints, keys = list(range(1, 201)), [f"k{i}" for i in range(1, 51)]
    for name, kind, data in rows:
        old = bytes.fromhex(data)
        f = amq.Filter(old)
        version = old[4]
        r.equal(f"{name}: families None, info's null, its own format version",
                (f.kind, f.families, f.info()["families"], f.info()["format_version"]),
                (kind, None, None, version))
        r.check(f"{name}: version 1 to 3, byte 44 zero", version in (1, 2, 3) and old[44] == 0,
                (version, old[44]))
        r.check(f"{name}: answers every value it holds, ints and text",
                all(f.contains_many(ints)) and all(f.contains_many(keys)) and
                all(v in f for v in ints[:20] + keys[:20]))
        try:
            answers = [f.contains(v) for v in ("5", b"k1", 2.5, datetime.date(2024, 1, 1))]
            answers += f.contains_many([b"x", "y", 3])
            ok = all(isinstance(a, bool) for a in answers)
        except amq.Error as e:
            ok = e
        r.check(f"{name}: any family is answered, never refused", ok is True, ok)
        g = f.copy()
        g.add(b"blob")
        g.add_many(["t", 9])
        r.equal(f"{name}: adds keep it unknown, in its own version",
                (g.families, bytes(g)[4], bytes(g)[44], amq.Filter(bytes(g)).families),
                (None, version, 0, None))
        if kind == "bloom" and name != "bloom scalable":
            layout = name.split()[1]
            new = amq.bloom(ints + keys, layout=layout)
            r.equal(f"{name}: the same values built now differ in version, families and "
                    "checksum only", [i for i in range(len(old)) if bytes(new)[i] != old[i]
                                      and not 56 <= i < 64], [4, 44])
            r.equal(f"{name}: a union with a new filter is unknown, in the old version",
                    ((f | new).families, (new | f).families, bytes(new | f)[4]),
                    (None, None, version))
    v1 = amq.Filter(bytes.fromhex(rows[0][2]))
    r.equal("an old filter's families is None", v1.families, None)


def cuckoo_full(r):
    """A cuckoo add that does not fit raises amq.Error and changes no byte;
    add_many is all or nothing."""
    f = amq.cuckoo([], capacity=8, fpr=0.01, layout="b4")
    error = None
    for i in range(1000):
        before = bytes(f)
        try:
            f.add(i)
        except amq.Error as e:
            error = e
            break
    r.check("a small cuckoo filter fills up with amq.Error", error is not None)
    r.equal("the failed add changed no byte", bytes(f), before)
    r.check("the error says the filter is full, SQLSTATE 54000",
            str(error).startswith("cuckoo filter is full") and error.sqlstate == "54000",
            (str(error), error.sqlstate))
    r.equal("... with Python's advice, not cuckoo_agg's", error.hint,
            "build it with amq.cuckoo over every value and no capacity (sized for them), or "
            "with a larger capacity")
    g = amq.cuckoo([], capacity=8, fpr=0.01, layout="b4")
    before = bytes(g)
    e = r.raises("add_many past the capacity is amq.Error", amq.Error, g.add_many, range(1000))
    r.check("... named as cuckoo_add_agg names it", e is not None and
            str(e).startswith("cuckoo_add_agg: cuckoo filter is full"), e)
    r.check("... with Python's advice, not the statement's", e is not None and
            e.hint.startswith("add_many changed nothing") and "amq.cuckoo" in e.hint, e)
    r.equal("... and changed nothing", bytes(g), before)
    r.raises("add_many with an unhashable value is a TypeError", TypeError, g.add_many,
             [1, 2, [3]])
    r.equal("... and changed nothing", bytes(g), before)
    g.add_many([1, None, 2])
    r.check("add_many skips None", 1 in g and 2 in g and g.info()["items"] == 2)


PY_COPIES_HINT = ("use Filter.add_unique(value) to add a value once, or a counting bloom filter "
                  "(amq.bloom(values, layout='counting')) to count it")


def cuckoo_copies(r):
    """A value added once more than a cuckoo filter can hold it (2b copies: 4,
    8 and 16), however empty the filter, raises amq.Error in its own words with
    a hint that names Python's ways, and changes no byte; add_many says it as
    cuckoo_add_agg does; distinct values still fill a filter, with the full
    filter's message."""
    for layout, b in (("b2", 2), ("b4", 4), ("b8", 8), ("semisorted", 4)):
        f = amq.cuckoo([], capacity=100000, fpr=0.01, layout=layout)
        for _ in range(2 * b):
            f.add("k")
        r.equal(f"cuckoo {layout}: {2 * b} copies", f.count("k"), 2 * b)
        before = bytes(f)
        message = (f"cuckoo filter already holds this value {2 * b} times, the most a {layout} "
                   "filter can")
        e = r.raises(f"cuckoo {layout}: copy {2 * b + 1} is amq.Error", amq.Error, f.add, "k",
                     message=f"{message}: {PY_COPIES_HINT}")
        r.equal(f"cuckoo {layout}: ... message, hint, SQLSTATE",
                e and (e.message, e.hint, e.sqlstate), (message, PY_COPIES_HINT, "54000"))
        r.equal(f"cuckoo {layout}: ... and changed no byte", bytes(f), before)
        g = amq.cuckoo([], capacity=100000, fpr=0.01, layout=layout)
        before = bytes(g)
        r.raises(f"cuckoo {layout}: add_many of {2 * b + 1} copies", amq.Error, g.add_many,
                 ["k"] * (2 * b + 1),
                 message=f"cuckoo_add_agg: {message}, after adding {2 * b} values: add_many "
                 f"changed nothing; {PY_COPIES_HINT}")
        r.equal(f"cuckoo {layout}: ... and changed nothing", bytes(g), before)
        full = amq.cuckoo([], capacity=100, fpr=0.01, layout=layout)
        e = None
        for i in range(100000):
            try:
                full.add(i)
            except amq.Error as error:
                e = error
                break
        i = full.info()
        want = (f"cuckoo filter is full ({i['items']} items, load "
                f"{100 * i['items'] / i['total_slots']:.1f}%): build it with amq.cuckoo over every "
                "value and no capacity (sized for them), or with a larger capacity")
        r.equal(f"cuckoo {layout}: distinct values fill it, with the full filter's hint", e and str(e),
                want)


def cuckoo_lowest_fpr(r):
    """Each layout's lowest fpr is 2b/2^32; below it the hint quotes it rounded up
    to 4 digits (SQL's words): that value is accepted, one less in its last digit
    is refused."""
    for layout, b, quoted, below in (("b2", 2, "9.314e-10", "9.313e-10"),
                                     ("b4", 4, "1.863e-09", "1.862e-09"),
                                     ("b8", 8, "3.726e-09", "3.725e-09"),
                                     ("semisorted", 4, "1.863e-09", "1.862e-09")):
        e = r.raises(f"cuckoo {layout} at 1e-12", amq.Error, amq.cuckoo, [], fpr=1e-12,
                     capacity=100, layout=layout)
        r.equal(f"cuckoo {layout}: the hint", e and e.hint,
                f"use an fpr of at least {quoted} with layout '{layout}', or a bloom filter")
        for p in (2 * b / 2 ** 32, float(quoted)):
            r.equal(f"cuckoo {layout} at {p!r}: 32-bit fingerprints",
                    amq.cuckoo([], fpr=p, capacity=100, layout=layout).info()["fingerprint_bits"], 32)
        r.raises(f"cuckoo {layout} at {below}", amq.Error, amq.cuckoo, [], fpr=float(below),
                 capacity=100, layout=layout)


def combining(r):
    """union, intersection, their operators, and the incompatible case."""
    a = amq.bloom(range(0, 600), capacity=1000)
    b = amq.bloom(range(400, 1000), capacity=1000)
    u, i = a.union(b), a.intersection(b)
    r.check("union holds both", all(u.contains_many(range(1000))))
    r.check("intersection holds the common values", all(i.contains_many(range(400, 600))))
    r.equal("| and & are union and intersection", (a | b, a & b), (u, i))
    c = a.copy()
    c |= b
    r.equal("|= in place", c, u)
    c &= a
    r.check("&= in place keeps a's values", all(c.contains_many(range(600))))
    other = amq.bloom(range(10), capacity=2000)
    e = r.raises("union of different sizes is amq.Error", amq.Error, a.union, other)
    r.check("... with bloom_union's words", e is not None and
            str(e).startswith("cannot combine bloom filters with different parameters"), e)
    r.raises("union with bytes is a TypeError", TypeError, a.union, bytes(b))
    lite = sqlite3.connect(":memory:")
    amq.load(lite)
    c = amq.cuckoo(range(10))
    for name, fn, sql, args in [
            ("bloom.union(cuckoo)", lambda: a.union(c), "bloom_union(?, ?)", (a, c)),
            ("bloom & cuckoo", lambda: a & c, "bloom_intersect(?, ?)", (a, c)),
            ("bloom |= cuckoo", lambda: a.copy().__ior__(c), "bloom_union(?, ?)", (a, c)),
            ("cuckoo.union(bloom)", lambda: c.union(a), "cuckoo_info(?)", (a,)),
            ("cuckoo &= bloom", lambda: c.copy().__iand__(a), "cuckoo_count(?, 1)", (a,))]:
        e = r.raises(f"{name} is amq.Error", amq.Error, fn)
        try:
            lite.execute(f"SELECT {sql}", [bytes(f) for f in args])
            sql_text = None
        except sqlite3.Error as sql_error:
            sql_text = str(sql_error)
        if e is None or sql_text is None:
            r.check(f"{name}: SQLite refuses the same kinds", False, sql_text)
            continue
        kind, other = (c.kind, a.kind) if name.startswith("cuckoo") else (a.kind, c.kind)
        r.equal(f"{name}: SQL's message", e.message,
                f"expected a {kind} filter, got a {other} filter")
        sql_hint = f"use the {other}_* functions for {other} filters"
        r.check(f"{name}: ... in SQLite's words", sql_text.endswith(f"{e.message}: {sql_hint}"),
                sql_text)
        r.check(f"{name}: Python's hint names amq.bloom, no SQL function",
                "amq.bloom" in e.hint and "_*" not in e.hint and str(e) == f"{e.message}: {e.hint}",
                str(e))
    r.raises("a | 1 is a TypeError", TypeError, lambda: a | 1)


def builders(r):
    """amq.bloom and amq.cuckoo: order-independent bytes, None skipped, every
    iterable alike, SQL's argument checks."""
    values = list(range(-3000, 3000, 3)) + ["a", "b", 2.5, b"\x00"]
    shuffled = values[:]
    random.Random(1).shuffle(shuffled)
    for build, layouts in BUILDERS:
        for layout in layouts:
            f = build(values, 0.01, **sized(build, layout))
            r.equal(f"{build.__name__} {layout}: same bytes in any order, from a generator, "
                    "with Nones", (build(shuffled, **sized(build, layout)),
                                   build((v for v in values + [None]), **sized(build, layout))),
                    (f, f))
            r.check(f"{build.__name__} {layout}: holds every value", all(f.contains_many(values)))
    r.equal("a range hashes as the list of its ints",
            amq.bloom(range(-5, 10**5, 7)), amq.bloom(list(range(-5, 10**5, 7))))
    edge = range(2**63 - 50, 2**63 - 1, 3)
    r.equal("a range at the top of int64", amq.bloom(edge), amq.bloom(list(edge)))
    huge = range(2**63 - 5, 2**63 + 5)
    r.equal("a range past int64 (numerics)", amq.bloom(huge), amq.bloom(list(huge)))
    r.equal("a descending range", amq.bloom(range(100, -100, -3)),
            amq.bloom(list(range(100, -100, -3))))
    empty = amq.bloom([], fpr=0.001, capacity=5000, layout="classic")
    r.check("no values: the arguments still apply", empty.layout == "classic" and
            empty.info()["bits"] == amq.bloom([0], fpr=0.001, capacity=5000,
                                              layout="classic").info()["bits"])
    r.raises("fpr 0 is amq.Error", amq.Error, amq.bloom, [1], 0,
             message="fpr must be between 0 and 1 (exclusive), got 0: pass a false-positive "
             "rate such as 0.01 for 1%")
    r.raises("capacity 0 is amq.Error", amq.Error, amq.bloom, [1], capacity=0,
             message="capacity must be at least 1, got 0: pass the number of distinct values "
             "the filter must hold")
    r.raises("an unknown layout is amq.Error", amq.Error, amq.cuckoo, [1], layout="blocked")
    r.raises("a float capacity is a TypeError", TypeError, amq.bloom, [1], capacity=1.5)
    r.raises("a str fpr is a TypeError", TypeError, amq.bloom, [1], "0.1")
    r.raises("an unhashable value is a TypeError", TypeError, amq.bloom, [1, object()])
    r.raises("a non-iterable is a TypeError", TypeError, amq.bloom, 5)
    e = r.raises("a capacity too large is amq.Error (54000)", amq.Error, amq.bloom, [1],
                 capacity=10**15)
    r.check("... with SQLSTATE 54000", e is not None and e.sqlstate == "54000", e)


def interrupts(r):
    """Ctrl-C (KeyboardInterrupt, here from a SIGALRM handler) ends a long
    amq.bloom: while it hashes the values (a loop that runs no Python code)
    and while it sorts and inserts them without the GIL (core polls the
    handlers); amq works afterwards. How soon is not asserted."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt
    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        for name, values in (("a range of 200M ints", range(200_000_000)),
                             ("a list of 3M ints", list(range(3_000_000)))):
            signal.setitimer(signal.ITIMER_REAL, 0.05)
            try:
                amq.bloom(values)
                got = "no exception"
            except KeyboardInterrupt:
                got = "KeyboardInterrupt"
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            r.equal(f"Ctrl-C during amq.bloom of {name}", got, "KeyboardInterrupt")
    finally:
        signal.signal(signal.SIGALRM, previous)
    r.check("amq works after an interrupt", 7 in amq.bloom([7]))


WORK_MEM_HINT = "pass the working memory in bytes, such as 67108864 for 64 MiB"


def work_mem_arguments(r):
    """work_mem is a keyword-only int of bytes, 65536 (64 KiB, PostgreSQL's
    least work_mem) to 2**40, or None (64 MiB): anything else is amq.Error
    (22023) in the words of the other sizing arguments, or a TypeError."""
    for build in (amq.bloom, amq.cuckoo):
        name = build.__name__
        for bad in (5, 65535, 0, -1, 2**40 + 1, 10**30):
            message = (f"work_mem must be between 65536 (64 KiB) and 1099511627776 (1 TiB) bytes, "
                       f"got {bad}")
            e = r.raises(f"{name}(work_mem={bad}) is amq.Error", amq.Error, build, [1],
                         work_mem=bad, message=f"{message}: {WORK_MEM_HINT}")
            r.equal(f"{name}(work_mem={bad}): message, hint, SQLSTATE",
                    e and (e.message, e.hint, e.sqlstate), (message, WORK_MEM_HINT, "22023"))
        for bad, type_name in ((65536.0, "float"), ("64MB", "str"), (True, "bool")):
            r.raises(f"{name}(work_mem={bad!r}) is a TypeError", TypeError, build, [1],
                     work_mem=bad, message=f"work_mem must be an int or None, got {type_name}")
        r.raises(f"{name}: work_mem is keyword-only", TypeError, build, [1], 0.01, None, None,
                 65536)
        want = build(range(1000))
        r.equal(f"{name}: work_mem 65536, 2**40 and None give the same filter",
                (build(range(1000), work_mem=65536), build(range(1000), work_mem=2**40),
                 build(range(1000), work_mem=None)), (want,) * 3)
    r.check("the docstrings say work_mem", all(
        "work_mem=None" in b.__doc__ and "64 MiB" in b.__doc__ for b in (amq.bloom, amq.cuckoo)))


# Over 64 KiB of distinct hashes (8 bytes each) in each list: work_mem 65536 spills.
SPILL_VALUES = {
    "300,000 distinct ints": list(range(300_000)),
    "600,000 values, 100,000 distinct": [i % 100_000 for i in range(600_000)],
    "300,000 ints and str mixed": [i if i % 2 else f"k{i}" for i in range(300_000)],
}


def spilling(r):
    """Issue #32: past work_mem the collected hashes spill as sorted runs to
    temporary files, and every layout's bytes are the default build's (which
    keeps them in memory), over distinct, duplicate-heavy and mixed values.
    That the small builds do spill is seen in a temporary directory that
    cannot be used: work_mem 65536 fails there, the default does not."""
    for build, layouts in BUILDERS:
        for layout in layouts:
            for what, values in SPILL_VALUES.items():
                want = build(values, **sized(build, layout))
                if "capacity" not in AGG_ARGUMENTS[build.__name__]:
                    # A kind built from every hash at once (fuse) needs them in
                    # memory: past work_mem it is refused, naming bloom.
                    e = r.raises(f"{build.__name__}, {what}: refused at work_mem 65536",
                                 amq.Error, build, values, work_mem=65536)
                    r.check(f"{build.__name__}, {what}: ... SQLSTATE 54000, naming bloom_agg",
                            e is not None and e.sqlstate == "54000" and "bloom_agg" in e.hint,
                            e and (e.sqlstate, e.hint))
                    continue
                got = build(values, **sized(build, layout, work_mem=65536))
                r.check(f"{build.__name__} {layout}, {what}: work_mem 65536 gives the default's "
                        "bytes", bytes(got) == bytes(want), (got, want))
    values = SPILL_VALUES["300,000 distinct ints"]
    r.equal("a range and a generator spill alike", (
        amq.bloom(range(300_000), work_mem=65536), amq.cuckoo(iter(values), work_mem=65536)),
            (amq.bloom(values), amq.cuckoo(values)))
    folder = tempfile.mkdtemp()
    not_a_dir = os.path.join(folder, "file")
    with open(not_a_dir, "wb"):
        pass
    bad = os.path.join(not_a_dir, "tmp")
    saved = tempfile.tempdir
    tempfile.tempdir = bad
    try:
        message = f"could not create a temporary file in {bad}: Not a directory"
        hint = ("set TMPDIR (or tempfile.tempdir) to a writable directory, or pass a work_mem "
                "large enough that nothing spills")
        for build, layouts in BUILDERS:
            if "capacity" not in AGG_ARGUMENTS[build.__name__]:
                continue  # refused before it would spill (above)
            for layout in layouts:
                e = r.raises(f"{build.__name__} {layout}: work_mem 65536 spills (tempfile.tempdir "
                             "not a directory: amq.Error)", amq.Error, build, values,
                             layout=layout, work_mem=65536, message=f"{message}: {hint}")
                r.equal(f"{build.__name__} {layout}: ... message, hint, SQLSTATE 58030",
                        e and (e.message, e.hint, e.sqlstate), (message, hint, "58030"))
        r.equal("... the default work_mem (64 MiB) does not spill them",
                amq.bloom(values), amq.bloom(values, work_mem=2**30))
    finally:
        tempfile.tempdir = saved
    r.check("... and amq builds again afterwards", 7 in amq.bloom(values, work_mem=65536))


# Runs in a subprocess with TMPDIR set to a fresh folder; prints JSON: the
# open descriptors after each case less those before, and what it raised.
SPILL_CHILD = r"""
import json, os, signal, sys, amq

def fds():
    return len(os.listdir("/proc/self/fd"))

def interrupt(signum, frame):
    raise KeyboardInterrupt

amq.bloom([1], work_mem=65536)  # imports tempfile
before = fds()
out = {}
def case(name, fn, alarm=0.0):
    signal.setitimer(signal.ITIMER_REAL, alarm)
    try:
        fn()
        got = "ok"
    except BaseException as e:
        got = type(e).__name__
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    out[name] = [got, fds() - before, os.listdir(os.environ["TMPDIR"])]

signal.signal(signal.SIGALRM, interrupt)
values = list(range(300_000))
case("success", lambda: amq.bloom(values, work_mem=65536))
case("cuckoo capacity too small", lambda: amq.cuckoo(values, capacity=1000, work_mem=65536))
case("an unhashable value after 300,000", lambda: amq.bloom(values + [object()], work_mem=65536))
case("Ctrl-C while hashing a range", lambda: amq.bloom(range(200_000_000), work_mem=65536), 0.05)
case("Ctrl-C during a build of 3M ints", lambda: amq.cuckoo(list(range(3_000_000)), work_mem=65536),
     0.05)

# A progress callable raising ValueError at phase, when done (None: total).
def stop_at(phase, done=None):
    def progress(p, d, total):
        if p == phase and d == (total if done is None else done):
            raise ValueError(phase)
    return progress

for phase, done in (("merging runs", 0), ("counting", 0), ("inserting", None)):
    case(f"progress raising at {phase}", lambda: amq.bloom(
        values, work_mem=65536, progress=stop_at(phase, done)))
    case(f"cuckoo: progress raising at {phase}", lambda: amq.cuckoo(
        values, work_mem=65536, progress=stop_at(phase, done)))
if sys.argv[1:] == ["fsize"]:
    import resource
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, resource.RLIM_INFINITY))
    try:
        amq.bloom(values, work_mem=65536)
        out["error"] = None
    except amq.Error as e:
        out["error"] = [e.message, e.hint, e.sqlstate]
    out["after"] = [fds() - before, os.listdir(os.environ["TMPDIR"])]
print(json.dumps(out))
"""


def spill_cleanup(r):
    """A spilling build leaves no file and no open descriptor behind, after
    success, an error (a cuckoo capacity too small, a value that cannot be
    hashed), Ctrl-C while it hashes or merges, and a progress callable that
    raises ValueError while runs merge during the hashing, as the finish
    starts counting and as it ends inserting: in a subprocess whose
    TMPDIR is a fresh folder, /proc/self/fd counts the same afterwards and the
    folder is empty (each file is unlinked as it is made). A write past the
    file size limit (RLIMIT_FSIZE, EFBIG) is amq.Error 58030 naming the
    folder."""
    for mode in ("", "fsize"):
        folder = tempfile.mkdtemp()
        out = subprocess.run([sys.executable, "-c", SPILL_CHILD, *([mode] if mode else [])],
                             env=dict(os.environ, TMPDIR=folder), capture_output=True, text=True,
                             check=False)
        try:
            got = json.loads(out.stdout)
        except ValueError:
            r.check(f"the spilling child{' ' + mode if mode else ''} ran", False,
                    out.stdout + out.stderr)
            continue
        shutil.rmtree(folder, ignore_errors=True)
        if mode == "":
            for name, want in (("success", "ok"),
                               ("cuckoo capacity too small", "Error"),
                               ("an unhashable value after 300,000", "TypeError"),
                               ("Ctrl-C while hashing a range", "KeyboardInterrupt"),
                               ("Ctrl-C during a build of 3M ints", "KeyboardInterrupt"),
                               *((f"{kind}progress raising at {phase}", "ValueError")
                                 for kind in ("", "cuckoo: ")
                                 for phase in ("merging runs", "counting", "inserting"))):
                r.equal(f"spilling, {name}: {want}, no descriptor open, no file in TMPDIR",
                        got.get(name), [want, 0, []])
            continue
        message = f"could not write a temporary file in {folder}: File too large"
        hint = f"free space in {folder}, or pass a larger work_mem so less spills"
        r.equal("a write past RLIMIT_FSIZE: amq.Error 58030 naming TMPDIR",
                got.get("error"), [message, hint, "58030"])
        r.equal("... no descriptor open, no file in TMPDIR", got.get("after"), [0, []])


def progress_phases(calls):
    """The phases of a build's progress calls, each as [name, [done, ...],
    total], one per start (done 0); or a string saying what is wrong: a call
    that starts nothing, a total that changes within a phase."""
    phases = []
    for phase, done, total in calls:
        if done == 0:
            phases.append([phase, [done], total])
        elif not phases or phases[-1][0] != phase or phases[-1][2] != total:
            return f"({phase!r}, {done}, {total}) continues no phase started"
        else:
            phases[-1][1].append(done)
    return phases


def progress(r):
    """Issue #32: amq.bloom(..., progress=f) and amq.cuckoo call f(phase,
    done, total) while a build that spilled merges its runs: "merging runs"
    (any number of times) while the values are hashed, then "counting" and
    "inserting" at the finish; done rises within a phase, from 0 to total,
    every 2**18 keys. A build in memory (or streaming, with a capacity)
    never calls it. A callable that raises stops the build with its
    exception, wherever it raises, leaving no descriptor open; a TypeError
    for anything but a callable or None."""
    values = SPILL_VALUES["300,000 distinct ints"]
    for build in (amq.bloom, amq.cuckoo):
        name = build.__name__
        calls = []
        f = build(values, work_mem=65536, progress=lambda *a: calls.append(a))
        r.equal(f"{name}: a spilled build with progress gives the same bytes", f, build(values))
        r.check(f"{name}: progress gets (str, int, int)", calls and all(
            type(p) is str and type(d) is int and type(t) is int for p, d, t in calls), calls[:3])
        phases = progress_phases(calls)
        if not r.check(f"{name}: every call continues the phase it started", isinstance(
                phases, list), phases):
            continue
        names = [p[0] for p in phases]
        merging = names.count("merging runs")
        r.equal(f"{name}: phases 'merging runs' ({merging} times), then 'counting', then "
                "'inserting'", names, ["merging runs"] * merging + ["counting", "inserting"])
        r.check(f"{name}: runs merged while hashing (8 runs of 4096 keys pile up)", merging > 0,
                merging)
        bad = [p for p in phases if p[1] != sorted(p[1]) or p[1][-1] != p[2]]
        r.equal(f"{name}: done rises within each phase and ends at total", bad, [])
        r.equal(f"{name}: counting and inserting read the 300,000 keys, from 0, in more than "
                "one call", [(p[0], p[1][0], p[1][-1], p[2], len(p[1]) > 2) for p in phases[-2:]],
                [(phase, 0, 300000, 300000, True) for phase in ("counting", "inserting")])
        gaps = [d for p in phases for a, d in zip(p[1], p[1][1:])
                if d != p[2] and d // 262144 == a // 262144]
        r.equal(f"{name}: a call every 2**18 keys between start and end", gaps, [])
        calls.clear()
        for what, kwargs in (("in memory (default work_mem)", {}),
                             ("in memory (work_mem 2**30)", {"work_mem": 2**30}),
                             ("of 3,000 values at work_mem 65536", {"work_mem": 65536})):
            build(values if "3,000" not in what else values[:3000],
                  progress=lambda *a: calls.append(a), **kwargs)
            r.equal(f"{name}: a build {what} never calls progress", calls, [])
        if build is amq.bloom:
            build(values, capacity=300_000, work_mem=65536, progress=lambda *a: calls.append(a))
            r.equal("bloom: a build with a capacity (streaming) never calls progress", calls, [])
        r.raises(f"{name}: progress=5 is a TypeError", TypeError, build, [1], progress=5,
                 message="progress must be callable or None, got int")
        r.raises(f"{name}: progress is keyword-only", TypeError, build, [1], 0.01, None, None,
                 None, print)
        r.check(f"{name}: progress=None builds", 1 in build([1], progress=None))

    def fds():
        return len(os.listdir("/proc/self/fd"))

    for build in (amq.bloom, amq.cuckoo):
        name = build.__name__
        total = []
        build(values, work_mem=65536, progress=lambda *a: total.append(a))
        wrong = []
        for n, call in enumerate(total):
            seen = []

            def stop(*a, n=n, seen=seen):
                seen.append(a)
                if len(seen) > n:
                    raise ValueError(f"stop at call {n}")
            before = fds()
            try:
                build(iter(values), work_mem=65536, progress=stop)
                wrong.append((n, call, "no exception"))
            except ValueError as e:
                if type(e) is not ValueError or str(e) != f"stop at call {n}":
                    wrong.append((n, call, repr(e)))
            if fds() != before:
                wrong.append((n, call, f"{fds() - before} descriptors left open"))
            if len(seen) != n + 1:
                wrong.append((n, call, f"called {len(seen) - n - 1} times after raising"))
        r.equal(f"{name}: a progress raising ValueError at each of its {len(total)} calls stops "
                "the build with that ValueError (not amq.Error, not KeyboardInterrupt), "
                "never calling it again, no descriptor left open", wrong, [])
    r.check("amq works after a progress callable raised", 7 in amq.bloom(values, work_mem=65536)
            and amq.cuckoo(values, work_mem=65536) == amq.cuckoo(values))
    r.check("the docstrings say progress", all(
        "progress=None" in b.__doc__ and "spilled" in b.__doc__ for b in (amq.bloom, amq.cuckoo)))


def loading(r):
    """amq.load puts the shipped extension into a connection, and says so
    clearly where sqlite3 cannot load extensions."""
    r.check("loadable_path() exists and ends in amq.so",
            os.path.exists(amq.loadable_path()) and amq.loadable_path().endswith("/amq.so"))
    con = sqlite3.connect(":memory:")
    amq.load(con)
    f = amq.bloom([1, 2, 3])
    r.equal("bloom_contains over a bound Filter", con.execute(
        "SELECT bloom_contains(?1, 2), bloom_contains(?1, 4), amq_version()", (f,)).fetchone(),
        (1, 0, amq.__version__))
    r.raises("extension loading is disabled again afterwards", sqlite3.OperationalError,
             con.execute, "SELECT load_extension('x')")
    r.raises("amq.load of a non-connection is a TypeError", TypeError, amq.load, "db")

    class NoExtensions(sqlite3.Connection):
        """A connection of a sqlite3 built without extension loading."""

        @property
        def enable_load_extension(self):
            raise AttributeError("enable_load_extension")

    e = r.raises("no extension loading: amq.Error, not AttributeError", amq.Error, amq.load,
                 NoExtensions(":memory:"))
    r.check("... saying why and what to use", e is not None and "cannot load extensions" in
            e.message and "/usr/bin/python3" in e.hint, e)


def namespace(r):
    """dir(amq) in a fresh interpreter is the public API: no module object,
    and no name outside __all__ but dunders and underscored ones."""
    out = subprocess.run([sys.executable, "-c", """
import json, types, amq
print(json.dumps({"all": amq.__all__, "names": dir(amq),
                  "modules": [n for n in dir(amq) if isinstance(getattr(amq, n), types.ModuleType)],
                  "missing": [n for n in amq.__all__ if not hasattr(amq, n)]}))
"""], capture_output=True, text=True, check=False)
    got = json.loads(out.stdout) if out.returncode == 0 else {}
    r.check("dir(amq) holds no module object", got.get("modules") == [], out.stderr or got)
    stray = [n for n in got.get("names", ["?"]) if n not in got.get("all", []) and
             not n.startswith("_")]
    r.equal("dir(amq): nothing outside __all__ but dunders and underscored names", stray, [])
    r.equal("every name of __all__ is there", got.get("missing"), [])
    r.check("... and each function and class has a docstring",
            all((getattr(amq, n).__doc__ or "").strip() for n in amq.__all__
                if callable(getattr(amq, n))))
    r.check("... and the module's docstring names each constant",
            all(n in (amq.__doc__ or "") for n in amq.__all__ if not callable(getattr(amq, n))
                and n != "__version__"))


def kinds(r):
    """amq.KINDS is the function table's filter types (its AMQ_SQL_TYPE rows,
    core/sql/function_list.h), in its order, and the package's lists follow
    it: each kind has its builder, amq.<kind>, whose filter says that kind
    and is `amq build --kind <kind>`'s bytes, and the psycopg adapter
    registers each."""
    table = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "core", "sql",
                         "function_list.h")
    with open(table, encoding="utf-8") as f:
        rows = tuple(re.findall(r"^AMQ_SQL_TYPE\((\w+)\)", f.read(), re.M))
    r.equal("amq.KINDS is the function table's AMQ_SQL_TYPE rows", amq.KINDS, rows)
    keys = ["k%d" % i for i in range(500)]
    lines = "".join(k + "\n" for k in keys).encode()
    for kind in amq.KINDS:
        built = getattr(amq, kind)(keys)
        status, out, err = run_cli("build", "--kind", kind, stdin=lines)
        r.check(f"amq.{kind} builds a {kind} filter, and amq build --kind {kind} the same bytes",
                built.kind == kind and status == 0 and amq.Filter(out) == built, err or built.kind)
    from amq import psycopg as adapter
    r.equal("the psycopg adapter registers amq.KINDS", adapter.KINDS, amq.KINDS)
    r.equal("amq.LAYOUTS: each kind's layouts, in the registry's order", dict(amq.LAYOUTS),
            {"bloom": ("classic", "blocked", "counting", "scalable", "dleft"),
             "cuckoo": ("b4", "b2", "b8", "semisorted"), "fuse": ("binary",)})
    r.raises("amq.LAYOUTS is read-only", TypeError, operator.setitem, amq.LAYOUTS, "bloom", ())
    r.equal("the kind byte of each kind's filter is its place in amq.KINDS, plus one",
            [bytes(getattr(amq, kind)([1]))[5] for kind in amq.KINDS],
            list(range(1, len(amq.KINDS) + 1)))
    r.equal("a builder per aggregate of the table, taking its arguments",
            {kind: getattr(amq, kind).__doc__.split("\n")[0] for kind in AGG_ARGUMENTS},
            {kind: f"{kind}(values, fpr=0.01"
             + "".join(f", {a}=None" for a in ("capacity", "layout") if a in args)
             + ", *, work_mem=None, progress=None) -> Filter"
             for kind, args in AGG_ARGUMENTS.items()})
    # amq.fuse: fuse_agg's bytes; a filter built whole, that refuses changes.
    con = sqlite3.connect(":memory:")
    amq.load(con)
    for fpr in (0.01, 0.0001):
        want = con.execute("SELECT fuse_agg(value, ?) FROM json_each(?)",
                           (fpr, json.dumps(keys))).fetchone()[0]
        f = amq.fuse(keys, fpr)
        r.check(f"amq.fuse(keys, {fpr}) is fuse_agg's bytes, every key found",
                bytes(f) == want and all(f.contains_many(keys)) and all(k in f for k in keys))
    f = amq.fuse(keys)
    r.equal("amq.fuse: 8-bit fingerprints at 1%, 16 at 0.01%",
            (f.info()["fingerprint_bits"], amq.fuse(keys, 0.0001).info()["fingerprint_bits"]),
            (8, 16))
    r.raises("amq.fuse(keys, 1e-5): below 16 bits' rate", amq.Error, amq.fuse, keys, 1e-5,
             message="fpr 1e-05 is below the lowest rate of a binary fuse filter, 1.53e-05 "
             "(16-bit fingerprints): for a lower rate build a bloom filter (bloom_agg) or a "
             "cuckoo filter (cuckoo_agg)")
    before = bytes(f)
    for what, call in (("add", lambda: f.add("x")), ("add_many", lambda: f.add_many(["x", 3])),
                       ("delete", lambda: f.delete("k1"))):
        r.raises(f"a fuse filter refuses {what}", amq.Error, call)
    r.equal("... and is unchanged, families included", (bytes(f), f.families),
            (before, ("text",)))
    r.raises("amq.fuse takes no capacity", TypeError, amq.fuse, keys, 0.01, 100)
    status, out, err = run_cli("build", "--kind", "fuse", "--capacity", "10", stdin=lines)
    r.check("amq build --kind fuse --capacity: an error, nothing written",
            status != 0 and out == b"" and "--kind fuse" in err, err)
    for kind, layouts in amq.LAYOUTS.items():
        r.equal(f"amq.{kind} builds each of its layouts",
                [getattr(amq, kind)(keys, **sized(getattr(amq, kind), layout)).layout
                 for layout in layouts],
                list(layouts))


def run_cli(*args, stdin=b""):
    """Runs `python -m amq ARGS`; returns (status, stdout bytes, stderr text)."""
    out = subprocess.run([sys.executable, "-m", "amq", *args], input=stdin,
                         capture_output=True, check=False)
    return out.returncode, out.stdout, out.stderr.decode()


def run_cli_terminal(*args, stdin=b""):
    """Runs `python -m amq ARGS` with stderr on a pseudo-terminal; returns
    (status, stdout bytes, what the terminal showed)."""
    master, slave = os.openpty()
    shown = []

    def drain():
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every writer closed its side
                break
            if not data:
                break
            shown.append(data)
    reader = threading.Thread(target=drain)
    reader.start()
    try:
        out = subprocess.run([sys.executable, "-m", "amq", *args], input=stdin,
                             stdout=subprocess.PIPE, stderr=slave, check=False)
    finally:
        os.close(slave)
        reader.join(60)
        os.close(master)
    return out.returncode, out.stdout, b"".join(shown).decode()


def command_progress(r):
    """amq build's progress line on a terminal goes on through the merge of a
    build that spilled: "amq build: counting N of 300,000 keys [###   ] 41%",
    then inserting, on the line the reading drew, cleared at the end; the
    output is the same bytes. A build in memory draws no merge; without a
    terminal nothing is drawn."""
    many = b"".join(b"%d\n" % i for i in range(300_000))
    status, out, shown = run_cli_terminal("build", "--type", "int", "--work-mem", "65536",
                                          stdin=many)
    r.check("build --work-mem 65536 on a terminal: amq.bloom's bytes", status == 0 and
            amq.Filter(out) == amq.bloom(range(300_000)), (status, shown))
    line = re.compile(r"amq build: (merging runs|counting|inserting) ([\d,]+) of ([\d,]+) keys "
                      r"\[(#*) *\] +(\d+)%")
    merges = [m.groups() for m in line.finditer(shown)]
    finish = [m for m in merges if m[0] in ("counting", "inserting")]
    r.check("... its terminal shows the finish's counting or inserting line", finish and all(
        m[2] == "300,000" for m in finish), repr(shown[-400:]))
    r.check("... each line of the merge well formed (done of total, its share)", merges and all(
        int(m[1].replace(",", "")) <= int(m[2].replace(",", "")) and
        int(m[4]) == round(100 * int(m[1].replace(",", "")) / int(m[2].replace(",", ""))) and
        len(m[3]) == 30 * int(m[1].replace(",", "")) // int(m[2].replace(",", ""))
        for m in merges), merges)
    r.check("... the line is cleared at the end", shown.endswith("\r\x1b[K"), repr(shown[-80:]))
    status, plain, err = run_cli("build", "--type", "int", "--work-mem", "65536", stdin=many)
    r.check("... the same bytes as without a terminal, which shows nothing",
            status == 0 and plain == out and err == "", err)
    status, out, shown = run_cli_terminal("build", "--type", "int", "--kind", "cuckoo",
                                          "--work-mem", "65536", stdin=many)
    r.check("build --kind cuckoo --work-mem 65536 on a terminal: amq.cuckoo's bytes, a "
            "counting or inserting line", status == 0 and
            amq.Filter(out) == amq.cuckoo(range(300_000)) and
            re.search(r"amq build: (counting|inserting) [\d,]+ of 300,000 keys", shown), shown)
    status, out, shown = run_cli_terminal("build", "--type", "int", stdin=many)
    r.check("build in memory on a terminal: no merge line",
            status == 0 and amq.Filter(out) == amq.bloom(range(300_000)) and
            not line.search(shown), shown)


def command(r):
    """The amq command: build (every --type), info, contains, union, hex,
    --help, and errors that name the file."""
    work = tempfile.mkdtemp()
    ints = b"".join(b"%d\n" % i for i in range(5000))
    status, built, _ = run_cli("build", "--type", "int", stdin=ints)
    r.check("build --type int: amq.bloom's bytes", status == 0 and
            amq.Filter(built) == amq.bloom(range(5000)), status)
    many = b"".join(b"%d\n" % i for i in range(300_000))
    status, out, err = run_cli("build", "--type", "int", "--work-mem", "65536", stdin=many)
    r.check("build --work-mem 65536 (spilling): amq.bloom's bytes", status == 0 and
            amq.Filter(out) == amq.bloom(range(300_000)), err)
    status, out, err = run_cli("build", "--kind", "cuckoo", "--work-mem", "65536", stdin=many)
    r.check("build --kind cuckoo --work-mem 65536: amq.cuckoo's bytes", status == 0 and
            amq.Filter(out) == amq.cuckoo([str(i) for i in range(300_000)]), err)
    r.equal("build --work-mem 5 is amq.bloom's error", run_cli(
        "build", "--work-mem", "5", stdin=b"1\n")[::2],
        (2, "amq build: stdin: work_mem must be between 65536 (64 KiB) and 1099511627776 (1 TiB) "
         f"bytes, got 5: {WORK_MEM_HINT}\n"))
    cases = [("text", b"a\nb b\n\n\xc3\xa9\r\n", ["a", "b b", "", "\u00e9"]),
             ("real", b"1.5\n 2\n-0.25\n", [1.5, 2.0, -0.25]),
             ("blob", b"00ff\n\nABCD\n", [b"\x00\xff", b"", b"\xab\xcd"])]
    for kind, text, values in cases:
        status, out, _ = run_cli("build", "--kind", "cuckoo", "--fpr", "0.001", "--type",
                                 kind, stdin=text)
        r.check(f"build --kind cuckoo --type {kind}: amq.cuckoo's bytes",
                status == 0 and amq.Filter(out) == amq.cuckoo(values, 0.001), status)
    path = os.path.join(work, "f.amq")
    with open(path, "wb") as f:
        f.write(built)
    status, out, _ = run_cli("info", path)
    r.check("info prints the info JSON", status == 0 and
            json.loads(out) == amq.Filter(built).info(), out)
    status, out, _ = run_cli("contains", "--type", "int", path, "1", "2")
    r.equal("contains: every key present, status 0", (status, out), (0, b"1\tmaybe\n2\tmaybe\n"))
    status, out, _ = run_cli("contains", "--type", "int", path, "1", "-77")
    r.equal("contains: a key absent, status 1", (status, out), (1, b"1\tmaybe\n-77\tno\n"))
    status, out, _ = run_cli("contains", "--type", "int", path, stdin=b"3\n4\n")
    r.equal("contains: keys from stdin", (status, out), (0, b"3\tmaybe\n4\tmaybe\n"))
    other = os.path.join(work, "g.amq")
    run_cli("build", "--type", "int", "--capacity", "5000", "-o", other, stdin=ints[:999])
    run_cli("build", "--type", "int", "--capacity", "5000", "-o", path, stdin=ints[999:])
    status, out, _ = run_cli("union", path, other)
    r.check("union: Filter.union's bytes", status == 0 and amq.Filter(out) ==
            amq.Filter(open(path, "rb").read()).union(amq.Filter(open(other, "rb").read())))
    data = open(path, "rb").read()
    r.equal("hex: \\x literal", run_cli("hex", path)[1], b"\\x" + data.hex().encode() + b"\n")
    r.equal("hex --sqlite: X'' literal", run_cli("hex", "--sqlite", path)[1],
            b"X'" + data.hex().upper().encode() + b"'\n")
    for sub in ["build", "info", "contains", "union", "hex"]:
        status, out, _ = run_cli(sub, "--help")
        r.check(f"{sub} --help", status == 0 and out.startswith(f"usage: amq {sub}".encode()))
    status, out, _ = run_cli("--help")
    r.check("--help lists the commands", status == 0 and b"contains" in out and b"hex" in out)
    missing = os.path.join(work, "missing.amq")
    r.equal("a missing file is named", run_cli("info", missing)[::2],
            (2, f"amq info: {missing}: No such file or directory\n"))
    bad = os.path.join(work, "bad.amq")
    with open(bad, "wb") as f:
        f.write(data[:-1] + bytes([data[-1] ^ 1]))
    r.equal("a damaged file is named, with SQL's words", run_cli("info", bad)[::2],
            (2, f"amq info: {bad}: checksum mismatch: the stored bytes "
             "were damaged or edited; rebuild the filter\n"))
    r.equal("a key that is not --type names its line", run_cli(
        "build", "--type", "int", stdin=b"1\n2\nthree\n")[::2],
        (2, "amq build: stdin:3: 'three' is not an integer (--type int)\n"))
    for kind, text, values in [
            ("int", b"1\n2\n\n", [1, 2]), ("int", b"1\r\n2\r\n\r\n \n\n", [1, 2]),
            ("real", b"1.5\n\n", [1.5]), ("text", b"a\nb\n\n\n", ["a", "b"]),
            ("blob", b"00ff\n\n", [b"\x00\xff"]), ("int", b"\n\n", [])]:
        status, out, err = run_cli("build", "--type", kind, stdin=text)
        r.check(f"build --type {kind}: empty lines at the end of {text!r} end the input",
                status == 0 and amq.Filter(out) == amq.bloom(values), err)
    r.equal("an empty line between int keys is an error naming its line", run_cli(
        "build", "--type", "int", stdin=b"1\n\n2\n\n")[::2],
        (2, "amq build: stdin:2: an empty line is not an integer (--type int); only empty "
         "lines at the end are skipped\n"))
    status, out, _ = run_cli("build", stdin=b"a\n\nb\n\n")
    r.check("an empty line between text keys is the empty text, as before",
            status == 0 and amq.Filter(out) == amq.bloom(["a", "", "b"]), status)
    parts = [os.path.join(work, name) for name in ("part1.txt", "part2.txt")]
    for part, text in zip(parts, [b"1\n2\n\n", b"3\n\n"]):
        with open(part, "wb") as f:
            f.write(text)
    status, out, err = run_cli("build", "--type", "int", *parts)
    r.check("each file's empty lines at its end end that file",
            status == 0 and amq.Filter(out) == amq.bloom([1, 2, 3]), err)
    every = os.path.join(work, "every.amq")
    with open(every, "wb") as f:
        f.write(built)
    status, out, _ = run_cli("contains", "--type", "int", every, stdin=b"3\n4\n\n")
    r.equal("contains: empty lines at the end of stdin end it", (status, out),
            (0, b"3\tmaybe\n4\tmaybe\n"))
    status, _, err = run_cli("union", path, os.path.join(work, "nope.amq"))
    r.check("union names the file it cannot read", status == 2 and "nope.amq" in err, err)
    cuckoo = os.path.join(work, "c.amq")
    run_cli("build", "--kind", "cuckoo", "-o", cuckoo, stdin=b"x\n")
    status, _, err = run_cli("union", path, cuckoo)
    r.check("union of a bloom and a cuckoo filter names the second file",
            status == 2 and err.startswith(f"amq union: {cuckoo}: expected a bloom filter"), err)
    console = os.path.join(os.path.dirname(sys.executable), "amq")
    out = subprocess.run([console, "hex", path], capture_output=True, check=False)
    r.equal("the amq console script", out.stdout, b"\\x" + data.hex().encode() + b"\n")
    output_file(r, work, path, cuckoo)


def output_file(r, work, bloom_path, cuckoo_path):
    """-o FILE is written whole or not at all: a failing union leaves no file
    (nor a temporary one) and an existing FILE as it was."""
    week = os.path.join(work, "week.amq")
    status, _, err = run_cli("union", bloom_path, cuckoo_path, "-o", week)
    r.check("a failing union -o FILE fails", status == 2 and "expected a bloom filter" in err, err)
    r.check("... and leaves no FILE", not os.path.exists(week))
    r.equal("... nor a temporary file", [n for n in os.listdir(work) if n.endswith(".tmp")], [])
    with open(week, "wb") as f:
        f.write(b"last week")
    status, _, _ = run_cli("union", bloom_path, cuckoo_path, "-o", week)
    r.equal("... and leaves an existing FILE as it was", (status, open(week, "rb").read()),
            (2, b"last week"))
    status, _, err = run_cli("union", bloom_path, "-o", os.path.join(work, "no", "week.amq"))
    r.check("-o in a missing folder fails naming the file", status == 2 and
            "no/week.amq: No such file or directory" in err, err)
    status, _, _ = run_cli("union", bloom_path, bloom_path, "-o", week)
    umask = os.umask(0)
    os.umask(umask)
    r.check("a union -o FILE replaces it, with the mode open() gives",
            status == 0 and amq.Filter(open(week, "rb").read()) == amq.Filter(
                open(bloom_path, "rb").read()).union(amq.Filter(open(bloom_path, "rb").read())) and
            os.stat(week).st_mode & 0o777 == 0o666 & ~umask, oct(os.stat(week).st_mode))
    # A failure after the bytes are written (the rename): the temporary
    # file is removed, FILE untouched.
    from amq import cli
    replace = cli.os.replace

    def failing_replace(src, dst):
        raise OSError(28, "No space left on device")

    before = open(week, "rb").read()
    cli.os.replace = failing_replace
    try:
        e = r.raises("a failed rename is the command's error", cli.CommandError,
                     cli.write_filter, amq.bloom([1]), week)
    finally:
        cli.os.replace = replace
    r.check("... naming FILE", e is not None and str(e).startswith(week), e)
    r.equal("... leaving FILE as it was and no temporary file",
            (open(week, "rb").read(), [n for n in os.listdir(work) if n.endswith(".tmp")]),
            (before, []))


def command_families(r):
    """amq contains reads keys as the filter's values without --type: numbers
    as int (float when not an integer), text as text, blobs as hex; mixed,
    empty and old filters as text. An explicit --type wins, and a wrong family
    is core's error with the --type values that fit."""
    work = tempfile.mkdtemp()

    def write(name, data):
        path = os.path.join(work, name)
        with open(path, "wb") as out:
            out.write(data)
        return path

    status, built, _ = run_cli("build", "--type", "int", stdin=b"1\n2\n4\n")
    nums = write("v.amq", built)
    r.equal("build --type int records numbers", amq.Filter(built).families, ("numbers",))
    r.equal("contains FILE 4 on a filter of ints, no --type", run_cli("contains", nums, "4"),
            (0, b"4\tmaybe\n", ""))
    r.equal("... a key that is not an integer is a float", run_cli(
        "contains", nums, "4.0", "2.5", "-1"), (1, b"4.0\tmaybe\n2.5\tno\n-1\tno\n", ""))
    r.equal("... keys from stdin, empty lines at the end ignored", run_cli(
        "contains", nums, stdin=b"1\n 2 \n\n"), (0, b"1\tmaybe\n 2 \tmaybe\n", ""))
    r.equal("... a key that is no number names the filter's family", run_cli(
        "contains", nums, "abc"), (2, b"", f"amq contains: {nums}: 'abc' is not a number, and "
                                   "the filter holds numbers (pass --type to read keys as "
                                   "another type)\n"))
    r.equal("--type int still reads ints", run_cli("contains", "--type", "int", nums, "4"),
            (0, b"4\tmaybe\n", ""))
    r.equal("--type text wins, and the wrong family is core's error", run_cli(
        "contains", "--type", "text", nums, "4"),
        (2, b"", f"amq contains: {nums}: bloom_contains: value: the filter holds numbers, got "
         "text '4': leave --type out to read keys as the filter's values, or pass --type int "
         "or real\n"))

    text = write("t.amq", run_cli("build", stdin=b"a\n1\n")[1])
    r.equal("a filter of text reads keys as text", run_cli("contains", text, "a", "1", "2"),
            (1, b"a\tmaybe\n1\tmaybe\n2\tno\n", ""))
    r.equal("... and --type int is refused", run_cli("contains", "--type", "int", text, "1"),
            (2, b"", f"amq contains: {text}: bloom_contains: value: the filter holds text, got "
             "number 1: leave --type out to read keys as the filter's values, or pass --type "
             "text\n"))
    blobs = write("b.amq", run_cli("build", "--kind", "cuckoo", "--type", "blob",
                                   stdin=b"00ff\n")[1])
    r.equal("a filter of blobs reads keys as hex", run_cli("contains", blobs, "00FF", "01"),
            (1, b"00FF\tmaybe\n01\tno\n", ""))
    r.equal("... a key that is not hex names the family", run_cli("contains", blobs, "zz"),
            (2, b"", f"amq contains: {blobs}: 'zz' is not hexadecimal digits, and the filter "
             "holds blobs (pass --type to read keys as another type)\n"))
    r.equal("... and --type text is refused with cuckoo_contains' words", run_cli(
        "contains", "--type", "text", blobs, "00ff"),
        (2, b"", f"amq contains: {blobs}: cuckoo_contains: value: the filter holds blobs, got "
         "text '00ff': leave --type out to read keys as the filter's values, or pass --type "
         "blob\n"))

    mixed = write("m.amq", bytes(amq.bloom([1, b"a"])))
    r.equal("a mixed filter needs --type: text by default is refused", run_cli(
        "contains", mixed, "1"),
        (2, b"", f"amq contains: {mixed}: bloom_contains: value: the filter holds numbers and "
         "blobs, got text '1': pass --type int, real or blob, the types of the filter's "
         "values\n"))
    r.equal("... and answers with it", (run_cli("contains", "--type", "int", mixed, "1"),
                                        run_cli("contains", "--type", "blob", mixed, "61")),
            ((0, b"1\tmaybe\n", ""), (0, b"61\tmaybe\n", "")))
    empty = write("e.amq", bytes(amq.bloom([], capacity=10)))
    r.equal("an empty filter reads keys as text and refuses none", (
        run_cli("contains", empty, "a"), run_cli("contains", "--type", "int", empty, "1")),
        ((1, b"a\tno\n", ""), (1, b"1\tno\n", "")))
    with open(FIXTURES, encoding="ascii") as f:
        old = write("old.amq", bytes.fromhex(f.readline().split("\t")[2].strip()))
    r.equal("a filter of amq 0.3.0 reads keys as text, and any --type is answered", (
        run_cli("contains", old, "k1"), run_cli("contains", "--type", "int", old, "7"),
        run_cli("contains", "--type", "blob", old, "00")[0]),
        ((0, b"k1\tmaybe\n", ""), (0, b"7\tmaybe\n", ""), 1))
    status, out, _ = run_cli("contains", "--help")
    r.check("contains --help says how keys are read", status == 0 and b"families" in out, out)


def readme_commands(r):
    """The README's example of the amq command runs as written: each "$ "
    line in a fresh folder, its output (stdout and stderr) the lines after."""
    readme = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    start = text.index("```\n$ ", text.index("**The `amq` command**")) + 4
    block = text[start:text.index("```", start)]
    steps = []
    for line in block.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    r.check("the README's amq example has its union", any(
        cmd.startswith("amq union ") for cmd, _ in steps), [cmd for cmd, _ in steps])
    work = tempfile.mkdtemp()
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep +
               os.environ.get("PATH", ""))
    for cmd, want in steps:
        out = subprocess.run(["bash", "-c", cmd], cwd=work, env=env, capture_output=True,
                             text=True, check=False)
        r.equal(f"README: $ {cmd}", (out.stdout + out.stderr).splitlines(), want)


def every_variant():
    """One small valid filter of each kind and layout, with values in it."""
    filters = []
    for layout in BLOOM_LAYOUTS:
        filters.append(amq.bloom(range(60), 0.05, 25 if layout == "scalable" else None, layout))
    for build, layouts in BUILDERS[1:]:
        for layout in layouts:
            filters.append(build(range(60), 0.05, **sized(build, layout)))
    return [bytes(f) for f in filters]


def mutate(rng, data):
    """One damaged copy of data: bit flips, a changed header field, a cut or
    an extension, or random bytes."""
    b = bytearray(data)
    how = rng.randrange(6)
    if how == 0 and b:
        for _ in range(rng.randrange(1, 4)):
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    elif how == 1 and len(b) >= 64:
        at = rng.choice([4, 5, 6, 7, 16, 24, 32, 40, 44, 56])
        b[at] = rng.randrange(256)
    elif how == 2:
        del b[rng.randrange(len(b) + 1):]
    elif how == 3:
        b += bytes(rng.randrange(256) for _ in range(rng.randrange(1, 80)))
    elif how == 4 and len(b) > 64:
        b[rng.randrange(64, len(b))] = rng.randrange(256)
    else:
        b = bytearray(rng.randrange(256) for _ in range(rng.randrange(0, 200)))
    return bytes(b)


def sqlite_verdict(con, data):
    """SQLite's message for data read as a filter (bloom_info or cuckoo_info,
    by the kind byte), without the "FUNCTION: filter: " it starts with; None
    when it reads."""
    kind = amq.KINDS[data[5] - 1] if len(data) > 5 and 1 <= data[5] <= len(amq.KINDS) else "bloom"
    fn = SQL[kind, "INFO"]
    try:
        con.execute(f"SELECT {fn}(?)", (data,)).fetchone()
    except sqlite3.OperationalError as e:
        text = str(e)
        prefix = f"{fn}: filter: "
        return text[len(prefix):] if text.startswith(prefix) else text
    return None


def damaged_bytes(r, seed_dir):
    """Any bytes give a Filter or amq.Error, never a crash: mutated filters of
    every kind and layout, the fuzz seed corpus, random bytes. amq.Error
    exactly when SQLite refuses them, with SQLite's words."""
    seeds = every_variant()
    if seed_dir:
        for name in sorted(os.listdir(seed_dir)):
            with open(os.path.join(seed_dir, name), "rb") as f:
                seeds.append(f.read())
    r.check("seed corpus read", len(seeds) > 8, len(seeds))
    con = sqlite3.connect(":memory:")
    amq.load(con)
    rng = random.Random(22)
    opened = refused = disagreements = 0
    first_disagreement = ""
    for n in range(6000):
        data = mutate(rng, rng.choice(seeds)) if n % 10 else rng.choice(seeds)
        try:
            f = amq.Filter(data)
        except amq.Error as e:
            refused += 1
            ours = str(e)
        else:
            opened += 1
            ours = None
            # A filter that opened works: probe, describe, change, write out
            # (with values of a family it takes: a seed may hold text only).
            probe = range(50)
            if f.families and "numbers" not in f.families:
                probe = ([str(i) for i in range(50)] if "text" in f.families
                         else [bytes([i]) for i in range(50)])
            f.contains_many(probe)
            f.info()
            g = f.copy()
            try:
                g.add_many(probe[:20])
            except amq.Error:
                pass
            amq.Filter(bytes(g))
        theirs = sqlite_verdict(con, data)
        if ours != theirs:
            disagreements += 1
            first_disagreement = first_disagreement or f"{data.hex()}: {ours!r} vs {theirs!r}"
    r.check(f"6000 damaged inputs: {opened} filters, {refused} amq.Error, no crash",
            opened > 100 and refused > 1000, (opened, refused))
    r.check("amq.Error exactly when SQLite refuses, with SQLite's words", disagreements == 0,
            f"{disagreements} disagreements, first {first_disagreement}")


def main():
    seed_dir = sys.argv[1] if len(sys.argv) > 1 else None
    Results().run(hash_vectors, filter_basics, none_is_null, mutation, families, old_filters,
                  cuckoo_full, cuckoo_copies,
                  cuckoo_lowest_fpr, combining, builders, interrupts, work_mem_arguments,
                  spilling, spill_cleanup, progress, loading, namespace, kinds,
                  command, command_progress,
                  command_families, readme_commands,
                  lambda r: damaged_bytes(r, seed_dir))


if __name__ == "__main__":
    main()
