"""Builds resmon._resmon: the binding in python/src/ plus libresmon's own
sources, compiled into the one extension so the installed package needs no
libresmon.so (Jansson, a Debian runtime library, is linked dynamically:
Debian's libjansson.a is not position-independent).

The library's source list is read from the top-level CMakeLists.txt
(RESMON_SOURCES), so the two builds cannot drift apart; so is the list of
`resmon compare`'s engine (RESMON_COMPARE_SOURCES), which _resmon.compare
runs for the pytest plugin's --resmon-compare.  The library's files
lie outside this directory, which setup() arguments may not name, so they are
added when the extension is built."""
import pathlib
import re

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent.parent


def cmake_list(name):
    cmake = (ROOT / "CMakeLists.txt").read_text()
    match = re.search(r"set\(" + name + r"\s+([^)]*)\)", cmake)
    if not match:
        raise SystemExit(f"setup.py: {name} not found in CMakeLists.txt")
    return [str(ROOT / name) for name in match.group(1).split()]


def library_sources():
    # The library, then `resmon compare`'s engine (RESMON_COMPARE_SOURCES),
    # which _resmon.compare runs: the command's own code, not a second copy.
    return cmake_list("RESMON_SOURCES") + cmake_list("RESMON_COMPARE_SOURCES")


class build_ext_with_library(build_ext):
    def build_extensions(self):
        for extension in self.extensions:
            extension.sources += library_sources()
            extension.include_dirs += [str(ROOT / "include"), str(ROOT / "src"), str(ROOT / "common"),
                                       str(ROOT / "tools" / "resmon")]
            extension.depends += [str(ROOT / "include" / "resmon.h"), str(ROOT / "tools" / "resmon" / "compare.h")]
        super().build_extensions()


extension = Extension(
    "resmon._resmon",
    sources=["src/module.c", "src/monitor_object.c", "src/python_profiler.c", "src/compare_binding.c"],
    include_dirs=["src"],
    # RESMON_STATIC_DEFINE: the library's symbols stay hidden inside the
    # extension; only PyInit__resmon is exported.
    define_macros=[("RESMON_STATIC_DEFINE", None), ("_GNU_SOURCE", None)],
    extra_compile_args=["-std=c11", "-fvisibility=hidden", "-Wall", "-Wextra"],
    libraries=["jansson", "m", "dl", "pthread"],
    depends=["src/binding.h"],
)

setup(ext_modules=[extension], cmdclass={"build_ext": build_ext_with_library})
