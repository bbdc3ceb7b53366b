"""Every filter kind of core/sql/function_list.h, differentially in
PostgreSQL and SQLite (issue #23): a new kind is tested in both engines
without a test file of its own.

The kinds and their functions are read from the table: each AMQ_SQL_TYPE(kind)
row is a kind, and its AMQ_SQL_FUNCTION / AMQ_SQL_AGGREGATE rows name its
functions by op. A kind must have AGG, CONTAINS and INFO; NEW, ADD, ESTIMATE,
FPR and UNION are tested when it has them. No function name is typed here.

The data, the same in both engines: 20,000 distinct integers (with 2,000 of
them twice and NULL rows) and 5,000 distinct texts (with 500 twice and
NULL rows), each with 100,000 values that are not members. For each kind,
each data set and each fpr (the aggregate's default, 0.001, 0.05):

  - the aggregate builds identical bytes in both engines;
  - each engine answers <contains> for every member and every non-member on
    its own filter and on the other engine's filter (the bytes of one engine
    sent to the other: a PostgreSQL literal from SQLite's hex, SQLite's BLOB
    from PostgreSQL's hex): the four answer strings are equal, no member is
    missed, and the rate of false positives over the 100,000 non-members is
    at most 1.5 p + 3 sqrt(p (1 - p) / n), p the requested rate (0.01 for
    the default, README), n = 100,000: the factor 1.5 is the slack a sizing
    may leave against its target (the table's layouts size for p within a
    few tens of percent), the 3 standard deviations of the binomial the
    noise of measuring it on n probes (a bound a correct filter misses with
    probability about 0.1%);
  - <info> JSON is equal across engines, read on each engine's own filter and
    on the other's;
  - <estimate> (when the kind has it) is within 5% of the distinct count and
    equal across engines; <fpr> (when it has it) agrees across engines
    (relative 1e-6: PostgreSQL's real is a float4) and the measured rate is
    within 1.5 fpr + 3 standard deviations of it;
  - <union> (when it has it, and the aggregate takes a capacity): the union
    of the filters of the two halves, one built in each engine, in either
    engine, is the bytes of the filter of all the values;
and once per kind: <agg> of only NULLs gives the same non-NULL bytes in both
engines; <new> with its required arguments and <add> of members give
identical bytes, and each engine finds the added values in the other's.

Usage: kinds.py PATH_TO_SQLITE_EXTENSION (PGHOST, PGPORT, PGUSER and AMQ_PSQL
name the PostgreSQL server and its psql). Ends with "N passed, N failed".
"""

import csv
import io
import json
import math
import os
import random
import re
import sqlite3
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import pgsql  # noqa: E402
from harness import Results  # noqa: E402

PSQL = os.environ.get("AMQ_PSQL", "psql")
DB = "amq_kinds"
TABLE = os.path.join(HERE, "..", "..", "core", "sql", "function_list.h")
NON_MEMBERS = 100_000
DEFAULT_FPR = 0.01  # README: fpr defaults to 0.01
FPRS = [None, 0.001, 0.05]

ROW = re.compile(r"^AMQ_SQL_(FUNCTION|AGGREGATE)\((\w+),\s*(\w+),\s*(\w+),\s*(\d+),\s*(\d+),"
                 r"\s*\"([^\"]*)\",\s*(\w+),\s*(\w+)\)", re.M)
TYPE = re.compile(r"^AMQ_SQL_TYPE\((\w+)\)", re.M)


def read_table(path=TABLE):
    """{kind: {op: row}} from the function table; a row is a dict with
    name, min_args, max_args, arguments (list of names, optional ones
    included) and returns."""
    text = open(path, encoding="utf-8").read()
    kinds = {k: {} for k in TYPE.findall(text)}
    for what, name, kind, op, lo, hi, args, returns, _ in ROW.findall(text):
        if kind in kinds:
            kinds[kind][op] = {"name": name, "aggregate": what == "AGGREGATE",
                               "min_args": int(lo), "max_args": int(hi),
                               "arguments": re.findall(r"\w+", args), "returns": returns}
    return kinds


def psql(sql, db=DB):
    return pgsql.lines([PSQL], sql, ["-d", db])


def make_data(seed=23):
    """{set name: (column type, rows)}: rows are (id, member, value), members
    (some twice, some NULL) then non-members, in id order."""
    rng = random.Random(seed)
    ints = rng.sample(range(-10**15, 10**15), 20_000 + NON_MEMBERS)
    int_members, int_others = ints[:20_000], ints[20_000:]
    text_members = [f"member {i} {rng.randrange(10**9)}" for i in range(5_000)]
    text_others = [f"other {i} {rng.randrange(10**9)}" for i in range(NON_MEMBERS)]
    sets = {}
    for name, sqltype, members, others, twice in [("int", "int8", int_members, int_others, 2000),
                                                  ("text", "text", text_members, text_others, 500)]:
        values = members + members[:twice] + [None] * 37
        rng.shuffle(values)
        rows = [(i, 1, v) for i, v in enumerate(values)]
        rows += [(len(values) + i, 0, v) for i, v in enumerate(others)]
        sets[name] = (sqltype, rows, len(members))
    return sets


def load(sets, extension):
    psql(f"DROP DATABASE IF EXISTS {DB}; CREATE DATABASE {DB};", db="postgres")
    psql("CREATE EXTENSION amq;")
    con = sqlite3.connect(":memory:")
    con.enable_load_extension(True)
    con.load_extension(extension)
    for name, (sqltype, rows, _) in sets.items():
        psql(f"CREATE TABLE d_{name} (id int, member int, v {sqltype});")
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        for i, m, v in rows:
            writer.writerow([i, m, "" if v is None else v])  # unquoted empty = NULL
        pgsql.output(pgsql.run([PSQL], buf.getvalue(),
                               ["-d", DB, "-c", f"COPY d_{name} FROM STDIN WITH (FORMAT csv)"],
                               tuples=False))
        con.execute(f"CREATE TABLE d_{name} (id INTEGER, member INTEGER, v)")
        con.executemany(f"INSERT INTO d_{name} VALUES (?, ?, ?)", rows)
    return con


def pg_hex(expr, source):
    return psql(f"SELECT encode(({expr})::bytea, 'hex') FROM {source};")[0]


def lite_hex(con, expr, source, params=()):
    return con.execute(f"SELECT hex({expr}) FROM {source}", params).fetchone()[0].lower()


def literal(kind, hexbytes):
    return f"'\\x{hexbytes}'::{kind}"


def answers_pg(contains, filter_sql, table):
    """'1'/'0' per probe (every non-NULL row, members first) in PostgreSQL."""
    return psql(f"SELECT string_agg(CASE WHEN {contains}(f, v) THEN '1' ELSE '0' END, '' "
                f"ORDER BY id) FROM (SELECT {filter_sql} AS f) s, {table} "
                f"WHERE v IS NOT NULL;")[0]


def answers_sqlite(con, contains, filter_sql, table, params=()):
    rows = con.execute(f"SELECT {contains}(f, v) FROM (SELECT {filter_sql} AS f), {table} "
                       f"WHERE v IS NOT NULL ORDER BY id", params).fetchall()
    return "".join(str(r[0]) for r in rows)


def bound(p, n=NON_MEMBERS):
    """The most false positives per probe a filter of rate p may show on n
    probes: 1.5 p for the sizing, 3 standard deviations for the sample."""
    return 1.5 * p + 3 * math.sqrt(p * (1 - p) / n)


def call(row, values):
    """SQL calling row with its required arguments taken from values (by
    argument name)."""
    args = row["arguments"][:row["min_args"]]
    return f"{row['name']}({', '.join(str(values[a]) for a in args)})"


def check_build(results, con, kind, ops, set_name, table, distinct, fpr):
    agg, contains, info = ops["AGG"]["name"], ops["CONTAINS"]["name"], ops["INFO"]["name"]
    label = f"{kind} {set_name} {agg}" + ("" if fpr is None else f" fpr {fpr}")
    expr = f"{agg}(v)" if fpr is None else f"{agg}(v, {fpr})"
    members = f"{table} WHERE member = 1"
    pg = pg_hex(expr, members)
    lite = lite_hex(con, expr, members)
    results.check(f"{label}: identical bytes", pg == lite,
                  f"{len(pg) // 2} vs {len(lite) // 2} bytes")
    # Each engine on its own filter and on the other's.
    answers = {
        "PostgreSQL own": answers_pg(contains, f"(SELECT {expr} FROM {members})", table),
        "PostgreSQL reads SQLite's": answers_pg(contains, literal(kind, lite), table),
        "SQLite own": answers_sqlite(con, contains, f"(SELECT {expr} FROM {members})", table),
        "SQLite reads PostgreSQL's": answers_sqlite(con, contains, "?1", table,
                                                    (bytes.fromhex(pg),)),
    }
    want = answers["PostgreSQL own"]
    results.check(f"{label}: every probe answered the same in both engines, on both filters",
                  all(a == want for a in answers.values()) and len(want) > 0,
                  {k: (len(a), a.count("1")) for k, a in answers.items()})
    flags = [m for (m,) in con.execute(f"SELECT member FROM {table} WHERE v IS NOT NULL "
                                       "ORDER BY id")]
    member_answers = [a for a, m in zip(want, flags) if m == 1]
    other_answers = [a for a, m in zip(want, flags) if m == 0]
    results.check(f"{label}: no false negative", "0" not in member_answers,
                  f"{member_answers.count('0')} of {len(member_answers)} members missed")
    rate = other_answers.count("1") / len(other_answers)
    p = DEFAULT_FPR if fpr is None else fpr
    results.check(f"{label}: false-positive rate {rate:.5f} <= {bound(p):.5f} (requested {p})",
                  len(other_answers) == NON_MEMBERS and rate <= bound(p),
                  f"{len(other_answers)} non-members")
    # info: each engine on its own and on the other's filter.
    infos = [psql(f"SELECT {info}({literal(kind, h)});")[0] for h in (pg, lite)]
    infos += [con.execute(f"SELECT {info}(?1)", (bytes.fromhex(h),)).fetchone()[0]
              for h in (pg, lite)]
    parsed = [json.loads(i) for i in infos]
    results.check(f"{label}: {info} equal across engines", all(j == parsed[0] for j in parsed),
                  infos)
    if "ESTIMATE" in ops:
        name = ops["ESTIMATE"]["name"]
        pg_est = int(psql(f"SELECT {name}({literal(kind, lite)});")[0])
        lite_est = con.execute(f"SELECT {name}(?1)", (bytes.fromhex(pg),)).fetchone()[0]
        results.check(f"{label}: {name} {pg_est} within 5% of {distinct}, same in both",
                      pg_est == lite_est and abs(pg_est - distinct) <= 0.05 * distinct,
                      f"PostgreSQL {pg_est}, SQLite {lite_est}")
    if "FPR" in ops:
        name = ops["FPR"]["name"]
        pg_fpr = float(psql(f"SELECT {name}({literal(kind, lite)});")[0])
        lite_fpr = con.execute(f"SELECT {name}(?1)", (bytes.fromhex(pg),)).fetchone()[0]
        results.check(f"{label}: {name} same in both engines",
                      math.isclose(pg_fpr, lite_fpr, rel_tol=1e-6),
                      f"PostgreSQL {pg_fpr}, SQLite {lite_fpr}")
        results.check(f"{label}: measured rate {rate:.5f} close to {name} {lite_fpr:.5f}",
                      rate <= bound(lite_fpr) and rate >= lite_fpr / 1.5 - 3 * math.sqrt(
                          lite_fpr * (1 - lite_fpr) / NON_MEMBERS))
    agg_args = ops["AGG"]["arguments"]
    if "UNION" in ops and "capacity" in agg_args and "fpr" in agg_args:
        union = ops["UNION"]["name"]
        cap = distinct + 100
        sized = f"{agg}(v, {DEFAULT_FPR if fpr is None else fpr}, {cap})"
        full = pg_hex(sized, members)
        half_a = pg_hex(sized, f"{members} AND id % 2 = 0")
        half_b = lite_hex(con, sized, f"{members} AND id % 2 = 1")
        pg_union = pg_hex(f"{union}({literal(kind, half_a)}, {literal(kind, half_b)})",
                          "(SELECT 1) one")
        lite_union = con.execute(f"SELECT hex({union}(?1, ?2))",
                                 (bytes.fromhex(half_a), bytes.fromhex(half_b))
                                 ).fetchone()[0].lower()
        results.check(f"{label}: {union} of halves built in PostgreSQL and SQLite = {agg} of "
                      "all, in both", pg_union == full and lite_union == full)


def check_kind(results, con, kind, ops, sets):
    missing = [op for op in ("AGG", "CONTAINS", "INFO") if op not in ops]
    if not results.check(f"{kind}: has AGG, CONTAINS and INFO in the table", not missing,
                         f"missing {missing}"):
        return
    agg = ops["AGG"]["name"]
    nulls = "(SELECT NULL::int8 AS v FROM generate_series(1, 3)) n"
    pg_null = pg_hex(f"{agg}(v)", nulls)
    lite_null = lite_hex(con, f"{agg}(v)", "(SELECT NULL AS v UNION ALL SELECT NULL)")
    results.check(f"{kind}: {agg} of only NULLs gives the same non-NULL filter in both",
                  pg_null == lite_null and pg_null != "", f"{pg_null!r} vs {lite_null!r}")
    for set_name, (_, _, distinct) in sets.items():
        for fpr in FPRS:
            if fpr is not None and "fpr" not in ops["AGG"]["arguments"]:
                continue
            check_build(results, con, kind, ops, set_name, f"d_{set_name}", distinct, fpr)
    if "NEW" in ops and "ADD" in ops:
        new, add, contains = ops["NEW"]["name"], ops["ADD"]["name"], ops["CONTAINS"]["name"]
        # An empty filter takes its first add's family; then the same bytes
        # in both engines, and each engine finds every value in the other's.
        for family, added in (("numbers", [42, 2.5, -7]), ("text", ["'forty-two'", "'x'"])):
            expr = call(ops["NEW"], {"capacity": 1000, "fpr": DEFAULT_FPR})
            for v in added:
                expr = call(ops["ADD"], {"filter": expr, "value": v})
            pg = psql(f"SELECT encode(({expr})::bytea, 'hex');")[0]
            lite = con.execute(f"SELECT hex({expr})").fetchone()[0].lower()
            results.check(f"{kind}: {new} + {add} x{len(added)} of {family}: identical bytes",
                          pg == lite)
            pg_found = [psql(f"SELECT {contains}({literal(kind, lite)}, {v});")[0]
                        for v in added]
            lite_found = [con.execute(f"SELECT {contains}(?1, {v})",
                                      (bytes.fromhex(pg),)).fetchone()[0] for v in added]
            results.check(f"{kind}: the added {family} found by each engine in the other's filter",
                          pg_found == ["t"] * len(added) and lite_found == [1] * len(added),
                          f"{pg_found} {lite_found}")
            # A value of the other family is the same error in both engines.
            other = "'42'" if family == "numbers" else "42"
            try:
                psql(f"SELECT {contains}({literal(kind, lite)}, {other});")
                pg_error = ""
            except RuntimeError as e:
                pg_error = str(e)
            try:
                con.execute(f"SELECT {contains}(?1, {other})", (bytes.fromhex(pg),))
                lite_error = ""
            except sqlite3.Error as e:
                lite_error = str(e)
            message = (f"{contains}: value: the filter holds {family}, got "
                       f"{'text' if family == 'numbers' else 'number'} {other}")
            results.check(f"{kind}: a {family} filter probed with {other}: the same message",
                          f"ERROR:  {message}\n" in pg_error + "\n" and
                          lite_error.startswith(message + ": cast the value"),
                          f"{pg_error!r} / {lite_error!r}")


def main():
    extension = sys.argv[1]
    kinds = read_table()
    results = Results()
    results.check(f"the table declares filter kinds ({', '.join(kinds)})", len(kinds) > 0)
    sets = make_data()
    con = load(sets, extension)
    counts = {name: psql(f"SELECT count(*), count(v), count(DISTINCT v) FROM d_{name} "
                         "WHERE member = 1;")[0] for name in sets}
    for name, (_, _, distinct) in sets.items():
        lite = "|".join(str(x) for x in con.execute(
            f"SELECT count(*), count(v), count(DISTINCT v) FROM d_{name} WHERE member = 1"
        ).fetchone())
        results.check(f"{name}: both engines hold the same members ({lite})",
                      counts[name] == lite and lite.endswith(f"|{distinct}"), counts[name])
    for kind, ops in kinds.items():
        try:
            check_kind(results, con, kind, ops, sets)
        except Exception as e:  # pylint: disable=broad-except
            # A kind an engine cannot run (a function or type missing) is one
            # failure; the other kinds are still tested.
            results.check(f"{kind}: its checks ran to the end", False, f"{type(e).__name__}: {e}")
    psql(f"DROP DATABASE {DB};", db="postgres")
    print(f"{results.passed} passed, {results.failed} failed")
    return 0 if results.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
