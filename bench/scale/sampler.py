"""Peak memory and bytes written of running processes, read from /proc
(bench/scale/bench.py).

A Sampler is a thread that, every INTERVAL seconds until stopped, asks a
function for the processes to watch (pid and a label) and reads for each its
/proc/<pid>/status (RssAnon: private resident memory; VmHWM: the largest
resident set, shared pages included) and /proc/<pid>/io (wchar: bytes the
process passed to write calls, temporary files included). It keeps each
process's largest values, so a process that has exited keeps its last
reading. A 20 ms period misses nothing that lasts: the peaks of a build (its
hashes, its filter) are held for seconds.
"""

import os
import threading

INTERVAL = 0.02


def _status(pid):
    """RssAnon and VmHWM of pid in bytes, or None once it has gone."""
    values = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("RssAnon", "VmHWM"):
                    values[key] = int(rest.split()[0]) * 1024
    except (FileNotFoundError, ProcessLookupError):
        return None
    return values


def _written(pid):
    """wchar of pid (bytes passed to write calls), or None."""
    try:
        with open(f"/proc/{pid}/io") as f:
            for line in f:
                if line.startswith("wchar:"):
                    return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    return None


def children(pid):
    """The pids of pid's children (every thread's list)."""
    kids = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                kids.extend(int(k) for k in f.read().split())
    except (FileNotFoundError, ProcessLookupError):
        pass
    return kids


def cmdline(pid):
    """pid's command line as one string (a PostgreSQL process's title)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except (FileNotFoundError, ProcessLookupError):
        return ""


class Sampler(threading.Thread):
    """Samples the processes watch() names ([(pid, label)]) until stop();
    peaks then holds {pid: {"label", "RssAnon", "VmHWM", "wchar"}}, the
    largest value of each seen."""

    def __init__(self, watch):
        super().__init__(daemon=True)
        self.watch = watch
        self.peaks = {}
        self._done = threading.Event()

    def run(self):
        while not self._done.is_set():
            self.sample()
            self._done.wait(INTERVAL)

    def sample(self):
        for pid, label in self.watch():
            status = _status(pid)
            if status is None:
                continue
            peak = self.peaks.setdefault(pid, {"label": label, "RssAnon": 0, "VmHWM": 0,
                                               "wchar": 0})
            for key, value in status.items():
                peak[key] = max(peak[key], value)
            written = _written(pid)
            if written is not None:
                peak["wchar"] = max(peak["wchar"], written)

    def stop(self):
        self._done.set()
        self.join()
        return self.peaks

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
