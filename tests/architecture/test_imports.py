"""Static checks of the package layout, read from the source with ``ast`` (function-local imports too).

See docs/architecture.md for the picture these tests hold the code to.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("importgraph", HERE / "importgraph.py")
importgraph = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(importgraph)

STAGES = ("extraction", "execution", "ranking")
APPS = ("verirank", "howtobench", "experiments", "benchmarks")


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    found = importgraph.module_graph()
    # the walk found the whole project, not a corner of it
    assert {"verirank_core.stages", "execution.stage", "phonesim.simulator", "howtobench.build",
            "ranking.pipeline", "extraction.pipeline", "verirank.cli"} <= set(found)
    return found


def test_the_graph_reader_sees_function_local_imports(tmp_path):
    modules = {"pkg.a": tmp_path / "a.py", "pkg.b": tmp_path / "b.py"}
    modules["pkg.a"].write_text("def f():\n    from pkg.b import thing\n    import pkg.b as b\n")
    modules["pkg.b"].write_text("from . import a\n")
    assert importgraph.imports_of("pkg.a", modules["pkg.a"], modules) == {"pkg.b"}
    assert importgraph.imports_of("pkg.b", modules["pkg.b"], modules) == {"pkg.a"}
    assert importgraph.find_cycle({"pkg.a": {"pkg.b"}, "pkg.b": {"pkg.a"}}) is not None


def test_no_import_cycle_between_modules(graph):
    assert importgraph.all_cycles_edges(graph) == []


def test_no_import_cycle_between_packages(graph):
    packages = importgraph.package_graph(graph)
    assert importgraph.all_cycles_edges(packages) == []


def test_the_core_imports_nothing_of_the_project_outside_itself(graph):
    outside = {(m, d) for m, deps in graph.items() if m.startswith("verirank_core")
               for d in deps if importgraph.package_of(d) != "verirank_core"}
    assert outside == set()


@pytest.mark.parametrize("stage", STAGES)
def test_a_stage_imports_only_the_core_and_the_simulator(graph, stage):
    """No stage imports the CLI, the app, the benchmark builder or another stage."""
    allowed = {stage, "verirank_core", "phonesim"}
    bad = {(m, d) for m, deps in graph.items() if importgraph.package_of(m) == stage
           for d in deps if importgraph.package_of(d) not in allowed}
    assert bad == set()


def test_the_simulator_imports_nothing_from_execution(graph):
    """phonesim implements the core's Device interface; it needs nothing from stage 2."""
    bad = {(m, d) for m, deps in graph.items() if m.startswith("phonesim")
           for d in deps if importgraph.package_of(d) not in ("phonesim", "verirank_core")}
    assert bad == set()


def test_the_device_interface_imports_no_implementation(graph):
    assert graph["verirank_core.device"] <= {"verirank_core.errors"}


def test_stage_objects_follow_the_contract():
    """Every stage the pipelines use has a name, append_only, requires, fingerprint(cfg) and
    __call__(run, cfg, progress)."""
    import inspect

    from execution.stage import ExecuteStage
    from extraction.pipeline import ExtractStage, FetchStage, SearchStage
    from ranking.pipeline import FeaturesStage, RerankStage
    from verirank_core.stages import MADE_BY, Stage

    for cls in (SearchStage, FetchStage, ExtractStage, ExecuteStage, FeaturesStage, RerankStage):
        params = list(inspect.signature(cls.__call__).parameters)
        assert params == ["self", "run", "cfg", "progress"], cls
        assert isinstance(cls.name, str) and isinstance(cls.append_only, bool)
        # what it reads is declared, and the runner knows which command writes each file
        assert isinstance(cls.requires, tuple) and set(cls.requires) <= set(MADE_BY), cls
    assert isinstance(RerankStage(model="x"), Stage)


def test_only_the_runner_writes_the_stage_log():
    """RunDir.start_stage/finish_stage are called by verirank_core/stages.py alone: one driver for every pipeline."""
    import ast

    callers = set()
    for module, path in importgraph.project_modules().items():
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("start_stage", "finish_stage")):
                callers.add(module)
    assert callers == {"verirank_core.stages"}


def test_config_is_typed_below_the_cli():
    """No parameter named config/cfg is annotated ``Any`` in the stages, the simulator or the builder."""
    import ast

    untyped = []
    for module, path in importgraph.project_modules().items():
        if importgraph.package_of(module) not in (*STAGES, "phonesim", "howtobench", "verirank_core"):
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for arg in node.args.args + node.args.kwonlyargs:
                    if arg.arg in ("config", "cfg") and arg.annotation is not None \
                            and ast.unparse(arg.annotation) in ("Any", "'Any'"):
                        untyped.append(f"{module}.{node.name}")
    assert untyped == []
