"""The amq Python package against both engines, for every Python type it hashes.

For each value (int, int beyond int64, bool, float, str, bytes, Decimal, UUID,
date, naive and aware datetime, time): amq.hash equals amq_hash of the equal
SQL value in PostgreSQL (its type) and in SQLite (the value SQLite stores for
it), and Filter.contains answers as bloom_contains / cuckoo_contains do on the
filter each engine builds. amq.bloom and amq.cuckoo give the aggregates' bytes
for every layout in both engines; amq.Error says what SQLite and PostgreSQL say
for the same mistake (message, hint, SQLSTATE; where SQL's hint names SQL
functions or casts, the same message with Python's advice: a value of a family
the filter does not hold); filters changed in Python read
back in SQL and the other way round; amq.psycopg loads and dumps bloom and
cuckoo in text and binary; the amq command's files and literals work in SQL.

Usage: test_engines.py (PGHOST, PGPORT, PGUSER name a server where the amq
extension is installed). Ends with "N passed, N failed".
"""

import datetime
import decimal
import os
import re
import sqlite3
import subprocess
import sys
import uuid

import psycopg

import amq
import amq.psycopg

# The tally of checks, shared with the other suites.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from harness import Results  # noqa: E402
import sample_rows  # noqa: E402

DB = "amq_python"
D = decimal.Decimal
UTC = datetime.timezone.utc
PLUS2 = datetime.timezone(datetime.timedelta(hours=2))
MINUS530 = datetime.timezone(-datetime.timedelta(hours=5, minutes=30))


def sqlite_int_or_real(d):
    """What SQLite stores for a numeric: an INTEGER when it is one, else a REAL."""
    return int(d) if d == d.to_integral_value() and -2**63 <= d < 2**63 else float(d)


# (name, PostgreSQL type, values, SQLite expression over ?, Python value -> SQLite
# parameter or None where SQLite has no equal value).
TYPES = [
    ("int", "int8", [0, 1, -1, 42, 2**63 - 1, -2**63, 10**12, 3], "?", lambda v: v),
    ("int past int64", "numeric", [2**63, -(2**64), 10**30, 2**63 + 1], "?", float),
    ("bool", "bool", [True, False], "?", int),
    ("float", "float8", [0.1, -0.0, 3.0, 2.5, 1e300, -1e-300, float("inf"), float("-inf"),
                         float("nan"), 2.0**63],
     "?", lambda v: None if v != v else v),
    ("str", "text", ["", "abc", "déjà vu", "東京", "emoji 🎉", "3", " pad "], "?", lambda v: v),
    ("bytes", "bytea", [b"", b"abc", bytes(range(256)), b"\x00"], "?", lambda v: v),
    ("Decimal", "numeric", [D("3"), D("3.000"), D("3.5"), D("0.1"), D("-0"), D("1E+2"),
                            D("123456789012345678901234567890"), D("1.5E-30"),
                            D("9223372036854775807"), D("9223372036854775808"), D("NaN"),
                            D("Infinity"), D("-Infinity")],
     "?", lambda v: None if v.is_nan() else sqlite_int_or_real(v)),
    ("UUID", "uuid", [uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), uuid.UUID(int=0),
                      uuid.UUID(int=2**128 - 1)], "lower(?)", lambda v: str(v).upper()),
    ("date", "date", [datetime.date(2024, 2, 29), datetime.date(1, 1, 1),
                      datetime.date(9999, 12, 31), datetime.date(1970, 1, 1)],
     "date(?)", lambda v: v.isoformat()),
    ("datetime", "timestamp", [datetime.datetime(2024, 1, 2, 3, 4, 5),
                               datetime.datetime(2000, 2, 29, 23, 59, 59),
                               datetime.datetime(2024, 1, 2, 3, 4, 5, 120000),
                               datetime.datetime(1, 1, 1, 0, 0, 0, 1)],
     "datetime(?)", lambda v: None if v.microsecond else v.isoformat()),
    ("aware datetime", "timestamptz", [datetime.datetime(2024, 1, 2, 1, 0, tzinfo=PLUS2),
                                       datetime.datetime(2024, 1, 2, 1, 0, tzinfo=UTC),
                                       datetime.datetime(2024, 6, 30, 22, 15, 7,
                                                         tzinfo=MINUS530),
                                       datetime.datetime(2024, 6, 30, 22, 15, 7, 250,
                                                         tzinfo=UTC)],
     "datetime(?)", lambda v: None if v.microsecond else v.isoformat()),
    ("time", "time", [datetime.time(13, 14, 15), datetime.time(0, 0),
                      datetime.time(23, 59, 59, 999999), datetime.time(1, 2, 3, 500000)],
     "time(?)", lambda v: None if v.microsecond else v.isoformat()),
]

# amq.bloom / amq.cuckoo arguments and the aggregate that must give the same bytes.
BUILDERS = [
    ("bloom", {}, "bloom_agg({c})"),
    ("bloom", {"fpr": 0.001}, "bloom_agg({c}, 0.001)"),
    ("bloom", {"capacity": 20000}, "bloom_agg({c}, 0.01, 20000)"),
    ("bloom", {"layout": "classic"}, "bloom_agg({c}, 0.01, NULL, 'classic')"),
    ("bloom", {"fpr": 0.02, "capacity": 9000, "layout": "counting"},
     "bloom_agg({c}, 0.02, 9000, 'counting')"),
    ("bloom", {"layout": "counting"}, "bloom_agg({c}, 0.01, NULL, 'counting')"),
    ("bloom", {"capacity": 500, "layout": "scalable"}, "bloom_agg({c}, 0.01, 500, 'scalable')"),
    ("bloom", {"layout": "scalable"}, "bloom_agg({c}, 0.01, NULL, 'scalable')"),
    ("cuckoo", {}, "cuckoo_agg({c})"),
    ("cuckoo", {"fpr": 0.02, "capacity": 20000}, "cuckoo_agg({c}, 0.02, 20000)"),
    ("cuckoo", {"fpr": 0.001, "layout": "b2"}, "cuckoo_agg({c}, 0.001, NULL, 'b2')"),
    ("cuckoo", {"fpr": 0.001, "layout": "b8"}, "cuckoo_agg({c}, 0.001, NULL, 'b8')"),
    ("cuckoo", {"fpr": 0.001, "layout": "semisorted"},
     "cuckoo_agg({c}, 0.001, NULL, 'semisorted')"),
    ("cuckoo", {"fpr": 0.1}, "cuckoo_agg({c}, 0.1)"),
]


def connect(dbname):
    """An autocommit psycopg connection to dbname on the test server."""
    return psycopg.connect(dbname=dbname, autocommit=True)


def pg_error(pg, sql, params=()):
    """(message, hint, sqlstate) of the error sql raises in PostgreSQL."""
    try:
        pg.execute(sql, params)
    except psycopg.Error as e:
        return e.diag.message_primary, e.diag.message_hint, e.sqlstate
    return None


def sqlite_error(lite, sql, params=()):
    """The message of the error sql raises in SQLite."""
    try:
        lite.execute(sql, params).fetchall()
    except sqlite3.Error as e:
        return str(e)
    return None


def python_error(fn, *args, **kwargs):
    """The amq.Error fn raises."""
    try:
        fn(*args, **kwargs)
    except amq.Error as e:
        return e
    return None


def sentence(hint):
    """A core hint as PostgreSQL shows it: capitalised, with a full stop."""
    return hint[:1].upper() + hint[1:] + "." if hint else None


def same_error(r, name, py, lite_message, pg, python_hint=False):
    """Python's amq.Error equals SQLite's message and PostgreSQL's message,
    hint and SQLSTATE. python_hint: the SQL hint names SQL functions, and
    Python gives its own advice instead (naming amq's builders, no SQL
    function) after the same message; SQL's message may start with the
    "FUNCTION: argument: " Python has no use for."""
    r.check(f"{name}: amq.Error raised", py is not None)
    if py is None:
        return
    if not python_hint:
        r.equal(f"{name}: str(e) is SQLite's message", str(py), lite_message)
        r.equal(f"{name}: message, hint, sqlstate are PostgreSQL's",
                (py.message, sentence(py.hint), py.sqlstate), pg)
        return
    pg_message, pg_hint, pg_state = pg or (None, None, None)
    core_hint = pg_hint[:1].lower() + pg_hint[1:-1] if pg_hint else ""
    r.check(f"{name}: the message is SQLite's and PostgreSQL's, SQLSTATE too",
            lite_message is not None and lite_message.endswith(f"{py.message}: {core_hint}") and
            pg_message is not None and pg_message.endswith(py.message) and
            py.sqlstate == pg_state, (str(py), lite_message, pg))
    r.check(f"{name}: the hint is Python's: amq's builders, no SQL function",
            str(py) == f"{py.message}: {py.hint}" and "amq." in py.hint and
            py.hint != core_hint and not re.search(r"\b(bloom|cuckoo)_(\w+|\*)", py.hint),
            py.hint)


def values_hash_and_probe(r, pg, lite):
    """Per type: hashes equal in all three; each engine's filter over half the
    values has amq.bloom's bytes and answers as Filter.contains does."""
    for name, pg_type, values, lite_expr, to_lite in TYPES:
        for v in values:
            pg_hash = pg.execute(f"SELECT amq_hash(%s::{pg_type})", (v,)).fetchone()[0]
            r.equal(f"{name} {v!r}: amq.hash is PostgreSQL's amq_hash({pg_type})",
                    amq.hash(v), pg_hash)
            if to_lite(v) is not None:
                lite_hash = lite.execute(f"SELECT amq_hash({lite_expr})",
                                         (to_lite(v),)).fetchone()[0]
                r.equal(f"{name} {v!r}: amq.hash is SQLite's amq_hash({lite_expr})",
                        amq.hash(v), lite_hash)
        members = values[::2]
        for kind in ("bloom", "cuckoo"):
            build = amq.bloom if kind == "bloom" else amq.cuckoo
            mine = build(members, 0.2)
            pg_bytes = pg.execute(f"SELECT {kind}_agg(v, 0.2)::bytea FROM "
                                  f"unnest(%s::{pg_type}[]) WITH ORDINALITY u(v, n)",
                                  (members,)).fetchone()[0]
            r.equal(f"{name}: amq.{kind} is PostgreSQL's {kind}_agg", bytes(mine), pg_bytes)
            answers = pg.execute(
                f"SELECT array_agg({kind}_contains(%s::bytea::{kind}, v) ORDER BY n) FROM "
                f"unnest(%s::{pg_type}[]) WITH ORDINALITY u(v, n)",
                (pg_bytes, values)).fetchone()[0]
            r.equal(f"{name}: {kind}_contains in PostgreSQL is Filter.contains_many",
                    answers, amq.Filter(pg_bytes).contains_many(values))
            lite_members = [to_lite(v) for v in members if to_lite(v) is not None]
            lite_values = [v for v in values if to_lite(v) is not None]
            if len(lite_members) == len(members):
                lite.execute("DROP TABLE IF EXISTS m")
                lite.execute("CREATE TABLE m(v)")
                lite.executemany("INSERT INTO m VALUES (?)", [(x,) for x in lite_members])
                lite_bytes = lite.execute(f"SELECT {kind}_agg({lite_expr.replace('?', 'v')}, "
                                          "0.2) FROM m").fetchone()[0]
                r.equal(f"{name}: amq.{kind} is SQLite's {kind}_agg", bytes(mine), lite_bytes)
            lite_answers = [bool(lite.execute(f"SELECT {kind}_contains(?, {lite_expr})",
                                              (mine, to_lite(v))).fetchone()[0])
                            for v in lite_values]
            r.equal(f"{name}: {kind}_contains in SQLite is Filter.contains",
                    lite_answers, [v in mine for v in lite_values])


def make_rows():
    """Rows of (id, int, real, text, blob) with duplicates and NULLs, as interop.py."""
    words = ["alpha", "beta", "déjà vu", "東京", "emoji 🎉", "", " pad "]
    return sample_rows.make_rows(3000, words, small_ints=300, texts=2000, blob_bytes=20,
                                 huge_reals=False)


def builders(r, pg, lite):
    """amq.bloom / amq.cuckoo over each column in row order, NULLs as None:
    the aggregates' bytes in both engines, for every layout."""
    rows = make_rows()
    pg.execute("CREATE TABLE rows (id int, i int8, r float8, t text, b bytea)")
    with pg.cursor().copy("COPY rows FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)
    lite.execute("CREATE TABLE rows (id INTEGER, i INTEGER, r REAL, t TEXT, b BLOB)")
    lite.executemany("INSERT INTO rows VALUES (?, ?, ?, ?, ?)", rows)
    for col, index in [("i", 1), ("r", 2), ("t", 3), ("b", 4)]:
        values = [row[index] for row in rows]
        for kind, kwargs, agg in BUILDERS:
            build = amq.bloom if kind == "bloom" else amq.cuckoo
            mine = bytes(build(values, **kwargs))
            sql = agg.format(c=col)
            lite_bytes = lite.execute(f"SELECT {sql} FROM rows").fetchone()[0]
            pg_bytes = pg.execute(f"SELECT ({sql})::bytea FROM rows").fetchone()[0]
            r.check(f"column {col}: amq.{kind}(**{kwargs}) is {sql} in SQLite and PostgreSQL",
                    mine == lite_bytes == pg_bytes, (len(mine), len(lite_bytes), len(pg_bytes)))
    nulls = [None] * 5
    r.equal("all-None values: bloom_agg over NULL rows with the same arguments",
            bytes(amq.bloom(nulls, 0.001, 100, "classic")),
            pg.execute("SELECT bloom_agg(NULL::int, 0.001, 100, 'classic')::bytea FROM "
                       "generate_series(1, 5)").fetchone()[0])
    for name, pg_type, values, _, _ in TYPES:
        for kind in ("bloom", "cuckoo"):
            build = amq.bloom if kind == "bloom" else amq.cuckoo
            pg_bytes = pg.execute(f"SELECT {kind}_agg(v)::bytea FROM unnest(%s::{pg_type}[]) v",
                                  (values * 3,)).fetchone()[0]
            r.equal(f"{name}: amq.{kind} of every value, repeated, is {kind}_agg",
                    bytes(build(values * 3)), pg_bytes)


def errors(r, pg, lite):
    """The same mistake: amq.Error's text is SQLite's, its message, hint and
    SQLSTATE PostgreSQL's."""
    lite.execute("CREATE TABLE hundred AS WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL "
                 "SELECT x + 1 FROM s WHERE x < 100) SELECT x FROM s")
    pg.execute("CREATE TABLE hundred AS SELECT generate_series(1, 100) AS x")
    cases = [
        ("fpr 0", lambda: amq.bloom([1], 0), "SELECT bloom_agg(1, 0)"),
        ("fpr 1.5 (cuckoo)", lambda: amq.cuckoo([1], 1.5), "SELECT cuckoo_agg(1, 1.5)"),
        ("capacity 0", lambda: amq.bloom([1], capacity=0), "SELECT bloom_agg(1, 0.01, 0)"),
        ("unknown layout", lambda: amq.cuckoo([1], layout="blocked"),
         "SELECT cuckoo_agg(1, 0.01, NULL, 'blocked')"),
        ("bloom layout name", lambda: amq.bloom([1], layout="b4"),
         "SELECT bloom_agg(1, 0.01, NULL, 'b4')"),
        ("too large", lambda: amq.bloom([1], capacity=10**15),
         "SELECT bloom_agg(1, 0.01, 1000000000000000)"),
        ("cuckoo fpr below 32-bit fingerprints", lambda: amq.cuckoo([1], 1e-12, None, "b4"),
         "SELECT cuckoo_agg(1, 1e-12, NULL, 'b4')"),
    ]
    for name, fn, sql in cases:
        same_error(r, name, python_error(fn), sqlite_error(lite, sql), pg_error(pg, sql))
    # cuckoo_agg's hint names cuckoo_agg: Python's names amq.cuckoo.
    sql = "SELECT cuckoo_agg(x, 0.01, 10) FROM hundred"
    same_error(r, "cuckoo capacity too small", python_error(amq.cuckoo, range(1, 101),
                                                            capacity=10),
               sqlite_error(lite, sql), pg_error(pg, sql), python_hint=True)
    blocked = amq.bloom(range(10))
    other = amq.bloom(range(10), capacity=5000)
    full = amq.cuckoo([], capacity=8, layout="b4")
    for i in range(1000):
        try:
            full.add(i)
        except amq.Error:
            break
    cuckoo_small = amq.cuckoo([], capacity=8, layout="b4")
    cuckoo = amq.cuckoo(range(10))
    # The last item: whether Python gives its own hint for SQL's.
    calls = [
        ("cuckoo add to a full filter", lambda: full.add(-1), "cuckoo_add({f}, -1)", [full],
         True),
        ("delete from a blocked filter", lambda: blocked.delete(1), "bloom_delete({f}, 1)",
         [blocked], True),
        ("count on a blocked filter", lambda: blocked.count(1), "bloom_frequency({f}, 1)",
         [blocked], True),
        ("union of different sizes", lambda: blocked.union(other), "bloom_union({f}, {g})",
         [blocked, other], False),
        ("intersection of different sizes", lambda: blocked.intersection(other),
         "bloom_intersect({f}, {g})", [blocked, other], False),
        ("union of a bloom and a cuckoo filter", lambda: blocked.union(cuckoo),
         "bloom_union({f}, {g})", [blocked, cuckoo], True),
        ("bloom & cuckoo", lambda: blocked & cuckoo, "bloom_intersect({f}, {g})",
         [blocked, cuckoo], True),
    ]
    for name, fn, template, filters, python_hint in calls:
        kind = filters[0].kind
        lite_sql = "SELECT " + template.format(f="?", g="?")
        pg_sql = "SELECT " + template.format(f=f"%s::bytea::{kind}", g=f"%s::bytea::{kind}")
        params = [bytes(f) for f in filters]
        same_error(r, name, python_error(fn), sqlite_error(lite, lite_sql, params),
                   pg_error(pg, pg_sql, params), python_hint)
    before = bytes(cuckoo_small)
    same_error(r, "add_many past a cuckoo filter's room", python_error(
        cuckoo_small.add_many, range(1, 101)),
        sqlite_error(lite, "SELECT cuckoo_add_agg(?, x) FROM (SELECT x FROM hundred ORDER BY x)",
                     (before,)),
        pg_error(pg, "SELECT cuckoo_add_agg(%s::bytea::cuckoo, x ORDER BY x) FROM hundred",
                 (before,)), python_hint=True)
    r.equal("... the filter kept its bytes", bytes(cuckoo_small), before)
    damaged_bytes(r, pg, lite)


def damaged_bytes(r, pg, lite):
    """Filter(data) of bytes that are not a filter: SQL's words for them, with
    nothing where SQL names its function and argument."""
    good = bytes(amq.bloom(range(100)))
    newer = bytearray(good)
    newer[4] = 9
    cases = [
        ("checksum mismatch", good[:-1] + bytes([good[-1] ^ 1])),
        ("truncated", good[:-8]),
        ("shorter than the header", good[:10]),
        ("bad magic", b"XMQF" + good[4:]),
        ("unknown kind", good[:5] + b"\x07" + good[6:]),
        ("written by a newer amq", bytes(newer)),
        ("empty", b""),
    ]
    for name, data in cases:
        py = python_error(amq.Filter, data)
        lite_message = sqlite_error(lite, "SELECT bloom_info(?)", (data,))
        pg_message, pg_hint, pg_state = pg_error(pg, "SELECT bloom_info(%s::bytea::bloom)",
                                                 (data,))
        r.check(f"Filter({name}): amq.Error", py is not None)
        if py is None:
            continue
        detail = py.message
        r.equal(f"Filter({name}): SQLite's message after its 'bloom_info: filter: '",
                str(py), lite_message[len("bloom_info: filter: "):])
        r.equal(f"Filter({name}): PostgreSQL's message after 'bloom: bytea: ', hint, sqlstate",
                (detail, sentence(py.hint), py.sqlstate),
                (pg_message[len("bloom: bytea: "):], pg_hint, pg_state))


def families(r, pg, lite):
    """A probe or add of a value of a family the filter does not hold: the
    same message and SQLSTATE in all three, SQL's cast as the hint in SQLite
    and PostgreSQL, Python's conversion in amq.Error. The families each engine
    records are the ones Python records."""
    ints, text = amq.bloom(range(1, 101)), amq.cuckoo(["a", "b"])
    cases = [
        ("'42' against numbers", lambda: ints.contains("42"), "bloom_contains({f}, {v})",
         ints, "42", "text", "convert the value (int('42'))"),
        ("'4.5' against numbers", lambda: ints.contains("4.5"), "bloom_contains({f}, {v})",
         ints, "4.5", "text", "convert the value (float('4.5'))"),
        ("bytes against text", lambda: text.contains(b"\x01"), "cuckoo_contains({f}, {v})",
         text, b"\x01", "bytea", "convert the value (value.decode())"),
        ("an int added to text", lambda: text.copy().add(7), "cuckoo_add({f}, {v})",
         text, 7, "int8", "convert the value (str(7))"),
    ]
    for name, fn, template, f, value, pg_type, hint in cases:
        py = python_error(fn)
        lite_message = sqlite_error(lite, "SELECT " + template.format(f="?", v="?"),
                                    (bytes(f), value))
        pg_message, pg_hint, pg_state = pg_error(pg, "SELECT " + template.format(
            f=f"%s::bytea::{f.kind}", v=f"%s::{pg_type}"), (bytes(f), value)) or (None,) * 3
        r.check(f"{name}: amq.Error", py is not None)
        if py is None:
            continue
        r.equal(f"{name}: PostgreSQL's message and SQLSTATE, Python's hint",
                (py.message, py.sqlstate, py.hint), (pg_message, pg_state, hint))
        sql_hint = pg_hint[:1].lower() + pg_hint[1:-1] if pg_hint else ""
        r.equal(f"{name}: SQLite's message with SQL's cast", lite_message,
                f"{py.message}: {sql_hint}")
    lite.execute("CREATE TABLE mixed (v)")
    lite.executemany("INSERT INTO mixed VALUES (?)", [(1,), ("a",), (2,), (b"b",)])
    lite_mixed = amq.Filter(lite.execute("SELECT bloom_agg(v) FROM mixed").fetchone()[0])
    r.equal("a mixed SQLite column gives amq.bloom's families and bytes",
            (lite_mixed.families, lite_mixed), (("numbers", "text", "blobs"),
                                                amq.bloom([1, "a", 2, b"b"])))
    pg_text = amq.Filter(pg.execute("SELECT bloom_agg(v)::bytea FROM unnest(%s::text[]) v",
                                    (["x", "y"],)).fetchone()[0])
    r.equal("PostgreSQL's filter of text holds text", pg_text.families, ("text",))


def round_trips(r, pg, lite):
    """Filters changed in Python read back in SQL, with the bytes SQL's own
    changes give, and the other way round."""
    start = pg.execute("SELECT bloom_agg(x, 0.01, 1000, 'counting')::bytea FROM "
                       "generate_series(1, 300) x").fetchone()[0]
    f = amq.Filter(start)
    f.add_many(range(300, 400))
    f.delete(5)
    pg_same = pg.execute(
        "SELECT bloom_delete(bloom_add_agg(%s::bytea::bloom, x ORDER BY x), 5)::bytea FROM "
        "generate_series(300, 399) x", (start,)).fetchone()[0]
    r.equal("Python's add_many + delete are bloom_add_agg + bloom_delete in PostgreSQL",
            bytes(f), pg_same)
    probes = list(range(0, 600))
    pg_answers = pg.execute("SELECT array_agg(bloom_contains(%s::bytea::bloom, x) ORDER BY x) "
                            "FROM generate_series(0, 599) x", (bytes(f),)).fetchone()[0]
    r.equal("PostgreSQL reads the filter Python changed", pg_answers, f.contains_many(probes))
    lite_answers = [bool(lite.execute("SELECT bloom_contains(?, ?)", (f, x)).fetchone()[0])
                    for x in probes]
    r.equal("SQLite reads the filter Python changed", lite_answers, f.contains_many(probes))
    g = amq.cuckoo(["a", "b", "c"])
    g.add("d")
    lite_g = lite.execute("SELECT cuckoo_add(cuckoo_agg(x), 'd') FROM (SELECT 'a' AS x UNION ALL "
                          "SELECT 'b' UNION ALL SELECT 'c')").fetchone()[0]
    r.equal("Filter.add is SQLite's cuckoo_add", bytes(g), lite_g)
    changed = pg.execute("SELECT cuckoo_delete(cuckoo_add(%s::bytea::cuckoo, 'e'), 'a')::bytea",
                         (bytes(g),)).fetchone()[0]
    h = amq.Filter(changed)
    r.equal("Python reads the filter PostgreSQL changed", (h.contains_many("abcde"), h.count("e")),
            ([False, True, True, True, True], 1))
    unique = amq.cuckoo([], 0.001, 100)
    for v in [42, 7, 42, 2.5, 7, 42.0]:
        unique.add_unique(v)
    chain = "cuckoo_new(100, 0.001)"
    for v in ["42", "7", "42", "2.5", "7", "42.0"]:
        chain = f"cuckoo_add_unique({chain}, {v})"
    r.equal("add_unique is cuckoo_add_unique in both engines", bytes(unique),
            pg.execute(f"SELECT ({chain})::bytea").fetchone()[0])
    r.equal("... SQLite too", bytes(unique), lite.execute(f"SELECT {chain}").fetchone()[0])


def psycopg_adapter(r, pg):
    """amq.psycopg.register: bloom and cuckoo load as amq.Filter and amq.Filter
    dumps as them, in text and binary."""
    conn = connect(DB)
    amq.psycopg.register(conn)
    f = conn.execute("SELECT bloom_agg(x) FROM generate_series(1, 100) x").fetchone()[0]
    r.check("a bloom column loads as amq.Filter (text)", isinstance(f, amq.Filter) and
            f == amq.bloom(range(1, 101)), type(f))
    c = conn.cursor(binary=True).execute(
        "SELECT cuckoo_agg(x) FROM generate_series(1, 100) x").fetchone()[0]
    r.check("a cuckoo column loads as amq.Filter (binary)", isinstance(c, amq.Filter) and
            c == amq.cuckoo(range(1, 101)), type(c))
    for placeholder in ("%s", "%t", "%b"):
        got = conn.execute(f"SELECT pg_typeof({placeholder})::text, pg_typeof({placeholder})::text,"
                           f" bloom_contains({placeholder}, 5), cuckoo_contains({placeholder}, 500)",
                           (f, c, f, c)).fetchone()
        r.equal(f"amq.Filter dumps as bloom or cuckoo by kind ({placeholder})", got,
                ("bloom", "cuckoo", True, False))
    conn.execute("CREATE TABLE stored (name text, b bloom, c cuckoo)")
    f.add(1000)
    conn.execute("INSERT INTO stored VALUES ('x', %s, %b)", (f, c))
    back = conn.execute("SELECT b, c, bloom_contains(b, 1000) FROM stored").fetchone()
    r.equal("stored and read back", back, (f, c, True))
    back = conn.cursor(binary=True).execute("SELECT b, c FROM stored").fetchone()
    r.equal("read back in binary", back, (f, c))
    with conn.cursor() as cur:
        with cur.copy("COPY stored (b) TO STDOUT (FORMAT binary)") as copy:
            copy.set_types(["bloom"])
            rows = list(copy.rows())
    r.equal("COPY out with set_types(['bloom'])", rows, [(f,)])
    e = None
    try:
        conn.execute("SELECT bloom_contains(%s, 1)", (c,))
    except psycopg.Error as err:
        e = err
    r.check("a cuckoo Filter where a bloom is expected: PostgreSQL refuses it", e is not None)
    conn.close()
    bare = "amq_python_bare"
    pg.execute(f"DROP DATABASE IF EXISTS {bare}")
    pg.execute(f"CREATE DATABASE {bare}")
    with connect(bare) as other:
        e = python_error(amq.psycopg.register, other)
        r.check("register without the extension: amq.Error saying so",
                e is not None and e.message == "amq is not installed in this database"
                and "CREATE EXTENSION amq" in e.hint, e)
        # A type named bloom in a schema ahead of amq's on the search_path
        # is never taken for amq's.
        other.execute("CREATE EXTENSION amq")
        other.execute("CREATE SCHEMA decoy")
        other.execute("CREATE DOMAIN decoy.bloom AS bytea")
        other.execute("SET search_path = decoy, public")
        amq.psycopg.register(other)
        got = other.execute("SELECT pg_typeof(%s)::oid = 'public.bloom'::regtype::oid,"
                            " pg_typeof(%s)::oid = 'decoy.bloom'::regtype::oid", (f, f)).fetchone()
        r.equal("register under a search_path with a decoy bloom type: amq's type", got,
                (True, False))


def command(r, pg, lite):
    """The amq command's files and literals in SQL."""
    ints = b"".join(b"%d\n" % i for i in range(0, 20000, 7))
    built = subprocess.run([sys.executable, "-m", "amq", "build", "--type", "int", "--fpr",
                            "0.001"], input=ints, capture_output=True, check=True).stdout
    r.equal("amq build --type int is bloom_agg in PostgreSQL", built, pg.execute(
        "SELECT bloom_agg(x, 0.001)::bytea FROM generate_series(0, 19999, 7) x").fetchone()[0])
    with open("/tmp/amq-python-test.amq", "wb") as out:
        out.write(built)
    literal = subprocess.run([sys.executable, "-m", "amq", "hex", "/tmp/amq-python-test.amq"],
                             capture_output=True, text=True, check=True).stdout.strip()
    r.equal("amq hex pastes into PostgreSQL", pg.execute(
        f"SELECT bloom_contains('{literal}'::bloom, 7), bloom_contains('{literal}', 8)"
    ).fetchone(), (True, False))
    literal = subprocess.run([sys.executable, "-m", "amq", "hex", "--sqlite",
                              "/tmp/amq-python-test.amq"],
                             capture_output=True, text=True, check=True).stdout.strip()
    r.equal("amq hex --sqlite pastes into SQLite", lite.execute(
        f"SELECT bloom_contains({literal}, 7), bloom_contains({literal}, 8)").fetchone(), (1, 0))


def main():
    with connect("postgres") as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DB}")
        admin.execute(f"CREATE DATABASE {DB}")
    pg = connect(DB)
    pg.execute("CREATE EXTENSION amq")
    lite = sqlite3.connect(":memory:")
    amq.load(lite)
    sections = [values_hash_and_probe, builders, errors, families, round_trips, command]
    Results().run(*[lambda r, s=s: s(r, pg, lite) for s in sections],
                  lambda r: psycopg_adapter(r, pg))


if __name__ == "__main__":
    main()
