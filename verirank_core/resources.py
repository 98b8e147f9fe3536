"""Where the data shipped with verirank lives: one definition of each bundled path.

The repository keeps its data in ``datasets/`` and its default settings in
``configs/``. Installed (``pip install .``), they become the data-only packages
``verirank_data`` and ``verirank_configs`` (the ``package-dir`` mapping of
``pyproject.toml``): ``datasets/`` is never installed or imported under its own
name, which would shadow HuggingFace's ``datasets``. An editable install maps the
same names back to the repository's folders, so the paths below work in both.

The folders are found through the import system (``importlib.util.find_spec``),
not through ``__file__``: that is what ``importlib.resources`` does too, but its
``files()`` rejects the extra path entry setuptools' editable finder gives a
folder without ``__init__.py`` on Python 3.11.
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path

from verirank_core.errors import StoreError

__all__ = [
    "DATA_PACKAGE", "CONFIG_PACKAGE", "data_path", "DEFAULT_CONFIG", "DEMO_DIR", "WORLDS_DIR",
    "IMPORTED_WORLDS_DIR", "KNOWLEDGE_DIR", "KEYWORDS_FILE", "TASKS_DIR", "SMALL_BENCH", "FULL_BENCH",
    "BUNDLED_MODEL", "PRETRAIN_FEATURES",
]

#: ``datasets/`` once installed
DATA_PACKAGE = "verirank_data"
#: ``configs/`` once installed
CONFIG_PACKAGE = "verirank_configs"


@lru_cache(maxsize=None)
def _package_dir(package: str) -> Path:
    """The folder of an installed data-only package."""
    spec = importlib.util.find_spec(package)
    folders = [Path(p) for p in ((spec.submodule_search_locations if spec else None) or ()) if Path(p).is_dir()]
    if not folders:
        raise StoreError(f"verirank's bundled data ({package}) is not installed: reinstall verirank "
                         "(`pip install .`, or `make install` in a checkout)")
    return folders[0]


def data_path(*parts: str) -> Path:
    """A file or folder of ``datasets/`` (it may not exist yet, e.g. a build's output folder)."""
    return _package_dir(DATA_PACKAGE).joinpath(*parts)


#: the default settings every config is merged over
DEFAULT_CONFIG = _package_dir(CONFIG_PACKAGE) / "default.yaml"
#: the quick-start pages and queries of `verirank run` with no inputs
DEMO_DIR = data_path("demo")
#: the simulator's world files (``sim:<name>``)
WORLDS_DIR = data_path("worlds")
#: where `verirank worlds import-...` writes the worlds it imports
IMPORTED_WORLDS_DIR = data_path("worlds", "imported")
#: the knowledge cards of stage 2
KNOWLEDGE_DIR = data_path("knowledge")
#: the mobile UI keyword list of the features
KEYWORDS_FILE = data_path("keywords", "mobile_ui_keywords.txt")
#: the HowToBench task definitions
TASKS_DIR = data_path("howtobench", "tasks")
#: the committed --small HowToBench subset (12 queries x 10 pages over 4 worlds): the demo's data
SMALL_BENCH = data_path("howtobench", "small")
#: the full HowToBench build (`verirank howtobench build`), not shipped
FULL_BENCH = data_path("howtobench", "build")
#: the zero-shot ranker shipped with the project (datasets/models/README.md)
BUNDLED_MODEL = data_path("models", "lr-pretrain")
#: the synthetic pre-training features it was trained on
PRETRAIN_FEATURES = data_path("models", "pretrain-features")
