"""The multi-server suite: a coordinator and two shards (tests/multi/run.sh
starts them and loads orders). Runs pushdown.py, remote.py, security.py,
faults.py and crash.py in turn; prints one line per check and ends with
"N passed, N failed"."""

import sys

import crash
import faults
import pushdown
import remote
import security
from nodes import Results


def main():
    r = Results()
    pushdown.run_all(r)
    remote.run_all(r)
    security.run_all(r)
    faults.run_all(r)
    crash.run_all(r)
    print(f"{r.passed} passed, {r.failed} failed")
    return 0 if r.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
