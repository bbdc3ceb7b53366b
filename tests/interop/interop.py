"""Filters cross between PostgreSQL and SQLite byte for byte.

The same rows go into a PostgreSQL table and an SQLite table (integer, real,
text and blob columns, with duplicates and NULLs). For each column and each
way of building a filter (bloom_agg with its default layout, with an fpr,
with a capacity, with each layout named; cuckoo_agg, with a capacity, with
its layout named; bloom_new + bloom_add in both layouts), both
engines must produce identical bytes; then each engine probes the filter the
other built, and the answers must agree with its own. The bulk aggregates
(bloom_add_agg, cuckoo_add_agg, bloom_delete_agg, cuckoo_delete_agg) and
cuckoo_add_unique give identical bytes too, also on a filter the other engine
built. Prints one line per check and ends with "N passed, N failed".

Usage: interop.py PATH_TO_SQLITE_EXTENSION (PGHOST, PGPORT, PGUSER and
AMQ_PSQL name the PostgreSQL server and its psql).
"""

import csv
import io
import json
import os
import sqlite3
import sys

# psql and the tally of checks, shared with the other suites.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import pgsql  # noqa: E402
from harness import Results  # noqa: E402
import sample_rows  # noqa: E402

PSQL = os.environ.get("AMQ_PSQL", "psql")
DB = "amq_interop"


def psql(sql, db=DB):
    """Runs sql in psql; returns its unaligned, tuples-only output lines."""
    return pgsql.lines([PSQL], sql, ["-d", db])


def make_rows():
    """Deterministic rows: (id, int, real, text, blob), some values NULL."""
    words = ["alpha", "beta", "gamma", "déjà vu", "naïve", "東京", "emoji 🎉", "", " pad "]
    return sample_rows.make_rows(6000, words, small_ints=500, texts=3000, blob_bytes=24,
                                 huge_reals=True)


def load_postgres(rows):
    """Creates the database and table amq_rows and copies rows in as CSV."""
    psql(f"DROP DATABASE IF EXISTS {DB}; CREATE DATABASE {DB};", db="postgres")
    psql("CREATE EXTENSION amq; CREATE TABLE amq_rows "
         "(id int, i int8, r float8, t text, b bytea);")
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    for i, iv, rv, tv, bv in rows:
        writer.writerow([
            i, "" if iv is None else iv, "" if rv is None else repr(rv),
            "" if tv is None else tv, "" if bv is None else "\\x" + bv.hex()])
    # An unquoted empty CSV field is NULL (no generated text value is empty).
    pgsql.output(pgsql.run([PSQL], buf.getvalue(),
                           ["-d", DB, "-c", "COPY amq_rows FROM STDIN WITH (FORMAT csv)"],
                           tuples=False))


def load_sqlite(rows, extension):
    con = sqlite3.connect(":memory:")
    con.enable_load_extension(True)
    con.load_extension(extension)
    con.execute("CREATE TABLE amq_rows (id INTEGER, i INTEGER, r REAL, t TEXT, b BLOB)")
    con.executemany("INSERT INTO amq_rows VALUES (?, ?, ?, ?, ?)", rows)
    return con


# (name, SQL expression over column {c}); both engines speak the same SQL.
BUILDERS = [
    ("bloom_agg", "bloom_agg({c})"),
    ("bloom_agg fpr 0.001", "bloom_agg({c}, 0.001)"),
    ("bloom_agg capacity 20000", "bloom_agg({c}, 0.01, 20000)"),
    ("bloom_agg classic", "bloom_agg({c}, 0.01, NULL, 'classic')"),
    ("bloom_agg classic capacity 20000", "bloom_agg({c}, 0.005, 20000, 'classic')"),
    ("bloom_agg blocked capacity 9000", "bloom_agg({c}, 0.02, 9000, 'blocked')"),
    ("bloom_agg NULL layout", "bloom_agg({c}, 0.01, NULL, NULL)"),
    ("bloom_agg counting", "bloom_agg({c}, 0.01, NULL, 'counting')"),
    ("bloom_agg counting capacity 9000", "bloom_agg({c}, 0.02, 9000, 'counting')"),
    ("bloom_agg scalable capacity 500", "bloom_agg({c}, 0.01, 500, 'scalable')"),
    ("bloom_agg scalable", "bloom_agg({c}, 0.01, NULL, 'scalable')"),
    ("cuckoo_agg", "cuckoo_agg({c})"),
    ("cuckoo_agg capacity 20000", "cuckoo_agg({c}, 0.02, 20000)"),
    ("cuckoo_agg b4", "cuckoo_agg({c}, 0.001, NULL, 'b4')"),
    ("cuckoo_agg b2", "cuckoo_agg({c}, 0.001, NULL, 'b2')"),
    ("cuckoo_agg b8", "cuckoo_agg({c}, 0.001, NULL, 'b8')"),
    ("cuckoo_agg semisorted", "cuckoo_agg({c}, 0.001, NULL, 'semisorted')"),
    ("cuckoo_agg semisorted capacity 5400", "cuckoo_agg({c}, 0.01, 5400, 'semisorted')"),
    ("cuckoo_agg b2 capacity 6000", "cuckoo_agg({c}, 0.2, 6000, 'b2')"),
    ("cuckoo_agg default at fpr 0.1 (b2)", "cuckoo_agg({c}, 0.1)"),
]
COLUMNS = [("int", "i"), ("real", "r"), ("text", "t"), ("blob", "b")]


def pg_filter(expr):
    """Hex of the filter PostgreSQL builds with expr over amq_rows."""
    return psql(f"SELECT encode(({expr})::bytea, 'hex') FROM amq_rows;")[0]


def probe_values_pg(column):
    """Probe values: every row's value plus as many that were never added."""
    return {"i": "i + 1000000000007", "r": "r * 3 + 0.5", "t": "t || '~'",
            "b": "b || '\\xff'::bytea"}[column]


def probe_values_sqlite(column):
    # SQLite's || yields text even from blobs: cast back to a blob.
    return {"i": "i + 1000000000007", "r": "r * 3 + 0.5", "t": "t || '~'",
            "b": "CAST(b || X'ff' AS BLOB)"}[column]


def answers_pg(kind, filter_hex, column):
    """PostgreSQL's membership answers for a filter it did not build."""
    probe = probe_values_pg(column)
    lines = psql(
        f"SELECT string_agg(CASE WHEN {kind}_contains(f, v) THEN '1' ELSE '0' END, '' "
        f"ORDER BY id, n) FROM (SELECT '\\x{filter_hex}'::{kind} AS f) s, "
        f"(SELECT id, 0 AS n, {column} AS v FROM amq_rows WHERE {column} IS NOT NULL "
        f" UNION ALL SELECT id, 1, {probe} FROM amq_rows WHERE {column} IS NOT NULL) p;")
    return lines[0]


def answers_sqlite(con, kind, filter_bytes, column):
    probe = probe_values_sqlite(column)
    rows = con.execute(
        f"SELECT {kind}_contains(?1, v) FROM "
        f"(SELECT id, 0 AS n, {column} AS v FROM amq_rows WHERE {column} IS NOT NULL "
        f" UNION ALL SELECT id, 1, {probe} FROM amq_rows WHERE {column} IS NOT NULL) "
        f"ORDER BY id, n", (filter_bytes,)).fetchall()
    return "".join(str(r[0]) for r in rows)


# (name, start filter): bulk maintenance of an existing filter by the
# aggregate the name begins with.
BULK = [
    ("bloom_add_agg blocked", "bloom_new(20000, 0.01)"),
    ("bloom_add_agg classic", "bloom_new(20000, 0.01, 'classic')"),
    ("bloom_add_agg counting", "bloom_new(20000, 0.01, 'counting')"),
    ("bloom_add_agg scalable (grows)", "bloom_new(500, 0.01, 'scalable')"),
    ("cuckoo_add_agg", "cuckoo_new(20000)"),
]


def first_rows(kind, column):
    """The rows a bulk aggregate of kind reads: all of them for Bloom
    filters; for cuckoo filters the first row of each value, since a cuckoo
    filter holds at most 8 copies of one value (the columns repeat some
    values hundreds of times)."""
    if kind == "bloom":
        return "amq_rows"
    return (f"(SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY {column} ORDER BY id) "
            "AS k FROM amq_rows) d WHERE k = 1) f")


def bulk_maintenance(results, con):
    """The bulk aggregates give the same bytes in both engines, in row order,
    also when each changes a filter the other built; cuckoo_add_unique too."""
    for type_name, column in COLUMNS:
        for name, start in BULK:
            agg = name.split()[0]
            rows = first_rows(agg.split("_")[0], column)
            pg_hex = psql(f"SELECT encode({agg}({start}, {column} ORDER BY id)::bytea, 'hex') "
                          f"FROM {rows};")[0]
            lite = con.execute(f"SELECT hex({agg}({start}, {column})) FROM "
                               f"(SELECT * FROM {rows} ORDER BY id)").fetchone()[0].lower()
            results.check(f"{type_name} {name}: identical bytes", pg_hex == lite,
                          f"{len(pg_hex) // 2} vs {len(lite) // 2} bytes")
    # Each engine deletes half the rows from the filter the other built.
    for kind, build in [("cuckoo", "cuckoo_add_agg(cuckoo_new(20000), {c})"),
                        ("bloom", "bloom_add_agg(bloom_new(20000, 0.01, 'counting'), {c})")]:
        for type_name, column in COLUMNS:
            rows = first_rows(kind, column)
            pg_full = psql(f"SELECT encode({build.format(c=column + ' ORDER BY id')}::bytea, 'hex') "
                           f"FROM {rows};")[0]
            lite_full = con.execute(f"SELECT hex({build.format(c=column)}) FROM "
                                    f"(SELECT * FROM {rows} ORDER BY id)").fetchone()[0].lower()
            lite_del = con.execute(
                f"SELECT hex({kind}_delete_agg(?1, {column})) FROM "
                f"(SELECT * FROM {rows} WHERE id % 2 = 0 ORDER BY id)",
                (bytes.fromhex(pg_full),)).fetchone()[0].lower()
            pg_del = psql(f"SELECT encode({kind}_delete_agg('\\x{lite_full}'::{kind}, {column} "
                          f"ORDER BY id)::bytea, 'hex') FROM {rows} WHERE id % 2 = 0;")[0]
            results.check(f"{type_name} {kind}_delete_agg of the other engine's filter: identical "
                          "bytes", pg_full == lite_full and lite_del == pg_del)
    # cuckoo_add_unique over the same values in the same order.
    chain = "cuckoo_new(100, 0.001)"
    for v in ["42", "77", "42", "2.5", "77", "42.0"]:
        chain = f"cuckoo_add_unique({chain}, {v})"
    pg_hex = psql(f"SELECT encode(({chain})::bytea, 'hex');")[0]
    lite_hex = con.execute(f"SELECT hex({chain})").fetchone()[0].lower()
    items = json.loads(psql(f"SELECT cuckoo_info({chain});")[0])["items"]
    results.check("cuckoo_add_unique chain: identical bytes, 3 distinct values stored once",
                  pg_hex == lite_hex and items == 3, f"{items} items")


def main():
    extension = sys.argv[1]
    rows = make_rows()
    results = Results()
    load_postgres(rows)
    con = load_sqlite(rows, extension)

    pg_count = psql("SELECT count(i), count(r), count(t), count(b), "
                    "count(DISTINCT t) FROM amq_rows;")[0]
    lite_count = "|".join(str(x) for x in con.execute(
        "SELECT count(i), count(r), count(t), count(b), count(DISTINCT t) FROM amq_rows"
    ).fetchone())
    results.check("both engines hold the same rows", pg_count == lite_count,
                  f"{pg_count} vs {lite_count}")
    pg_hash = psql("SELECT amq_hash(i) FROM amq_rows ORDER BY id;"
                   " SELECT amq_hash(r) FROM amq_rows ORDER BY id;"
                   " SELECT amq_hash(t) FROM amq_rows ORDER BY id;"
                   " SELECT amq_hash(b) FROM amq_rows ORDER BY id;")
    lite_hash = []
    for col in "irtb":
        lite_hash += ["" if h is None else str(h) for (h,) in
                      con.execute(f"SELECT amq_hash({col}) FROM amq_rows ORDER BY id")]
    results.check("amq_hash agrees on every value", pg_hash == lite_hash)

    for type_name, column in COLUMNS:
        for build_name, expr in BUILDERS:
            kind = "bloom" if build_name.startswith("bloom") else "cuckoo"
            name = f"{type_name} {build_name}"
            pg_hex = pg_filter(expr.format(c=column))
            lite_bytes = con.execute(
                f"SELECT {expr.format(c=column)} FROM amq_rows").fetchone()[0]
            results.check(f"{name}: identical bytes", pg_hex == lite_bytes.hex(),
                          f"{len(pg_hex) // 2} vs {len(lite_bytes)} bytes")
            pg_bytes = bytes.fromhex(pg_hex)
            # Each engine reads the other's filter and answers like the other.
            pg_reads_lite = answers_pg(kind, lite_bytes.hex(), column)
            lite_reads_pg = answers_sqlite(con, kind, pg_bytes, column)
            results.check(f"{name}: SQLite answers for the PostgreSQL filter match "
                          "PostgreSQL's", lite_reads_pg == pg_reads_lite)
            members = pg_reads_lite[0::2]
            results.check(f"{name}: every member found in both", "0" not in members,
                          f"{members.count('0')} misses")

    # bloom_new + bloom_add (both layouts) and cuckoo_add/cuckoo_delete.
    chains = [
        ("bloom_new classic + adds",
         "bloom_add(bloom_add(bloom_add(bloom_new(500, 0.01, 'classic'), 42), 1001), 2.5)"),
        ("bloom_new default layout + adds",
         "bloom_add(bloom_add(bloom_add(bloom_new(500, 0.01), 42), 1001), 2.5)"),
        ("bloom_new blocked + adds",
         "bloom_add(bloom_add(bloom_add(bloom_new(500, 0.01, 'blocked'), 42), 1001), 2.5)"),
        ("bloom_new counting + adds + delete",
         "bloom_delete(bloom_add(bloom_add(bloom_add(bloom_add(bloom_new(500, 0.01, 'counting'),"
         " 42), 42), 1001), 2.5), 42)"),
        ("bloom_new scalable expansion 3 + adds past its first link",
         "bloom_add(bloom_add(bloom_add(bloom_add(bloom_new(2, 0.01, 'scalable', 3), 42),"
         " 1001), 2.5), 7)"),
        ("cuckoo_new + adds + delete",
         "cuckoo_delete(cuckoo_add(cuckoo_add(cuckoo_add(cuckoo_new(500), 42), 42), 1001), 42)"),
    ]
    # Every cuckoo layout filled to its capacity and past it, which kicks
    # fingerprints along the walk, with copies and a delete on the way.
    for layout in ("b2", "b4", "b8", "semisorted"):
        expr = f"cuckoo_new(12, 0.05, '{layout}')"
        for v in list(range(1, 14)) + [3, 3, "1001", 2.5]:
            expr = f"cuckoo_add({expr}, {v})"
        chains.append((f"cuckoo_new {layout} + 17 adds + delete", f"cuckoo_delete({expr}, 3)"))
    for name, expr in chains:
        pg_hex = psql(f"SELECT encode(({expr})::bytea, 'hex');")[0]
        lite_hex = con.execute(f"SELECT hex({expr})").fetchone()[0].lower()
        results.check(f"{name}: identical bytes", pg_hex == lite_hex)
    # A filter of numbers and text (format version 4 records both families):
    # SQLite's aggregate over a mixed column is PostgreSQL's union of one
    # aggregate per type, and each engine answers both families in the other's.
    lite_mixed = con.execute(
        "SELECT hex(bloom_agg(v, 0.01, 20000)) FROM (SELECT i AS v FROM amq_rows "
        "UNION ALL SELECT t FROM amq_rows)").fetchone()[0].lower()
    pg_mixed = psql("SELECT encode(bloom_union((SELECT bloom_agg(i, 0.01, 20000) FROM amq_rows), "
                    "(SELECT bloom_agg(t, 0.01, 20000) FROM amq_rows))::bytea, 'hex');")[0]
    pg_families = psql(f"SELECT bloom_info('\\x{lite_mixed}'::bloom)->>'families';")[0]
    results.check("mixed column: SQLite bloom_agg = PostgreSQL bloom_union per type, "
                  "families numbers and text",
                  lite_mixed == pg_mixed and pg_families == '["numbers", "text"]', pg_families)
    pg_found = psql(f"SELECT count(*) FILTER (WHERE NOT bloom_contains('\\x{lite_mixed}'::bloom, i))"
                    f" + count(*) FILTER (WHERE NOT bloom_contains('\\x{lite_mixed}'::bloom, t))"
                    " FROM amq_rows;")[0]
    results.check("mixed column: PostgreSQL finds every integer and text member", pg_found == "0",
                  pg_found)
    # A filter from one engine, changed in the other, equals the change made at home.
    lite_union = con.execute(
        "SELECT hex(bloom_union((SELECT bloom_agg(i, 0.01, 9000) FROM amq_rows WHERE id < 3000),"
        " (SELECT bloom_agg(i, 0.01, 9000) FROM amq_rows WHERE id >= 3000)))").fetchone()[0]
    pg_union = psql("SELECT encode(bloom_agg(i, 0.01, 9000)::bytea, 'hex') FROM amq_rows;")[0]
    results.check("SQLite bloom_union of two halves = PostgreSQL bloom_agg of all",
                  lite_union.lower() == pg_union)
    pg_cuckoo = psql("SELECT encode(cuckoo_agg(t)::bytea, 'hex') FROM amq_rows;")[0]
    lite_deleted = con.execute("SELECT hex(cuckoo_delete(?1, 'alpha-1'))",
                               (bytes.fromhex(pg_cuckoo),)).fetchone()[0].lower()
    pg_deleted = psql(f"SELECT encode(cuckoo_delete('\\x{pg_cuckoo}'::cuckoo, "
                      "'alpha-1')::bytea, 'hex');")[0]
    results.check("cuckoo_delete of a PostgreSQL filter: same bytes in SQLite",
                  lite_deleted == pg_deleted)
    # Counting: the frequencies and a delete of the other engine's filter.
    pg_counting = psql("SELECT encode(bloom_agg(i % 50, 0.01, NULL, 'counting')::bytea, 'hex') "
                       "FROM amq_rows;")[0]
    lite_counting = con.execute("SELECT hex(bloom_agg(i % 50, 0.01, NULL, 'counting')) "
                                "FROM amq_rows").fetchone()[0].lower()
    results.check("counting bloom_agg with duplicate rows: identical bytes",
                  pg_counting == lite_counting)
    lite_freq = [f for (f,) in con.execute(
        "SELECT bloom_frequency(?1, i % 50) FROM amq_rows WHERE i IS NOT NULL ORDER BY id",
        (bytes.fromhex(pg_counting),))]
    pg_freq = [int(f) for f in psql(
        f"SELECT bloom_frequency('\\x{lite_counting}'::bloom, i % 50) FROM amq_rows "
        "WHERE i IS NOT NULL ORDER BY id;")]
    results.check("bloom_frequency agrees across engines", lite_freq == pg_freq and len(pg_freq) > 0)
    lite_del = con.execute("SELECT hex(bloom_delete(?1, 7))",
                           (bytes.fromhex(pg_counting),)).fetchone()[0].lower()
    pg_del = psql(f"SELECT encode(bloom_delete('\\x{pg_counting}'::bloom, 7)::bytea, 'hex');")[0]
    results.check("bloom_delete of a PostgreSQL filter: same bytes in SQLite", lite_del == pg_del)
    pg_info = psql("SELECT bloom_info(bloom_agg(t)) FROM amq_rows;")[0]
    lite_info = con.execute("SELECT bloom_info(bloom_agg(t)) FROM amq_rows").fetchone()[0]
    results.check("bloom_info agrees", json.loads(pg_info) == json.loads(lite_info),
                  f"{pg_info} vs {lite_info}")

    bulk_maintenance(results, con)

    psql(f"DROP DATABASE {DB};", db="postgres")
    print(f"{results.passed} passed, {results.failed} failed")
    return 0 if results.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
