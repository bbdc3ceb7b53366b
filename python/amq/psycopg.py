"""PostgreSQL's filter types (bloom, cuckoo, fuse) as amq.Filter, through psycopg 3.

    import psycopg, amq, amq.psycopg
    conn = psycopg.connect("dbname=shop")
    amq.psycopg.register(conn)
    f = conn.execute("SELECT f FROM filters WHERE name = 'vip'").fetchone()[0]  # amq.Filter
    conn.execute("UPDATE filters SET f = %s WHERE name = 'vip'", (f,))          # as bloom

After ``register(conn)`` columns of type ``bloom`` and ``cuckoo`` load as
amq.Filter, in text and binary results, and an amq.Filter parameter is sent as
the type of its kind (``bloom`` or ``cuckoo``), as ``\\x…`` text or, in binary
(``%b`` or ``cursor(binary=True)``), as its bytes. The types' oids are looked up
in the connection's database (``CREATE EXTENSION amq`` first), in the schema amq
is installed in, whatever the search_path (a type of the same name elsewhere is
never taken for amq's), so register every connection (or a pool's ``configure``
callback); ``register_async`` does the same for an ``AsyncConnection``.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Type

from psycopg import AsyncConnection, Connection, sql
from psycopg.abc import AdaptContext, Buffer
from psycopg.adapt import Dumper, Loader, PyFormat
from psycopg.pq import Format
from psycopg.types import TypeInfo

from . import KINDS, Filter, _error

__all__ = ["register", "register_async"]

# amq's schema in the connection's database; every name qualified, so that no
# search_path can redirect the query.
_SCHEMA = ("SELECT n.nspname FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n"
           " ON n.oid OPERATOR(pg_catalog.=) e.extnamespace"
           " WHERE e.extname OPERATOR(pg_catalog.=) 'amq'")


class _FilterLoader(Loader):
    """A filter value (bloom, cuckoo, fuse) in text form, ``\\x`` and hex digits."""

    format = Format.TEXT

    def load(self, data: Buffer) -> Filter:
        text = bytes(data)
        return Filter(bytes.fromhex(text[2:].decode("ascii")))


class _FilterBinaryLoader(Loader):
    """A filter value in binary form: the filter's bytes."""

    format = Format.BINARY

    def load(self, data: Buffer) -> Filter:
        return Filter(data)


class _FilterDumper(Dumper):
    """Sends an amq.Filter as text, ``\\x`` and hex digits; the oid is its kind's,
    chosen per value (get_key and upgrade)."""

    format = Format.TEXT
    # Filled per registration: the oid and class of each kind's dumper.
    _by_kind: Dict[str, Type["_FilterDumper"]] = {}

    def __init__(self, cls: type, context: Optional[AdaptContext] = None):
        super().__init__(cls, context)
        self._context = context

    def get_key(self, obj: Filter, format: PyFormat) -> Any:
        return (self.cls, obj.kind)

    def upgrade(self, obj: Filter, format: PyFormat) -> Dumper:
        if obj.kind not in self._by_kind:
            raise _error(f"this database's amq has no {obj.kind} type",
                         "run ALTER EXTENSION amq UPDATE in it")
        return self._by_kind[obj.kind](self.cls, self._context)

    def dump(self, obj: Filter) -> bytes:
        return b"\\x" + bytes(obj).hex().encode("ascii")


class _FilterBinaryDumper(_FilterDumper):
    """Sends an amq.Filter in binary: its bytes, as the type's receive function reads them."""

    format = Format.BINARY

    def dump(self, obj: Filter) -> bytes:
        return bytes(obj)


def _type_names(row: Optional[Any]) -> Dict[str, sql.Identifier]:
    """The qualified name of each kind's type, from _SCHEMA's row; raises
    amq.Error when amq is not installed."""
    if row is None:
        raise _error("amq is not installed in this database",
                     "run CREATE EXTENSION amq in it first")
    return {kind: sql.Identifier(row[0], kind) for kind in KINDS}


def _install(context: AdaptContext, infos: Dict[str, Optional[TypeInfo]]) -> None:
    """Registers the loaders and dumpers for the oids found in infos. A kind
    whose type the database lacks (amq older than that kind: fuse came in
    0.6.0) is left out, and a Filter of that kind is refused when sent
    (_FilterDumper.upgrade)."""
    adapters = context.adapters
    present = {kind: info for kind, info in infos.items() if info is not None}
    for base in (_FilterDumper, _FilterBinaryDumper):
        by_kind: Dict[str, Type[_FilterDumper]] = {}
        for kind, info in present.items():
            by_kind[kind] = type(f"{kind.title()}{base.__name__}", (base,),
                                 {"oid": info.oid})
        dispatcher = type(f"Amq{base.__name__}", (base,), {"_by_kind": by_kind})
        for dumper in by_kind.values():
            dumper._by_kind = by_kind
            # By oid too, for COPY with set_types(["bloom"]).
            adapters.register_dumper(None, dumper)
        adapters.register_dumper(Filter, dispatcher)
    for info in present.values():
        info.register(context)  # by name too: COPY's set_types(["bloom"])
        adapters.register_loader(info.oid, _FilterLoader)
        adapters.register_loader(info.oid, _FilterBinaryLoader)


def register(conn: Connection[Any]) -> None:
    """Makes bloom, cuckoo and fuse columns load as amq.Filter on conn, and amq.Filter
    parameters dump as those types (text and binary).

    Raises amq.Error when the amq extension is not installed in conn's database.
    """
    if isinstance(conn, AsyncConnection):
        raise TypeError("an AsyncConnection: use await amq.psycopg.register_async(conn)")
    names = _type_names(conn.execute(_SCHEMA).fetchone())
    _install(conn, {kind: TypeInfo.fetch(conn, names[kind]) for kind in KINDS})


async def register_async(conn: AsyncConnection[Any]) -> None:
    """register() for an AsyncConnection."""
    names = _type_names(await (await conn.execute(_SCHEMA)).fetchone())
    infos = {}
    for kind in KINDS:
        infos[kind] = await TypeInfo.fetch(conn, names[kind])
    _install(conn, infos)
