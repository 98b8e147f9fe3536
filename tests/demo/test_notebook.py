"""notebooks/analyse_run.ipynb runs on the demo's output (nbclient, the venv's python3 kernel)."""

from __future__ import annotations

import json
import os

import nbformat
from nbclient import NotebookClient


def test_the_analysis_notebook_runs_on_the_demo_output(demo_run, repo_root, monkeypatch):
    path = repo_root / "notebooks" / "analyse_run.ipynb"
    notebook = nbformat.read(path, as_version=4)
    monkeypatch.setenv("VERIRANK_RUN", str(demo_run.out))
    client = NotebookClient(notebook, timeout=180, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()  # raises CellExecutionError on the first failing cell

    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert str(demo_run.out) in text

    # the wins/losses line agrees with summary.json
    summary = json.loads((demo_run.out / "summary.json").read_text())
    deltas = [summary["per_query"]["LR"][q]["NDCG@5"] - summary["per_query"]["Original order"][q]["NDCG@5"]
              for q in summary["per_query"]["LR"]]
    wins, losses = sum(d > 1e-9 for d in deltas), sum(d < -1e-9 for d in deltas)
    assert f"{wins} wins, {losses} losses, {len(deltas) - wins - losses} ties" in text
    # the feature histograms were drawn
    assert any("image/png" in o.get("data", {}) for o in outputs if o.output_type == "display_data")
    assert os.environ.get("VERIRANK_RUN") == str(demo_run.out)
