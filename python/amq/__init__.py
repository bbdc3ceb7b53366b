"""Bloom, cuckoo and binary fuse filters on the bytes amq's SQLite and PostgreSQL extensions write.

One C core (the repository's core/) serves the databases and this package, so a
filter built by ``bloom_agg`` in either database answers here exactly as it does
in SQL, and a filter built or changed here reads back in SQL::

    import amq
    f = amq.Filter(blob)               # bytes of a bloom or cuckoo filter, checked
    42 in f                            # bloom_contains(f, 42)
    f.add("new key"); bytes(f)         # bloom_add, ready to bind again
    g = amq.bloom(range(1000), 0.01)   # bloom_agg over the same values: same bytes

    import sqlite3
    conn = sqlite3.connect(":memory:")
    amq.load(conn)                     # the SQLite extension shipped in the package

Values hash as SQL's do (docs/HASHING.md): int and bool as integers, float (an
integral one as the integer), str as text, bytes as blob, Decimal as numeric,
UUID, date, datetime and time as PostgreSQL's text forms; any other type is a
TypeError. A filter records the families of the values added (numbers, text,
blobs: ``Filter.families``), and a value of another family, such as "42" against
a filter of ints, raises amq.Error saying so instead of answering False. None is
SQL's NULL everywhere: the builders and add_many skip it, contains, count and
hash return None, ``None in f`` is False, contains_many gives None in its place,
and add, delete and add_unique change nothing, as the SQL functions answer NULL.
``amq.psycopg.register(conn)`` maps PostgreSQL's bloom, cuckoo and fuse types
to Filter. ``KINDS`` names the filter kinds SQL has, ``("bloom", "cuckoo",
"fuse")``, each with its builder (``amq.fuse(values, fpr)`` is ``fuse_agg``),
and ``LAYOUTS`` each kind's layouts; ``__version__`` is the core's version.
"""

# The namespace is the public API (__all__), dunders and private names, and
# holds no module: what is needed from os and sqlite3 is imported under
# private names, and the C module's binding, which importing from it leaves
# behind, is removed (it stays in sys.modules).
from os.path import abspath as _abspath
from os.path import dirname as _dirname
from os.path import exists as _exists
from os.path import join as _join
from sqlite3 import Connection as _Connection

from . import _amq
# The C module's public names (its __all__): KINDS, LAYOUTS, Error, Filter,
# hash, and one builder per aggregate of SQL's function table (amq.bloom,
# amq.cuckoo, amq.fuse), which no list here repeats.
from ._amq import *  # noqa: F401,F403
from ._amq import Error
from ._amq import core_version as _core_version

__all__ = [*_amq.__all__, "load", "loadable_path", "__version__"]

del _amq

__version__: str = _core_version


def loadable_path() -> str:
    """The path of the SQLite loadable extension shipped inside this package.

    Pass it to ``conn.load_extension`` or to the sqlite3 CLI's ``.load``; its entry
    point, ``sqlite3_amq_init``, is the one SQLite derives from the file name.
    """
    return _join(_dirname(_abspath(__file__)), "amq.so")


def _error(message: str, hint: str = "") -> Error:
    """An amq.Error raised by the package itself, with the attributes core errors carry."""
    e = Error(f"{message}: {hint}" if hint else message)
    e.message = message
    e.hint = hint
    return e


def load(conn: _Connection) -> None:
    """Loads amq's SQL functions into a sqlite3 connection.

    Extension loading is enabled for the call and disabled again afterwards, as in
    sqlite-vec's ``sqlite_vec.load(conn)``. A Python whose sqlite3 module was built
    without extension loading (``enable_load_extension`` missing, as in pyenv's
    default builds) raises amq.Error saying so; amq.Filter works there all the same.
    """
    if not isinstance(conn, _Connection):
        raise TypeError(f"amq.load expects a sqlite3.Connection, got {type(conn).__name__}")
    if not hasattr(conn, "enable_load_extension"):
        raise _error(
            "this Python's sqlite3 module cannot load extensions (it was built without "
            "--enable-loadable-sqlite-extensions)",
            "use a Python built with it, such as Debian's /usr/bin/python3 or pyenv with "
            "PYTHON_CONFIGURE_OPTS=--enable-loadable-sqlite-extensions; amq.Filter, "
            "amq.bloom and amq.cuckoo work without it")
    path = loadable_path()
    if not _exists(path):
        raise _error(f"the SQLite extension {path} is missing",
                     "reinstall the amq package")
    conn.enable_load_extension(True)
    try:
        conn.load_extension(path)
    finally:
        conn.enable_load_extension(False)
