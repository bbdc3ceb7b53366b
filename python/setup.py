"""Builds the amq package from the repository's own C core (../core).

Two shared libraries come out of the same core objects, each compiled once:
amq/_amq*.so, the Python extension module, and amq/amq.so, the SQLite
loadable extension (../sqlite) that amq.load() puts into a connection. Every
core/*_avx2.c is compiled with -mavx2 on x86-64 (core picks it at run time)
and plainly elsewhere, as the top Makefile does, so a new such file needs no
change here. AMQ_WERROR=1 in the environment adds -Werror (make test sets it).
"""

import glob
import os
import platform

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CORE = os.path.join(ROOT, "core")
SQLITE = os.path.join(ROOT, "sqlite")

if not os.path.exists(os.path.join(CORE, "amq.h")):
    raise SystemExit(f"amq: {CORE}/amq.h is missing: build from a checkout of the amq repository")

CFLAGS = ["-std=c11", "-fvisibility=hidden", "-D_GNU_SOURCE", "-Wall", "-Wextra"]
if os.environ.get("AMQ_WERROR") == "1":
    CFLAGS.append("-Werror")
X86_64 = platform.machine().lower() in ("x86_64", "amd64")


def sources(folder, relative=False):
    """The .c files of a folder, sorted, so the build is reproducible; relative
    to this folder for setup()'s Extension, which refuses absolute paths."""
    found = sorted(glob.glob(os.path.join(folder, "*.c")))
    return [os.path.relpath(f, HERE) for f in found] if relative else found


class BuildExt(build_ext):
    """build_ext that compiles core once for both libraries, each
    core/*_avx2.c with -mavx2 on x86-64."""

    def core_objects(self):
        """The core's object files, compiled on first use."""
        if getattr(self, "_core_objects", None) is None:
            headers = glob.glob(os.path.join(CORE, "*.h"))
            objects = []
            for src in sources(CORE):
                extra = ["-mavx2"] if src.endswith("_avx2.c") and X86_64 else []
                objects += self.compiler.compile(
                    [src], output_dir=self.build_temp, include_dirs=[CORE],
                    extra_postargs=CFLAGS + extra, depends=headers)
            self._core_objects = objects
        return self._core_objects

    def build_extension(self, ext):
        ext.extra_objects = self.core_objects() + list(ext.extra_objects or [])
        super().build_extension(ext)

    def get_ext_fullpath(self, ext_name):
        # The SQLite extension is a plain shared library named amq.so: SQLite
        # derives its entry point, sqlite3_amq_init, from that name.
        path = super().get_ext_fullpath(ext_name)
        if ext_name == "amq.amq":
            return os.path.join(os.path.dirname(path), "amq.so")
        return path


setup(
    ext_modules=[
        Extension(
            "amq._amq",
            sources=sources(os.path.join(HERE, "src"), relative=True),
            include_dirs=[CORE],
            depends=[os.path.relpath(h, HERE) for h in glob.glob(os.path.join(HERE, "src", "*.h"))],
            extra_compile_args=CFLAGS,
            libraries=["m"],
        ),
        Extension(
            "amq.amq",
            sources=sources(SQLITE, relative=True),
            include_dirs=[CORE],
            depends=[os.path.relpath(h, HERE) for h in glob.glob(os.path.join(SQLITE, "*.h"))],
            extra_compile_args=CFLAGS,
            libraries=["m"],
        ),
    ],
    cmdclass={"build_ext": BuildExt},
)
