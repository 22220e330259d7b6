"""Build step for the ingest hot path: its modules are compiled with Cython when a C compiler is present.

Everything else about the package lives in pyproject.toml. The modules stay plain Python (no Cython-only
syntax): compiled, a line is prepared in ~70 % of the CPU time (bench/RESULTS.md, "Ingest"); where the
build cannot compile (no compiler), the extensions are optional and the same code runs interpreted.
"""

from __future__ import annotations

import os
import runpy
from pathlib import Path

from setuptools import Extension, setup

# Read by path: nothing of the package (nor its dependencies) is importable before it is installed.
COMPILED_MODULES = runpy.run_path(str(Path(__file__).parent / "stacklens/ingest/compiled.py"))[
    "COMPILED_MODULES"
]


def _extensions() -> list[Extension]:
    if os.environ.get("STACKLENS_PURE_PYTHON"):
        return []
    from Cython.Build import cythonize

    # -O1: the code is calls into the Python C API, which -O2/-O3 barely speed up (~3 % measured) while
    # compiling the ~1 MB C files a third slower; the build is part of a fresh clone's first `make up`.
    modules = [
        Extension(name, [name.replace(".", "/") + ".py"], optional=True, extra_compile_args=["-O1"])
        for name in COMPILED_MODULES
    ]
    # binding=True keeps functions introspectable (signatures, __wrapped__), as plain Python functions are.
    return cythonize(
        modules,
        language_level=3,
        quiet=True,
        nthreads=os.cpu_count() or 1,
        compiler_directives={"binding": True},
    )


setup(
    ext_modules=_extensions(),
    options={"build_ext": {"parallel": os.cpu_count() or 1}},
)
