"""Finds reverie's native extension, reverie._reverie.

Installed (``cmake --install``) and in the build tree
(``build/release/python/reverie``) the extension sits next to this file. In
the source tree (``import reverie`` from the repository root, through the
``reverie`` link to ``python/reverie``) it is taken from a build tree:
``$REVERIE_BUILD_DIR`` when set, else ``build/release`` beside the sources.
"""

import glob
import importlib.machinery
import importlib.util
import os
import sys


def _build_tree_candidates():
    here = os.path.dirname(os.path.realpath(__file__))
    source_root = os.path.dirname(os.path.dirname(here))
    build = os.environ.get("REVERIE_BUILD_DIR")
    dirs = [build] if build else [os.path.join(source_root, "build", "release")]
    for d in dirs:
        pattern = os.path.join(d, "python", "reverie", "_reverie*" + ".so")
        yield from sorted(glob.glob(pattern))


def _load_from_build_tree():
    for path in _build_tree_candidates():
        if not path.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
            continue
        loader = importlib.machinery.ExtensionFileLoader("reverie._reverie", path)
        spec = importlib.util.spec_from_file_location("reverie._reverie", path, loader=loader)
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
        sys.modules["reverie._reverie"] = module
        return module
    raise ImportError(
        "reverie: the native module is not built for this Python "
        f"({sys.version.split()[0]}): run the README's first command (cmake --build "
        "--preset release), or set REVERIE_BUILD_DIR to a build folder "
        "(docs/PYTHON.md)")


try:
    from . import _reverie as native  # noqa: F401  (installed or build-tree package)
except ImportError:
    native = _load_from_build_tree()


def script_dirs():
    """Where an installed package finds the script library (empty otherwise:
    the native module already knows the source tree's scripts/)."""
    try:
        from . import _install_paths
    except ImportError:
        return []
    here = os.path.dirname(os.path.abspath(__file__))
    return [os.path.normpath(os.path.join(here, _install_paths.SCRIPTS_DIR_FROM_PACKAGE))]
