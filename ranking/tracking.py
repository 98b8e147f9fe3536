"""MLflow tracking of ``train`` and ``evaluate``: every invocation is one MLflow run.

Layout of a train run (see docs/ranking-models.md)::

    params     model, hp.<hyperparameter>..., feature_set, n_features, data_sha256, ...
    metrics    per-epoch history (step = epoch/iteration), final valid.<metric>, test.<metric>
    tags       verirank.kind=train, verirank.git_sha, verirank.model
    artifacts  config.json, ranker/ (the saved model directory), run.trec,
               per_query.csv, feature_importance.png
    model      "model": an MLflow pyfunc wrapping the ranker (registrable)

Metric names cannot contain ``@`` in MLflow: ``NDCG@5`` is logged as
``NDCG_at_5``. Importing this module imports MLflow (slow), so commands
import it inside their functions.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Mapping, Optional

import mlflow
import mlflow.pyfunc
import numpy as np
import pandas as pd

from ranking.metrics import EvalResult, Run, write_trec_run
from ranking.models.base import RANKER_FILE, Ranker, load_ranker
from verirank_core.errors import ConfigError, RankingError, StoreError

if TYPE_CHECKING:
    from mlflow.models.signature import ModelSignature

__all__ = [
    "DEFAULT_TRACKING_URI", "configure", "start_run", "metric_key", "assert_no_secrets",
    "log_config", "log_params", "log_history", "log_eval", "log_run_file", "log_per_query",
    "log_importance_plot", "log_ranker", "load_model", "register_model", "RankerPyfunc",
]

DEFAULT_TRACKING_URI = "sqlite:///mlflow.db"


# --- setup ------------------------------------------------------------------------------


def configure(tracking_uri: Optional[str], experiment: str) -> str:
    """Point MLflow at ``tracking_uri`` (default sqlite:///mlflow.db) and ``experiment``."""
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    uri = tracking_uri or DEFAULT_TRACKING_URI
    mlflow.set_tracking_uri(uri)
    try:
        if mlflow.get_experiment_by_name(experiment) is None:
            mlflow.create_experiment(experiment, artifact_location=default_artifact_location(uri))
        mlflow.set_experiment(experiment)
    except Exception as exc:  # MLflow raises its own types for bad URIs and stores
        raise StoreError(f"cannot open MLflow experiment {experiment!r} at {uri}: {exc}") from exc
    return uri


def default_artifact_location(tracking_uri: str) -> Optional[str]:
    """Artifacts of a sqlite store go beside the database (``<db dir>/mlartifacts``).

    MLflow's own default is ``./mlruns`` in the *working directory*, which
    scatters artifacts when the same database is used from several places.
    """
    if not tracking_uri.startswith("sqlite:///"):
        return None  # a server or file store decides for itself
    db_path = Path(tracking_uri[len("sqlite:///"):]).resolve()
    return (db_path.parent / "mlartifacts").as_uri()


@contextlib.contextmanager
def start_run(kind: str, run_name: Optional[str] = None, tags: Optional[Mapping[str, str]] = None) -> Iterator[mlflow.ActiveRun]:
    """An MLflow run tagged with its kind (train/evaluate) and the git sha."""
    from verirank_core.store import git_sha

    all_tags = {"verirank.kind": kind, "verirank.git_sha": git_sha(), **(tags or {})}
    with mlflow.start_run(run_name=run_name, tags=all_tags) as run:
        yield run


def metric_key(name: str) -> str:
    """An MLflow-safe metric name: ``NDCG@5`` -> ``NDCG_at_5``."""
    return re.sub(r"[^\w./\- :]", "_", name.replace("@", "_at_"))


# --- secrets guard ------------------------------------------------------------------------

_SECRET_KEY = re.compile(r"(^|_)(api_?key|secret|password|passwd|token|credentials?)$", re.IGNORECASE)


def assert_no_secrets(config: Mapping[str, object], environ: Optional[Mapping[str, str]] = None) -> None:
    """Refuse to log a config that holds a secret.

    The config names environment variables (``*_env`` keys) and never holds
    keys by design; this checks it: no field is named like a secret, and no
    value equals the content of an environment variable a ``*_env`` field names.
    """
    environ = os.environ if environ is None else environ
    secrets = set()
    flat = list(_walk(config))
    for path, value in flat:
        if path.endswith("_env") and isinstance(value, str) and environ.get(value):
            secrets.add(environ[value])
    for path, value in flat:
        leaf = path.rsplit(".", 1)[-1]
        if _SECRET_KEY.search(leaf) and value not in (None, ""):
            raise ConfigError(f"config field {path} looks like a secret; refusing to log it")
        if isinstance(value, str) and value in secrets:
            raise ConfigError(f"config field {path} holds the value of a secret environment variable")


def _walk(node: object, prefix: str = "") -> Iterator[tuple[str, object]]:
    if isinstance(node, Mapping):
        for key, value in node.items():
            yield from _walk(value, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(node, (list, tuple)):
        for i, value in enumerate(node):
            yield from _walk(value, f"{prefix}[{i}]")
    else:
        yield prefix, node


# --- logging --------------------------------------------------------------------------------


def log_config(config: Mapping[str, object], name: str = "config.json") -> None:
    """Log the resolved config as a JSON artifact (after the secrets check)."""
    assert_no_secrets(config)
    mlflow.log_dict(dict(config), name)


def log_params(params: Mapping[str, object]) -> None:
    """Log params; values are stringified and cut to MLflow's 6000-character limit."""
    clean = {}
    for key, value in params.items():
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        clean[key] = text[:6000]
    mlflow.log_params(clean)


def log_history(history: list[dict[str, float]]) -> None:
    """Per-epoch (or per-iteration) metrics, ``step`` = index in the history."""
    for step, record in enumerate(history):
        values = {metric_key(k): float(v) for k, v in record.items() if np.isfinite(v)}
        if values:
            mlflow.log_metrics(values, step=step)


def log_eval(result: EvalResult, prefix: str) -> dict[str, float]:
    """Log both averages of an evaluation as ``<prefix>.<metric>`` and ``<prefix>.answerable.<metric>``."""
    values = {f"{prefix}.{metric_key(m)}": v for m, v in result.mean.items()}
    values.update({f"{prefix}.answerable.{metric_key(m)}": v for m, v in result.mean_answerable.items()})
    values[f"{prefix}.n_queries"] = float(len(result.per_query))
    values[f"{prefix}.n_answerable"] = float(len(result.answerable))
    mlflow.log_metrics(values)
    return values


def log_run_file(run: Run, name: str = "run.trec", tag: str = "verirank") -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        write_trec_run(path, run, tag=tag)
        mlflow.log_artifact(str(path))


def per_query_csv(result: EvalResult) -> str:
    import csv

    buf = io.StringIO()
    rows = result.to_rows()
    writer = csv.DictWriter(buf, fieldnames=["qid", "answerable", *result.metrics], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def log_per_query(result: EvalResult, name: str = "per_query.csv") -> None:
    mlflow.log_text(per_query_csv(result), name)


def importance_png(importance: Mapping[str, float], title: str, top: int = 20) -> bytes:
    """A horizontal bar chart of the ``top`` features by absolute importance."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    items = sorted(importance.items(), key=lambda kv: abs(kv[1]), reverse=True)[:top][::-1]
    fig, ax = plt.subplots(figsize=(6, 0.3 * max(len(items), 3) + 1.2))
    ax.barh([k for k, _ in items], [v for _, v in items], color="#4c72b0")
    ax.set_title(title)
    ax.axvline(0, color="black", linewidth=0.6)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return buf.getvalue()


def log_importance_plot(importance: Mapping[str, float], title: str, name: str = "feature_importance.png") -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(importance_png(importance, title))
        mlflow.log_artifact(str(path))
        mlflow.log_dict({k: float(v) for k, v in importance.items()}, Path(name).stem + ".json")


# --- the model as an MLflow pyfunc ---------------------------------------------------------


class RankerPyfunc(mlflow.pyfunc.PythonModel):
    """MLflow wrapper of a saved :class:`Ranker` (artifact ``ranker`` = its directory).

    Input: a DataFrame holding the model's feature columns (by name) and, for
    listwise models, a ``qid`` column; output: one score per row.
    """

    def load_context(self, context: mlflow.pyfunc.PythonModelContext) -> None:
        self.ranker = load_ranker(context.artifacts["ranker"])

    # MLflow reads these hints as the input schema: a DataFrame of any columns
    def predict(self, context: mlflow.pyfunc.PythonModelContext, model_input: pd.DataFrame,
                params: Optional[dict[str, object]] = None) -> np.ndarray:
        frame = model_input if isinstance(model_input, pd.DataFrame) else pd.DataFrame(model_input)
        names = self.ranker.feature_names_
        missing = [n for n in names if n not in frame.columns]
        if missing:
            raise RankingError(f"model input lacks feature columns {missing[:10]}")
        groups = frame["qid"].astype(str).to_numpy() if "qid" in frame.columns else None
        return self.ranker.predict(frame[names].to_numpy(dtype=np.float64), groups)


def log_ranker(model: Ranker, name: str = "model") -> str:
    """Log ``model`` twice: as the raw ``ranker/`` directory and as an MLflow pyfunc.

    Returns the pyfunc's model URI (``models:/...``); ``runs:/<run_id>/model``
    also resolves to it.
    """
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = model.save(Path(tmp) / "ranker")
        mlflow.log_artifacts(str(model_dir), artifact_path="ranker")
        info = mlflow.pyfunc.log_model(
            name=name,
            # "models from code": MLflow stores this small file instead of a pickle
            python_model=str(Path(__file__).with_name("mlflow_model.py")),
            artifacts={"ranker": str(model_dir)},
            pip_requirements=_requirements(model),
            signature=_signature(model),
            input_example=_input_example(model),
        )
    return info.model_uri


def _signature(model: Ranker) -> ModelSignature:
    """Input: one double column per feature (+ optional ``qid`` string); output: scores."""
    from mlflow.models.signature import ModelSignature
    from mlflow.types.schema import ColSpec, Schema, TensorSpec

    columns = [ColSpec("double", name) for name in model.feature_names_]
    columns.append(ColSpec("string", "qid", required=False))
    return ModelSignature(inputs=Schema(columns), outputs=Schema([TensorSpec(np.dtype("float64"), (-1,))]))


def _input_example(model: Ranker) -> pd.DataFrame:
    """Two zero rows of one query: enough for MLflow to check the model loads and predicts."""
    example = pd.DataFrame(np.zeros((2, len(model.feature_names_))), columns=model.feature_names_)
    example["qid"] = "q1"
    return example


def _requirements(model: Ranker) -> list[str]:
    from verirank_core.store import package_versions

    versions = package_versions(("mlflow", "numpy", "pandas", "scikit-learn", "lightgbm", "torch", "allrank"))
    wanted = ["mlflow", "numpy", "pandas", "scikit-learn"]
    if model.name == "lambdamart":
        wanted.append("lightgbm")
    if model.name.startswith("tmlp"):
        wanted += ["torch", "allrank"]
    return [f"{pkg}=={versions[pkg]}" for pkg in wanted if versions[pkg] != "not installed"]


def load_model(uri: str | Path) -> Ranker:
    """A fitted Ranker from a local model directory, ``runs:/<id>/model`` or ``models:/name/version``."""
    local = Path(str(uri))
    if (local / RANKER_FILE).exists():
        return load_ranker(local)
    if not re.match(r"^[a-zA-Z][\w+.-]*:/", str(uri)):
        raise StoreError(f"{uri} is neither a saved model directory nor an MLflow model URI")
    try:
        pyfunc = mlflow.pyfunc.load_model(str(uri))
    except Exception as exc:
        raise StoreError(f"cannot load MLflow model {uri}: {exc}") from exc
    wrapper = pyfunc.unwrap_python_model()
    if not isinstance(wrapper, RankerPyfunc):
        raise StoreError(f"{uri} is not a verirank ranker (it wraps {type(wrapper).__name__})")
    return wrapper.ranker


def register_model(model_uri: str, name: str) -> str:
    """Register a logged model in the registry; returns the new version number."""
    try:
        version = mlflow.register_model(model_uri, name)
    except Exception as exc:
        raise StoreError(f"cannot register {model_uri} as {name!r}: {exc}") from exc
    return str(version.version)
