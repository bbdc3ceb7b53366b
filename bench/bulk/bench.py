"""Bulk maintenance of a stored filter, in SQLite and PostgreSQL (driven by
bench/bulk/run.sh): 10,000 distinct values added to a stored filter of about
1 MiB, a Bloom filter (blocked) and a cuckoo filter, two ways:

  one-by-one  one UPDATE ... SET f = bloom_add(f, ?) per value, all in one
              transaction (what a row trigger or a loop in the application
              does): each copies, changes, seals and writes the whole filter;
  bulk        one UPDATE ... SET f = (SELECT bloom_add_agg(f, x) FROM vals):
              the filter copied once, sealed once, written once. In SQLite
              also with the filter bound as a parameter, since SQLite copies
              a column's blob for every row that reads it.

Each run starts from the same stored filter; the runs of each form are
interleaved (bulk, one-by-one, bulk, ...) so drift falls on both alike, and
the medians and their ratio are printed as Markdown. Every form must leave
the same bytes (checked): the bulk forms give the fold's result, in row
order. Times are the client's wall clock around BEGIN ... COMMIT.

Usage: bench.py EXTENSION [--values N] [--runs N] [--engine sqlite|postgres|both]
(PostgreSQL: PGHOST, PGPORT, PGUSER and AMQ_PSQL name the server and psql.)
"""

import argparse
import os
import random
import re
import sqlite3
import statistics
import subprocess
import tempfile
import time

PSQL = os.environ.get("AMQ_PSQL", "psql")
DB = "amq_bulk_bench"
# About 1 MiB each: a blocked Bloom filter for 875,000 values at 1% (1,086,592
# bytes) and a cuckoo filter for 800,000 values at 1% (1,055,008 bytes).
STARTS = {"bloom": "bloom_new(875000, 0.01)", "cuckoo": "cuckoo_new(800000, 0.01)"}


def distinct_values(n):
    return random.Random(20261123).sample(range(1, 10**12), n)


def median_ms(samples):
    return statistics.median(samples) * 1000


# ---- SQLite ----------------------------------------------------------------

class Lite:
    def __init__(self, extension, values):
        self.dir = tempfile.TemporaryDirectory()
        self.db = sqlite3.connect(os.path.join(self.dir.name, "bench.db"), isolation_level=None)
        self.db.enable_load_extension(True)
        self.db.load_extension(extension)
        self.db.execute("CREATE TABLE filters(id INTEGER PRIMARY KEY, f BLOB)")
        self.db.execute("CREATE TABLE vals(id INTEGER PRIMARY KEY, x INTEGER)")
        self.db.executemany("INSERT INTO vals(x) VALUES (?)", [(v,) for v in values])
        self.values = values

    def reset(self, kind):
        self.db.execute("DELETE FROM filters")
        self.db.execute(f"INSERT INTO filters VALUES (1, {STARTS[kind]})")
        self.db.execute("VACUUM")

    def size(self):
        return self.db.execute("SELECT length(f) FROM filters").fetchone()[0]

    def stored(self):
        return self.db.execute("SELECT f FROM filters").fetchone()[0]

    def one_by_one(self, kind):
        start = time.perf_counter()
        self.db.execute("BEGIN")
        for v in self.values:
            self.db.execute(f"UPDATE filters SET f = {kind}_add(f, ?) WHERE id = 1", (v,))
        self.db.execute("COMMIT")
        return time.perf_counter() - start

    def bulk_column(self, kind):
        start = time.perf_counter()
        self.db.execute("BEGIN")
        self.db.execute(f"UPDATE filters SET f = (SELECT {kind}_add_agg(filters.f, x) FROM "
                        "(SELECT x FROM vals ORDER BY id)) WHERE id = 1")
        self.db.execute("COMMIT")
        return time.perf_counter() - start

    def bulk_bound(self, kind):
        start = time.perf_counter()
        self.db.execute("BEGIN")
        f = self.db.execute("SELECT f FROM filters WHERE id = 1").fetchone()[0]
        self.db.execute(f"UPDATE filters SET f = (SELECT {kind}_add_agg(?1, x) FROM "
                        "(SELECT x FROM vals ORDER BY id)) WHERE id = 1", (f,))
        self.db.execute("COMMIT")
        return time.perf_counter() - start


# ---- PostgreSQL ------------------------------------------------------------

def psql(sql, db=DB):
    out = subprocess.run([PSQL, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", db],
                         input=sql, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip()[:2000])
    return out.stdout.splitlines()


class Pg:
    def __init__(self, values):
        psql(f"DROP DATABASE IF EXISTS {DB}; CREATE DATABASE {DB};", db="postgres")
        psql("CREATE EXTENSION amq; CREATE TABLE filters(id int PRIMARY KEY, f bloom);"
             "CREATE TABLE cfilters(id int PRIMARY KEY, f cuckoo);"
             "CREATE TABLE vals(id int PRIMARY KEY, x bigint);")
        psql("COPY vals FROM STDIN;\n" +
             "".join(f"{i}\t{v}\n" for i, v in enumerate(values, 1)) + "\\.\n")
        self.values = values
        self.table = {"bloom": "filters", "cuckoo": "cfilters"}

    def reset(self, kind):
        t = self.table[kind]
        psql(f"TRUNCATE {t}; INSERT INTO {t} VALUES (1, {STARTS[kind]}); VACUUM {t};")

    def size(self, kind):
        return int(psql(f"SELECT octet_length(f::bytea) FROM {self.table[kind]};")[0])

    def stored(self, kind):
        return psql(f"SELECT md5(f::bytea) FROM {self.table[kind]};")[0]

    @staticmethod
    def timed(statements):
        """Seconds between two server clock readings around statements, in
        one session: round trips and COMMIT included, psql's start not."""
        lines = psql("SELECT extract(epoch FROM clock_timestamp());\n" + statements +
                     "\nSELECT extract(epoch FROM clock_timestamp());")
        stamps = [float(x) for x in lines if re.fullmatch(r"[0-9.]+", x)]
        return stamps[-1] - stamps[0]

    def one_by_one(self, kind):
        t = self.table[kind]
        return self.timed("BEGIN;\n" + "".join(
            f"UPDATE {t} SET f = {kind}_add(f, {v}) WHERE id = 1;\n" for v in self.values) +
            "COMMIT;")

    def bulk_column(self, kind):
        t = self.table[kind]
        return self.timed(f"BEGIN;\nUPDATE {t} SET f = (SELECT {kind}_add_agg({t}.f, x ORDER BY id) "
                          "FROM vals) WHERE id = 1;\nCOMMIT;")


def run_engine(name, engine, forms, runs, kinds):
    """Interleaved runs of every form; returns Markdown rows."""
    rows = []
    for kind in kinds:
        times = {f: [] for f in forms}
        results = {}
        size = None
        for _ in range(runs):
            for form in forms:
                engine.reset(kind)
                size = engine.size(kind) if name == "PostgreSQL" else engine.size()
                times[form].append(getattr(engine, form)(kind))
                results[form] = engine.stored(kind) if name == "PostgreSQL" else engine.stored()
        same = len(set(results.values())) == 1
        base = median_ms(times["one_by_one"])
        for form in forms:
            ms = median_ms(times[form])
            rows.append(f"| {name} | {kind} ({size:,} bytes) | {LABELS[form]} | "
                        f"{ms:,.1f} | {ms * 1000 / len(engine.values):,.2f} | "
                        f"{base / ms:,.0f}x | {'yes' if same else 'NO'} |")
    return rows


LABELS = {"one_by_one": "one UPDATE per value, one transaction",
          "bulk_column": "one UPDATE with the aggregate, filter as a column",
          "bulk_bound": "one UPDATE with the aggregate, filter bound"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("extension")
    ap.add_argument("--values", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--engine", choices=["sqlite", "postgres", "both"], default="both")
    args = ap.parse_args()
    values = distinct_values(args.values)
    print(f"{args.values:,} distinct integers added to a stored filter; medians of {args.runs} "
          "interleaved runs; speed-up against one UPDATE per value.\n")
    print("| engine | filter | form | median ms | us per value | speed-up | same bytes |")
    print("| --- | --- | --- | ---: | ---: | ---: | --- |")
    if args.engine in ("sqlite", "both"):
        lite = Lite(args.extension, values)
        for row in run_engine("SQLite", lite, ["one_by_one", "bulk_column", "bulk_bound"],
                              args.runs, ["bloom", "cuckoo"]):
            print(row, flush=True)
    if args.engine in ("postgres", "both"):
        pg = Pg(values)
        for row in run_engine("PostgreSQL", pg, ["one_by_one", "bulk_column"], args.runs,
                              ["bloom", "cuckoo"]):
            print(row, flush=True)
        psql(f"DROP DATABASE {DB};", db="postgres")


if __name__ == "__main__":
    main()
