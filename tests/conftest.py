"""Fixtures shared by every test module.

Tests are collected with ``--import-mode=importlib`` (see pyproject.toml):
the allrank wheel installs a top-level ``tests`` package that must never be
imported in place of this folder, so this folder has no ``__init__.py``.
Helpers shared between test modules live in ``tests/support/`` and are
imported through the ``support`` fixture-free path added below.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("VERIRANK_SHARED", REPO_ROOT.parent / "shared"))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("VERIRANK_NO_PROGRESS", "1")
# no verdict from the per-user cache (or from another test): every test runs its pages
# (tests/execution/test_verdict_cache.py turns it on, with a file of its own)
os.environ.setdefault("VERIRANK_VERDICT_CACHE", "off")
# label vectors under each run, not in the per-user file: a test embeds what it embeds
os.environ.setdefault("VERIRANK_VECTOR_CACHE", "cache/vectors.sqlite")

# tests/support is importable as `verirank_testsupport` without shadowing anything
_SUPPORT = Path(__file__).resolve().parent / "support"
if str(_SUPPORT) not in sys.path:
    sys.path.insert(0, str(_SUPPORT))

# Fixtures of the support modules, available to every test module by name.
pytest_plugins = ["support_adb"]


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.fail(f"shared data not found at {SHARED} (set VERIRANK_SHARED)")
    return SHARED


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT
