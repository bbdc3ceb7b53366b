"""Building a Bloom filter at scale (bench/scale/run.sh), issue #32 item 5.

For each number of distinct values n, the collecting build (bloom_agg(x,
fpr) without a capacity, which spills sorted runs of hashes to temporary
files past its working memory) beside the streaming build (bloom_agg(x, fpr, n),
a capacity: a fixed filter), same input, same run, the two taking turns
(which goes first alternates run by run), in:
  - PostgreSQL: serial at work_mem 4MB (the default) and 64MB (--work-mem),
    1GB up to 10M (no spilling: the in-memory speed), and a parallel plan
    (2 workers forced, from a real table) at the sizes --parallel allows.
    Input: t a table of BASE rows cross joined with generate_series(0, k-1),
    values a.i * k + b.j (0..n-1, no tuplestore of n rows); the result read
    as length(f::bytea); the DEBUG1 line says what spilled;
  - SQLite: bloom_agg(value) over the CLI's generate_series(1, n) (its
    default working memory, amq_work_mem 64 MiB a connection; 1 GiB up to
    10M), in a sqlite3 process;
  - Python: amq.bloom(range(n)) (work_mem default 64 MiB; 1 GiB up to 10M),
    in a process.
Each build runs in a process of its own (a psql session and its backend, a
sqlite3, a python), sampled every 20 ms (bench/scale/sampler.py): peak
RssAnon (private memory; the backend's VmHWM also counts the shared buffers
it touched) and bytes written (wchar: the temporary files, essentially); a
backend also reports its getrusage max resident size (log_statement_stats:
exact, shared pages included).

Prints one table per engine setting with medians (of --runs at n <= 1e8, one
run above), and a line per run on stderr. Usage:
  bench.py SQLITE_EXT PYTHON [--sizes 1e7,1e8,3e8] [--runs 3] [--parallel 1e8]
           [--work-mem 4,64] [--fpr 0.01] [--engines pg,sqlite,python] [--collecting-only]
  bench.py --report LOG...   (the tables again, from the stderr of runs)
Environment: AMQ_PSQL, AMQ_SQLITE (the CLI), AMQ_PG_POSTMASTER (its pid);
AMQ_BENCH_SMOKE=1 for tiny sizes.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "lib"))
import pgsql  # noqa: E402
from sampler import Sampler, children, cmdline  # noqa: E402

PSQL = os.environ.get("AMQ_PSQL", "psql")
SQLITE = os.environ.get("AMQ_SQLITE", "sqlite3")
SMOKE = os.environ.get("AMQ_BENCH_SMOKE") == "1"
DB = "amq_scale"
BASE = 10_000 if SMOKE else 1_000_000
MiB = 2**20
PY_BUILD = """
import sys, time, amq
n, capacity, fpr = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
memory = {"work_mem": int(sys.argv[4])} if int(sys.argv[4]) else {}
start = time.monotonic()
f = amq.bloom(range(n), fpr, **memory) if capacity == 0 else amq.bloom(range(n), fpr, capacity)
print(time.monotonic() - start, memoryview(f).nbytes)
"""
DEBUG = re.compile(r"finishing a filter of (\d+) rows; (\d+) bytes in (\d+) sorted runs written to "
                   r"temporary files past work_mem, (\d+) runs to merge")


def psql(sql):
    return pgsql.lines([PSQL], sql, ["-d", DB])


def postgres_watch():
    """The session's backend and any parallel worker: children of the
    postmaster, told apart by their titles."""
    postmaster = int(os.environ["AMQ_PG_POSTMASTER"])
    for pid in children(postmaster):
        title = cmdline(pid)
        if "parallel worker" in title:
            yield pid, "worker"
        elif f" {DB} " in title:
            yield pid, "backend"


def sampled(command, stdin, watch=None, cwd=None):
    """Runs command with stdin, sampling it (or the processes watch names
    that were not there before it started); returns its stdout, stderr and
    the sampler's peaks."""
    before = {pid for pid, _ in watch()} if watch else set()
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=cwd)
    own = [(proc.pid, "process")]
    with Sampler((lambda: [w for w in watch() if w[0] not in before]) if watch
                 else (lambda: own)) as sampler:
        out, err = proc.communicate(stdin)
    if proc.returncode != 0:
        raise RuntimeError(f"{command[0]} failed: {err.strip()}")
    return out, err, sampler.peaks


def wait_for_backends(limit=120):
    """Waits until no backend of DB is left: one that has just ended may
    still be deleting gigabytes of temporary files."""
    for _ in range(limit * 10):
        if not list(postgres_watch()):
            return
        time.sleep(0.1)


def peaks_by_label(peaks):
    """{label: (largest RssAnon, largest VmHWM, total wchar, processes)}."""
    by = {}
    for peak in peaks.values():
        anon, hwm, written, count = by.get(peak["label"], (0, 0, 0, 0))
        by[peak["label"]] = (max(anon, peak["RssAnon"]), max(hwm, peak["VmHWM"]),
                             written + peak["wchar"], count + 1)
    return by


class Setting:
    """One engine setting, at the sizes it runs: run(n, capacity) builds a
    filter of n values, collecting (capacity 0) or streaming, and returns
    {seconds, size, memory, hwm, written, ...}. Its name states its working
    memory (work_mem_of)."""

    def __init__(self, name, run, sizes):
        self.name, self.run, self.sizes = name, run, sizes


def postgres_build(work_mem, workers, fpr):
    def run(n, capacity):
        k = n // BASE
        # log_statement_stats: the backend's own getrusage, whose max resident
        # size is exact where a sampler may miss a short peak.
        sets = [f"SET work_mem = '{work_mem}'", "SET client_min_messages = debug1",
                "SET log_statement_stats = on",
                "SET enable_material = off", f"SET max_parallel_workers_per_gather = {workers}"]
        if workers:
            sets += ["SET parallel_setup_cost = 0", "SET parallel_tuple_cost = 0",
                     "SET min_parallel_table_scan_size = 0"]
        cap = f", {fpr}, {capacity}" if capacity else f", {fpr}"
        sql = ";\n".join(sets) + ";\n\\timing on\n" + \
            (f"SELECT length(bloom_agg(a.i * {k} + b.j{cap})::bytea) "
             f"FROM t a CROSS JOIN generate_series(0, {k - 1}) b(j);\n")
        wait_for_backends()
        out, err, peaks = sampled([PSQL, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                                   "-d", DB], sql, postgres_watch)
        wait_for_backends()
        size = int(out.split("\n")[0])
        ms = float(re.search(r"Time: ([0-9.]+) ms", out).group(1))
        # A tiny build may end before the first sample finds its processes.
        by = peaks_by_label(peaks)
        backend, worker = by.get("backend", (0, 0, 0, 0)), by.get("worker", (0, 0, 0, 0))
        result = {"seconds": ms / 1000, "size": size, "memory": backend[0], "hwm": backend[1],
                  "written": backend[2] + worker[2], "workers": worker[3],
                  "worker_memory": worker[0]}
        # One report a statement, the SETs' first; the largest is the build's.
        sizes = [int(kb) for kb in re.findall(r"(\d+) kB max resident size", err)]
        if sizes:
            result["maxrss"] = max(sizes) * 1024
        m = DEBUG.search(err)
        if m:
            result["spilled"], result["runs"], result["merge"] = (int(m.group(2)),
                                                                  int(m.group(3)),
                                                                  int(m.group(4)))
        return result
    return run


def sqlite_build(extension, fpr, work_mem=0):
    def run(n, capacity):
        cap = f", {fpr}, {capacity}" if capacity else f", {fpr}"
        setting = f"SELECT amq_work_mem({work_mem});\n" if work_mem else ""
        sql = (f".load {extension}\n{setting}.timer on\n"
               f"SELECT length(bloom_agg(value{cap})) FROM generate_series(1, {n});\n")
        out, _, peaks = sampled([SQLITE, "-batch", ":memory:"], sql)
        peak = next(iter(peaks.values()), {"RssAnon": 0, "VmHWM": 0, "wchar": 0})
        return {"seconds": float(re.search(r"Run Time: real ([0-9.]+)", out).group(1)),
                "size": int(out.split("\n")[1 if work_mem else 0]), "memory": peak["RssAnon"],
                "hwm": peak["VmHWM"], "written": peak["wchar"]}
    return run


def python_build(python, fpr, work_mem=0):
    def run(n, capacity):
        out, _, peaks = sampled([python, "-c", PY_BUILD, str(n), str(capacity), str(fpr),
                                   str(work_mem)], None, cwd="/tmp")
        seconds, size = out.split()
        peak = next(iter(peaks.values()), {"RssAnon": 0, "VmHWM": 0, "wchar": 0})
        return {"seconds": float(seconds), "size": int(size), "memory": peak["RssAnon"],
                "hwm": peak["VmHWM"], "written": peak["wchar"]}
    return run


def setup(largest):
    """The database and its table t of BASE rows; returns the parallel plan
    at the largest parallel size, to print."""
    pgsql.lines([PSQL], f"DROP DATABASE IF EXISTS {DB}", ["-d", "postgres"])
    pgsql.lines([PSQL], f"CREATE DATABASE {DB}", ["-d", "postgres"])
    psql(f"CREATE EXTENSION amq; CREATE TABLE t (i bigint); "
         f"INSERT INTO t SELECT generate_series(0, {BASE - 1}); VACUUM ANALYZE t;")
    k = max(1, largest // BASE)
    return psql("SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; "
                "SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0; "
                "SET enable_material = off; "
                f"EXPLAIN (COSTS OFF) SELECT length(bloom_agg(a.i * {k} + b.j)::bytea) "
                f"FROM t a CROSS JOIN generate_series(0, {k - 1}) b(j);")


def mib(b):
    return f"{b / MiB:,.0f}"


def count(n):
    return f"{n / 1e9:g}B" if n >= 1e9 else f"{n / 1e6:g}M"


def median(results, key):
    values = [r[key] for r in results if key in r]
    return statistics.median(values) if values else None


def work_mem_of(name):
    """The working memory a setting's name states (work_mem 4MB, 64 MiB)."""
    m = re.search(r"(\d+) ?(MB|MiB|GB|GiB)", name)
    return int(m.group(1)) * (2**30 if m.group(2) in ("GB", "GiB") else MiB)


def report(name, rows):
    print(f"### {name}")
    print()
    parallel = "workers" in name
    memory = "leader / worker peak RssAnon MiB" if parallel else "peak RssAnon MiB (VmHWM)"
    print(f"| n | runs | filter MiB | collecting s | {memory} | written MiB | spilled, runs "
          f"| streaming s | {memory} | collecting / streaming | memory limit MiB | within |")
    print("|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---|")
    for n, runs in rows:
        failed = [r["failed"] for r in runs[0] + runs[1] if "failed" in r]
        c = [r for r in runs[0] if "failed" not in r]
        s = [r for r in runs[1] if "failed" not in r]
        if not c or (runs[1] and not s):
            print(f"| {count(n)} | {len(runs[0])} | failed: {failed[0]} |" + " |" * 9)
            continue
        size = median(c, "size")
        limit = 1.2 * (size + work_mem_of(name) + 64 * MiB)

        def mem(results):
            if parallel:
                return (f"{mib(median(results, 'memory'))} / "
                        f"{mib(median(results, 'worker_memory'))}")
            text = f"{mib(median(results, 'memory'))} ({mib(median(results, 'hwm'))}"
            maxrss = median(results, "maxrss")
            return text + (")" if maxrss is None else f"; getrusage {mib(maxrss)})")
        spilled = median(c, "spilled")
        spill = ("" if spilled is None else
                 f"{mib(spilled)} MiB, {median(c, 'runs'):.0f} runs")
        worst = max(r["memory"] for r in c)
        within = "" if parallel else ("yes" if worst <= limit else "**no**")
        # --collecting-only: no streaming build to compare with.
        streaming = (f"{median(s, 'seconds'):.2f} | {mem(s)} | "
                     f"{median(c, 'seconds') / median(s, 'seconds'):.2f}×" if s else "— | — | —")
        print(f"| {count(n)} | {len(c)} | {size / MiB:,.1f} | {median(c, 'seconds'):.2f} | "
              f"{mem(c)} | {mib(median(c, 'written'))} | {spill} | {streaming} | "
              f"{mib(limit)} | {within} |")
        if s and median(c, "size") != median(s, "size"):
            print(f"FILTER SIZES DIFFER at {n}: {median(c, 'size')} and {median(s, 'size')}")
    print()


LINE = re.compile(r"^(.*) n=(\d+) run (\d+) (collecting|streaming): (.*)$")


def read_log(path):
    """The results of a log of bench.py's (its stderr): {(setting, n,
    collecting): [result]}."""
    results = {}
    with open(path) as f:
        for line in f:
            m = LINE.match(line.strip())
            if not m:
                continue
            name, n, _, form, detail = m.groups()
            if detail.startswith("failed: "):
                result = {"failed": detail[len("failed: "):]}
            else:
                result = {}
                for item in detail.split(", "):
                    key, value = item.split(" ", 1)
                    result[key] = float(value) if "." in value else int(value)
            results.setdefault((name, int(n), form == "collecting"), []).append(result)
    return results


def report_all(results):
    names = list(dict.fromkeys(name for name, _, _ in results))
    for name in names:
        sizes = sorted({n for nm, n, _ in results if nm == name})
        report(name, [(n, (results.get((name, n, True), []), results.get((name, n, False), [])))
                      for n in sizes])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("sqlite_ext", nargs="?")
    parser.add_argument("python", nargs="?")
    parser.add_argument("--report", nargs="+", metavar="LOG",
                        help="print the tables of logs of earlier runs (their stderr) only")
    parser.add_argument("--sizes", default="1e5" if SMOKE else "1e7,1e8,3e8")
    parser.add_argument("--runs", type=int, default=1 if SMOKE else 3)
    parser.add_argument("--parallel", type=float, default=1e5 if SMOKE else 1e8,
                        help="the largest n of the parallel plan")
    parser.add_argument("--engines", default="pg,sqlite,python")
    parser.add_argument("--fpr", type=float, default=0.01,
                        help="both builds' rate (1B values need 0.03: filters stop at 1 GiB, "
                             "SQLite's blobs at 10^9 bytes)")
    parser.add_argument("--work-mem", default="4,64",
                        help="PostgreSQL's work_mem of the serial plans, in MB ('': none)")
    parser.add_argument("--collecting-only", action="store_true",
                        help="skip the streaming builds (the capacity-given ones)")
    args = parser.parse_args()
    if args.report:
        results = {}
        for path in args.report:
            for key, value in read_log(path).items():
                results.setdefault(key, []).extend(value)
        report_all(results)
        return
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    engines = args.engines.split(",")
    settings = []
    if "pg" in engines:
        plan = setup(min(max(sizes), int(args.parallel)))
        if any(n <= args.parallel for n in sizes):
            for line in plan:
                print(f"    {line}", file=sys.stderr)
        for mb in (int(m) for m in args.work_mem.split(",") if m):
            settings.append(Setting(f"PostgreSQL, serial, work_mem {mb}MB",
                                    postgres_build(f"{mb}MB", 0, args.fpr), sizes))
        settings += [
            Setting("PostgreSQL, serial, work_mem 1GB (in memory)",
                    postgres_build("1GB", 0, args.fpr), [n for n in sizes if n <= 10_000_000]),
            Setting("PostgreSQL, 2 workers, work_mem 4MB", postgres_build("4MB", 2, args.fpr),
                    [n for n in sizes if n <= args.parallel]),
        ]
    if "sqlite" in engines:
        ext = os.path.abspath(args.sqlite_ext)
        settings += [
            Setting("SQLite (amq_work_mem 64 MiB, the default)",
                    sqlite_build(ext, args.fpr), sizes),
            Setting("SQLite, amq_work_mem 1 GiB (in memory)",
                    sqlite_build(ext, args.fpr, 2**30), [n for n in sizes if n <= 10_000_000]),
        ]
    if "python" in engines:
        settings += [
            Setting("Python, amq.bloom (work_mem 64 MiB, the default)",
                    python_build(args.python, args.fpr), sizes),
            Setting("Python, amq.bloom, work_mem 1 GiB (in memory)",
                    python_build(args.python, args.fpr, 2**30),
                    [n for n in sizes if n <= 10_000_000]),
        ]
    results = {}
    if args.fpr != 0.01:
        for setting in settings:
            setting.name += f", fpr {args.fpr}"
    for n in sizes:
        runs = args.runs if n <= 100_000_000 else 1
        for r in range(runs):
            for setting in settings:
                if n not in setting.sizes:
                    continue
                # Collecting and streaming take turns; which goes first alternates.
                for capacity in ((0,) if args.collecting_only else
                                 (0, n) if r % 2 == 0 else (n, 0)):
                    try:
                        result = setting.run(n, capacity)
                    except RuntimeError as e:
                        result = {"failed": str(e).replace("\n", " ")}
                    results.setdefault((setting.name, n, capacity == 0), []).append(result)
                    detail = (f"failed: {result['failed']}" if "failed" in result else
                              ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                                        for k, v in result.items()))
                    print(f"{setting.name} n={n} run {r + 1} "
                          f"{'collecting' if capacity == 0 else 'streaming'}: {detail}",
                          file=sys.stderr, flush=True)
    report_all(results)


if __name__ == "__main__":
    main()
