"""What the multi-server checks share: psql against a node, node control
through tests/pg/cluster.sh, EXPLAIN plans as JSON, and the tally of checks.

The servers are the nodes coord, shard1 and shard2 under AMQ_PG_ROOT
(tests/multi/servers.sh started them); AMQ_PSQL is psql.
"""

import json
import os
import subprocess
import sys

# psql as the other suites run it.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import harness  # noqa: E402
import pgsql  # noqa: E402

PSQL = os.environ.get("AMQ_PSQL", "psql")
ROOT = os.environ["AMQ_PG_ROOT"]
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def port(node):
    with open(os.path.join(ROOT, node, "port"), encoding="ascii") as f:
        return f.read().strip()


def run_psql(node, sql, db="postgres", stop=True):
    """Runs sql through psql on node; returns the finished process (unaligned,
    tuples only, stopping at the first error unless stop is false)."""
    return pgsql.run([PSQL], sql, ["-h", os.path.join(ROOT, node), "-p", port(node),
                                   "-U", "postgres", "-d", db], stop=stop)


def psql(node, sql, db="postgres"):
    """The output lines of sql on node; an error raises RuntimeError."""
    return pgsql.output(run_psql(node, sql, db), f"{node}: ").splitlines()


def value(node, sql, db="postgres"):
    """The last output line of sql on node (a single value)."""
    return psql(node, sql, db)[-1]


def node_ctl(action, node):
    """amq_node_<action> NODE from tests/pg/cluster.sh (start, stop, pid)."""
    out = subprocess.run(
        ["bash", "-c", f'. tests/pg/cluster.sh && amq_node_{action} "$1"', "_", node],
        cwd=REPO, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"amq_node_{action} {node}: {out.stderr.strip()}")
    return out.stdout.strip()


def plan(node, query, analyze=False, setup=""):
    """The JSON plan of query on node (EXPLAIN VERBOSE, with ANALYZE if asked)."""
    options = "VERBOSE, FORMAT JSON" + (", ANALYZE, TIMING OFF" if analyze else "")
    lines = psql(node, f"{setup}\nEXPLAIN ({options}) {query};")
    return json.loads("\n".join(lines))[0]["Plan"]


def foreign_scans(node_plan):
    """Every Foreign Scan node of a plan (InitPlans and subplans included)."""
    found = [node_plan] if node_plan["Node Type"] == "Foreign Scan" else []
    for child in node_plan.get("Plans", []):
        found += foreign_scans(child)
    return found


def fetched(scan):
    """Rows a Foreign Scan received from its server (EXPLAIN ANALYZE): the
    rows it returned plus those a local Filter removed."""
    return scan["Actual Rows"] + scan.get("Rows Removed by Filter", 0)


class Results(harness.Results):
    """Counts checks, printing one line for each: "ok   NAME" or
    "FAIL NAME: detail"."""

    def report(self, name, ok, detail):
        print(f"{'ok  ' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", flush=True)

    def run(self, name, fn, *args):
        """Runs one group of checks; an exception in it counts as a failure."""
        try:
            fn(self, *args)
        except (RuntimeError, ValueError, KeyError, IndexError, OSError, subprocess.SubprocessError) as e:
            self.check(name, False, f"{type(e).__name__}: {e}")
