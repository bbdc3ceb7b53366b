"""The deterministic rows the cross-engine suites load into both engines
(tests/interop/interop.py, tests/python/test_engines.py): (id, int, real,
text, blob), with duplicates and NULLs. Each suite names its own sizes, so
its rows stay the ones it always had."""

import random


def make_rows(n, words, small_ints, texts, blob_bytes, huge_reals, seed=7):
    """n rows from random.Random(seed): ints from -10**12 to 10**12, or below
    small_ints in every third row; reals cycling through a uniform one, a whole
    one, 0.1 * id, -0.0, (when huge_reals) one up to 1e300, and infinity; text
    "WORD-N" with WORD from words and N below texts; blobs of fewer than
    blob_bytes random bytes. Every 97th row is NULL but for its id."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        iv = rng.randrange(-10**12, 10**12) if i % 3 else rng.randrange(0, small_ints)
        reals = [rng.uniform(-1e6, 1e6), float(rng.randrange(-1000, 1000)), 0.1 * i, -0.0]
        if huge_reals:
            reals.append(1e300 * rng.random())
        reals.append(float("inf"))
        rv = reals[i % len(reals)]
        tv = f"{rng.choice(words)}-{rng.randrange(0, texts)}"
        bv = bytes(rng.randrange(256) for _ in range(rng.randrange(0, blob_bytes)))
        if i % 97 == 0:
            iv = rv = tv = bv = None
        rows.append((i, iv, rv, tv, bv))
    return rows
