"""What the Python test scripts share: counting checks, one line per check,
and the closing "N passed, N failed" line tests/run.sh adds up. The Python
package's tests (tests/python) and the interop suite use it, and
tests/multi/nodes.py's Results prints its own form of the lines; their
scripts put tests/lib on sys.path."""

import sys
import traceback


class Results:
    """Counts checks; each prints "ok - NAME" or "FAIL - NAME: detail"."""

    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, name, ok, detail=""):
        """Records one check: ok is its outcome, detail says what was seen."""
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        self.report(name, ok, detail)
        return ok

    def report(self, name, ok, detail):
        """Prints one check's line (a subclass may print its own form)."""
        if ok:
            print(f"ok - {name}")
        else:
            print(f"FAIL - {name}{': ' + str(detail) if detail != '' else ''}")

    def equal(self, name, got, want):
        """A check that got == want, showing both when not."""
        return self.check(name, got == want, f"got {got!r}, want {want!r}")

    def raises(self, name, exc_type, fn, *args, message=None, **kwargs):
        """A check that fn(*args) raises exc_type (with str() == message when
        given); returns the exception, or None."""
        try:
            fn(*args, **kwargs)
        except exc_type as e:
            ok = message is None or str(e) == message
            self.check(name, ok, f"message {str(e)!r}, want {message!r}")
            return e
        except Exception as e:  # pylint: disable=broad-except
            self.check(name, False, f"raised {type(e).__name__}: {e}")
            return None
        self.check(name, False, f"no {exc_type.__name__} raised")
        return None

    def run(self, *sections):
        """Runs each section(results); an exception in one is one failure."""
        for section in sections:
            try:
                section(self)
            except Exception:  # pylint: disable=broad-except
                self.check(f"{section.__name__} ran to the end", False, traceback.format_exc())
        print(f"{self.passed} passed, {self.failed} failed")
        sys.exit(1 if self.failed else 0)
