"""What the differential corpora of the join filter share: the local one
(tests/joinfilter/difftest.py) and the one across servers
(tests/multi/remote_diff.py). Each runs its random queries in one psql
session per setting (every query's output between markers, each statement
followed by its SQLSTATE), compares the runs query by query, and ends with
"N passed, N failed".

A query's output is echoed on stdout right after it: error text goes to
stderr, which reaches us after all of stdout and cannot be told apart per
query, so a run is judged by the SQLSTATEs it echoes.
"""

import re

# psql's SQLSTATE after a statement cancelled by statement_timeout.
TIMEOUT = "state 57014"


def block(number, settings, statements):
    """The script lines of one query: its marker, a SET for each setting, then
    each statement followed by an echo of its SQLSTATE."""
    lines = ["\\echo @@ %d" % number]
    lines.extend("SET %s = '%s';" % kv for kv in settings.items())
    for statement in statements:
        lines.append(statement)
        lines.append("\\echo state :SQLSTATE")
    return lines


def select(visible, from_sql, where, prefix=""):
    """The SELECT of a random query: each visible alias's id and v columns
    from from_sql, where every condition in where holds; prefix (a WITH
    clause) goes first."""
    cols = ", ".join(f"{a}.id AS {a}_id, {a}.v AS {a}_v" for a in visible)
    sql = f"{prefix}SELECT {cols} FROM {from_sql}"
    if where:
        sql += " WHERE " + " AND ".join(where)
    return sql


def digest(sql):
    """A query of one row for sql: its row count and the md5 of its rows
    sorted as text (the same multiset gives the same row)."""
    return ("SELECT count(*), md5(coalesce(string_agg(q::text, '|' ORDER BY q::text), '')) "
            "FROM (%s) q;" % sql)


def count(sql):
    """A query of one row for sql: its row count (for a LIMIT with no total
    order, whose rows may differ between plans)."""
    return "SELECT count(*) FROM (%s) q;" % sql


def split(output):
    """The output of each query of a run, by query number (from the
    markers)."""
    parts = {}
    current = None
    for line in output.splitlines():
        m = re.match(r"^@@ (\d+)$", line)
        if m:
            current = int(m.group(1))
            parts[current] = []
        elif current is not None:
            parts[current].append(line)
    return {k: "\n".join(v) for k, v in parts.items()}


def succeeded(output):
    """Whether every statement of a query's output succeeded (it echoed at
    least one SQLSTATE, and only 00000)."""
    states = re.findall(r"^state (\w+)$", output or "", re.M)
    return bool(states) and all(s == "00000" for s in states)


def timed_out(*outputs):
    """Whether a statement of any of these outputs hit statement_timeout."""
    return any(TIMEOUT in (x or "") for x in outputs)


def compare(off, on, normalize=None):
    """What is wrong with a query whose runs with the filter off and on gave
    these outputs (None: nothing). normalize, when given, maps an output to
    what is compared (such as its rows sorted, for rows in any order)."""
    if off is None or on is None:
        return "no output"
    if not succeeded(off) or not succeeded(on):
        return "error: " + (off if not succeeded(off) else on)
    if normalize is not None:
        off, on = normalize(off), normalize(on)
    if off != on:
        return "results differ: off=%r on=%r" % (off[:2000], on[:2000])
    return None


def report(number, replay, problem, settings, sql):
    """Prints one failing query: its number, how to run it again, what went
    wrong, its settings and its SQL."""
    print("FAIL query %d (replay: %s): %s" % (number, replay, problem))
    print("  settings: %s" % settings)
    print("  query: %s" % sql)


def too_many_timeouts(skipped, total):
    """Prints a failure and returns 1 when more than 2% of the queries hit
    statement_timeout (the corpus would test too little), else 0."""
    if skipped > total // 50:
        print("FAIL too many queries hit statement_timeout: %d" % skipped)
        return 1
    return 0


def join_clause(rng, kind, ref, left, cond, sel, in_cols, int_cols, sel_in_on=("left",)):
    """One join of a random query, of kind inner, left, right, full, semi
    (EXISTS), in (IN over a subquery) or anti (NOT EXISTS): ref ("table
    alias") joined by cond to the tables before it, left the alias an IN
    compares, sel a condition on ref (in WHERE after an inner join, in ON
    for the outer joins of sel_in_on, in the subquery of the others);
    in_cols are the columns an IN may take (an integer one, of int_cols,
    against any integer column). Returns (the text to append to FROM, the
    conditions to add to WHERE, whether ref's columns are visible)."""
    alias = ref.split()[-1]
    if kind == "inner":
        return f" JOIN {ref} ON {cond}", [sel] if rng.random() < 0.7 else [], True
    if kind in ("left", "right", "full"):
        on = f"{cond} AND {sel}" if kind in sel_in_on else cond
        return f" {kind.upper()} JOIN {ref} ON {on}", [], True
    if kind == "semi":
        return "", [f"EXISTS (SELECT 1 FROM {ref} WHERE {cond} AND {sel})"], False
    if kind == "in":
        col = rng.choice(in_cols)
        lcol = rng.choice(int_cols) if col in int_cols else col
        return "", [f"{left}.{lcol} IN (SELECT {alias}.{col} FROM {ref} WHERE {sel})"], False
    return "", [f"NOT EXISTS (SELECT 1 FROM {ref} WHERE {cond} AND {sel})"], False


def key_condition(rng, left, right, kinds, columns, int_cols, two):
    """An equality between aliases left and right, of a kind drawn from
    kinds: "int" compares any two of int_cols, another kind the pair of
    columns columns[kind] (left's, right's); with probability two, two such
    equalities."""
    def one():
        kind = rng.choice(kinds)
        if kind == "int":
            return f"{left}.{rng.choice(int_cols)} = {right}.{rng.choice(int_cols)}"
        return "%s.%s = %s.%s" % (left, columns[kind][0], right, columns[kind][1])
    if rng.random() < two:
        return f"{one()} AND {one()}"
    return one()
