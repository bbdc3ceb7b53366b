"""Builds the amq package from the repository's own C core (../core).

Two shared libraries come out of the same core objects, each compiled once:
amq/_amq*.so, the Python extension module, and amq/amq.so, the SQLite
loadable extension (../sqlite) that amq.load() puts into a connection. Every
core/*/*_avx2.c is compiled with -mavx2 on x86-64 (core picks it at run time)
and plainly elsewhere, as the top Makefile does, so a new such file needs no
change here. AMQ_WERROR=1 in the environment adds -Werror (make test sets it).
A Python without the wheel package gets a small bdist_wheel of its own.
The version is AMQ_VERSION of ../core/amq.h, amq's one version.
"""

import base64
import glob
import hashlib
import os
import platform
import re
import shutil
import sys
import sysconfig
import zipfile

from setuptools import Command, Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CORE = os.path.join(ROOT, "core")
SQLITE = os.path.join(ROOT, "sqlite")

if not os.path.exists(os.path.join(CORE, "amq.h")):
    raise SystemExit(f"amq: {CORE}/amq.h is missing: build from a checkout of the amq repository")

def amq_version():
    """AMQ_VERSION of core/amq.h: the version every amq package has."""
    with open(os.path.join(CORE, "amq.h")) as f:
        found = re.search(r'^#define AMQ_VERSION "([^"]+)"$', f.read(), re.M)
    if found is None:
        raise SystemExit(f"amq: no AMQ_VERSION in {CORE}/amq.h")
    return found.group(1)


CFLAGS = ["-std=c11", "-fvisibility=hidden", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Wshadow", "-Wmissing-prototypes"]
if os.environ.get("AMQ_WERROR") == "1":
    CFLAGS.append("-Werror")
X86_64 = platform.machine().lower() in ("x86_64", "amd64")


def sources(folder, relative=False, pattern="*.c"):
    """The .c files of a folder (pattern: which), sorted, so the build is
    reproducible; relative to this folder for setup()'s Extension, which
    refuses absolute paths."""
    found = sorted(glob.glob(os.path.join(folder, pattern)))
    return [os.path.relpath(f, HERE) for f in found] if relative else found


class BuildExt(build_ext):
    """build_ext that compiles core once for both libraries, each
    core/*/*_avx2.c with -mavx2 on x86-64."""

    def core_objects(self):
        """The core's object files, compiled on first use."""
        if getattr(self, "_core_objects", None) is None:
            headers = glob.glob(os.path.join(CORE, "*.h")) + glob.glob(os.path.join(CORE, "*", "*.h"))
            objects = []
            for src in sources(CORE, pattern=os.path.join("*", "*.c")):
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


class WheelWithoutWheel(Command):
    """bdist_wheel for a Python without the wheel package (pyenv's builds have
    setuptools but not wheel, and pip --no-build-isolation cannot fetch it
    offline): builds, then zips build/lib with its .dist-info as PEP 427 says.
    Used only where ``import wheel`` fails."""

    description = "build a wheel (without the wheel package)"
    user_options = [("dist-dir=", "d", "directory for the wheel")]

    def initialize_options(self):
        self.dist_dir = None

    def finalize_options(self):
        self.dist_dir = self.dist_dir or "dist"

    def egg2dist(self, egg_info, dist_info):
        """The .dist-info of an .egg-info: METADATA is PKG-INFO; entry points
        and top-level names are copied (setuptools' dist_info calls this)."""
        os.makedirs(dist_info, exist_ok=True)
        shutil.copy(os.path.join(egg_info, "PKG-INFO"), os.path.join(dist_info, "METADATA"))
        for name in ("entry_points.txt", "top_level.txt"):
            if os.path.exists(os.path.join(egg_info, name)):
                shutil.copy(os.path.join(egg_info, name), os.path.join(dist_info, name))

    def run(self):
        self.run_command("build")
        build_lib = self.get_finalized_command("build").build_platlib
        self.run_command("egg_info")
        egg_info = self.get_finalized_command("egg_info").egg_info
        name, version = self.distribution.get_name(), self.distribution.get_version()
        dist_info = f"{name}-{version}.dist-info"
        self.egg2dist(egg_info, os.path.join(self.dist_dir, dist_info))
        py = f"cp{sys.version_info[0]}{sys.version_info[1]}"
        plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
        with open(os.path.join(self.dist_dir, dist_info, "WHEEL"), "w") as f:
            f.write(f"Wheel-Version: 1.0\nGenerator: amq setup.py\nRoot-Is-Purelib: false\n"
                    f"Tag: {py}-{py}-{plat}\n")
        files = [(os.path.join(d, n), os.path.relpath(os.path.join(d, n), build_lib))
                 for d, _, names in os.walk(build_lib) for n in names]
        files += [(os.path.join(self.dist_dir, dist_info, n), f"{dist_info}/{n}")
                  for n in os.listdir(os.path.join(self.dist_dir, dist_info))]
        path = os.path.join(self.dist_dir, f"{name}-{version}-{py}-{py}-{plat}.whl")
        record = []
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as whl:
            for src, arc in files:
                data = open(src, "rb").read()
                digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
                record.append(f"{arc},sha256={digest.decode()},{len(data)}")
                whl.writestr(arc, data)
            record.append(f"{dist_info}/RECORD,,")
            whl.writestr(f"{dist_info}/RECORD", "\n".join(record) + "\n")
        shutil.rmtree(os.path.join(self.dist_dir, dist_info))


try:
    import wheel  # noqa: F401  (setuptools' bdist_wheel comes from it)
    FALLBACK = {}
except ImportError:
    FALLBACK = {"bdist_wheel": WheelWithoutWheel}


setup(
    version=amq_version(),
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
    cmdclass={"build_ext": BuildExt, **FALLBACK},
)
