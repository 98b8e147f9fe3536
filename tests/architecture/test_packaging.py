"""What `pip install .` installs: the project's own packages and its data, nothing else.

A non-editable install only has what pyproject.toml lists, so a package left out of
the list, or a data path built from ``__file__``, works in a checkout and breaks for a user.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: run from a checkout only, never installed
NOT_INSTALLED = ("tests", "experiments", "benchmarks", "notebooks")


def _setuptools() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]


def _code_packages(listed: list[str]) -> set[str]:
    """Every folder with an ``__init__.py`` under the top-level packages pyproject lists."""
    found = set()
    for top in {name.split(".")[0] for name in listed}:
        for init in (REPO / top).rglob("__init__.py"):
            found.add(".".join(init.parent.relative_to(REPO).parts))
    return found


def test_every_code_package_is_listed_and_nothing_of_the_checkout_is():
    listed = _setuptools()["packages"]
    assert _code_packages(listed) <= set(listed)
    assert not any(name.split(".")[0] in NOT_INSTALLED for name in listed)


def test_the_data_folders_are_installed_under_names_that_shadow_nothing():
    """``datasets/`` would shadow HuggingFace's ``datasets`` if it were installed (or importable) by that name."""
    mapping = _setuptools()["package-dir"]
    assert mapping == {"verirank_data": "datasets", "verirank_configs": "configs"}
    assert not (REPO / "datasets" / "__init__.py").exists()


def test_the_bundled_paths_resolve_to_the_checkouts_data():
    from verirank_core import resources

    assert resources.DEFAULT_CONFIG == REPO / "configs" / "default.yaml"
    assert resources.BUNDLED_MODEL == REPO / "datasets" / "models" / "lr-pretrain"
    for path in (resources.DEFAULT_CONFIG, resources.KEYWORDS_FILE):
        assert path.is_file(), path
    for path in (resources.DEMO_DIR, resources.WORLDS_DIR, resources.KNOWLEDGE_DIR, resources.TASKS_DIR,
                 resources.SMALL_BENCH, resources.BUNDLED_MODEL, resources.PRETRAIN_FEATURES):
        assert path.is_dir(), path


def _datasets_paths_from_file(path: Path) -> list[int]:
    """Lines where an expression joins ``__file__`` with ``"datasets"`` or ``"configs"``."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            strings = {n.value for n in ast.walk(node) if isinstance(n, ast.Constant)}
            if "__file__" in names and strings & {"datasets", "configs"}:
                lines.append(node.lineno)
    return sorted(set(lines))


def test_installed_modules_find_their_data_through_the_core():
    """Data paths come from verirank_core/resources.py, which works in a wheel install too."""
    owners_pending: set[str] = set()  # a module not moved yet, while its owner rewrites it
    found = {}
    for name in _setuptools()["packages"]:
        folder = REPO / Path(*name.split("."))
        if not (folder / "__init__.py").exists():
            continue  # a data-only package
        for module in folder.glob("*.py"):
            rel = module.relative_to(REPO).as_posix()
            if _datasets_paths_from_file(module):
                found[rel] = _datasets_paths_from_file(module)
    assert set(found) - owners_pending == set()
    # a module fixed leaves the list: the exception never outlives its reason
    assert set(found) == owners_pending


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """Build the wheel from a copy of the checkout (no network: the venv's setuptools)."""
    import shutil
    import subprocess
    import sys

    tmp_path = tmp_path_factory.mktemp("wheel")
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    listed = _setuptools()["packages"]
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "build")
    for top in sorted({name.split(".")[0] for name in listed} - {"verirank_data", "verirank_configs"}) \
            + ["datasets", "configs", *NOT_INSTALLED]:
        if (REPO / top).is_dir():
            shutil.copytree(REPO / top, source / top, ignore=skip)
    (source / "datasets" / "howtobench" / "build").mkdir(exist_ok=True)
    (source / "datasets" / "howtobench" / "build" / "local.txt").write_text("a user's own build\n")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(tmp_path / "dist"), str(source)], check=True, capture_output=True, timeout=300)
    return next((tmp_path / "dist").glob("verirank-*.whl"))


@pytest.mark.slow
def test_the_wheel_holds_the_projects_packages_and_data_and_nothing_else(wheel):
    import zipfile

    listed = _setuptools()["packages"]
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.startswith("verirank-")}
    assert tops == {name.split(".")[0] for name in listed}
    for path in ("verirank_configs/default.yaml", "verirank_data/models/lr-pretrain/ranker.json",
                 "verirank_data/howtobench/small/qrels.txt", "verirank_data/worlds/clock-app.yaml"):
        assert path in names, path
    assert not any("howtobench/build/" in n for n in names)


@pytest.mark.slow
def test_the_demo_runs_from_the_installed_wheel_outside_the_checkout(wheel, tmp_path):
    """What a user gets from `pip install .`: the wheel's files on the path, run from another folder.

    The wheel is unpacked (an install without the network: dependencies come from this venv) and
    put first on the path, so a module or data file the wheel lacks fails here, not on the user's machine.
    """
    import os
    import subprocess
    import sys
    import zipfile

    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = {**os.environ, "PYTHONPATH": str(site), "HF_HUB_OFFLINE": "1",
           "MLFLOW_DISABLE_TELEMETRY": "true", "VERIRANK_VERDICT_CACHE": "off"}
    where = subprocess.run([sys.executable, "-c", "import verirank, execution; print(verirank.__file__, execution.__file__)"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, check=True)
    assert all(path.startswith(str(site)) for path in where.stdout.split()), where.stdout
    run = subprocess.run([sys.executable, "-m", "verirank", "demo", "--queries", "2", "--out", str(tmp_path / "out")],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=500)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert (tmp_path / "out" / "report.html").is_file()
    assert (tmp_path / "out" / "reranked.trec").read_text("utf-8").strip()
    assert str(site / "verirank_data") in run.stdout  # the demo's data came from the wheel
