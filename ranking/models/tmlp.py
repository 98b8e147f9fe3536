"""TMLP: allRank's transformer ranker trained with LambdaLoss or NeuralNDCG.

Architecture (the paper's): a fully connected layer of 96 units without
input normalisation, two transformer encoder blocks (feed-forward width
384, ``n_heads`` attention heads, dropout 0.1, no positional encoding, so
the input order of a slate does not matter), and a linear output layer
giving one score per document. The transformer lets each document's score
depend on the other documents of its query, so ``predict`` needs ``groups``.

Losses (allRank's implementations):

* ``lambdaloss``: LambdaLoss with the NDCG-Loss2++ weighing scheme
  (``mu`` = 10, ``sigma`` = 1);
* ``neuralndcg``: NeuralNDCG (``temperature`` = 1, gain 2^label - 1).

Training: Adam (lr 0.001), StepLR (step 50, gamma 0.1), ``epochs`` passes
over shuffled batches of ``batch_size`` slates, each batch padded to its
longest slate (labels -1 and a mask mark the padding, allRank's
convention). With an ``eval_set``, the weights of the epoch with the best
validation NDCG@5 are kept and training stops after ``patience`` epochs
without improvement.

Scaling: ``scaling="minmax"`` (default) maps every feature to [0, 1] with the
minimum and maximum seen in training (constant features map to 0). It is a
fixed affine map stored with the model, not a learned layer, so the network
itself still has no input normalisation; verirank features are already in
[0, 1], where it is (nearly) the identity.

Determinism: training runs under ``torch.random.fork_rng`` seeded with
``seed`` (the caller's RNG state is restored afterwards), with
``torch.use_deterministic_algorithms(True)`` and ``num_threads`` CPU threads;
the previous torch settings are restored when ``fit`` returns.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Optional

import numpy as np

from ranking.models._allrank import PADDED_Y_VALUE, load_allrank
from ranking.models.base import EvalSet, Ranker
from ranking.models.data import query_slates
from ranking.models.evaluation import ndcg_at
from verirank_core.errors import ConfigError
from verirank_core.json_types import JSONObject

if TYPE_CHECKING:
    import torch

    #: a listwise loss: (predicted scores, padded labels) -> scalar tensor
    LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]

__all__ = ["TMLPRanker"]

_WEIGHTS_FILE = "weights.pt"
_LOSSES = ("lambdaloss", "neuralndcg")


@contextlib.contextmanager
def _torch_settings(seed: int, num_threads: int) -> Iterator[None]:
    """Seeded, deterministic, fixed-thread torch; previous settings restored on exit."""
    import torch

    previous_threads = torch.get_num_threads()
    previous_deterministic = torch.are_deterministic_algorithms_enabled()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        torch.set_num_threads(num_threads)
        torch.use_deterministic_algorithms(True)
        try:
            yield
        finally:
            torch.use_deterministic_algorithms(previous_deterministic)
            torch.set_num_threads(previous_threads)


def _pad(X: np.ndarray, y: Optional[np.ndarray], slates: list[np.ndarray]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Stack slates into [batch, length, features] tensors padded with allRank's convention."""
    import torch

    length = max(len(s) for s in slates)
    xb = np.zeros((len(slates), length, X.shape[1]), dtype=np.float32)
    yb = np.full((len(slates), length), PADDED_Y_VALUE, dtype=np.float32)
    for b, rows in enumerate(slates):
        xb[b, : len(rows)] = X[rows]
        yb[b, : len(rows)] = 0.0 if y is None else y[rows]
    xt, yt = torch.from_numpy(xb), torch.from_numpy(yb)
    mask = yt == PADDED_Y_VALUE
    return xt, yt, mask


@dataclasses.dataclass(eq=False)
class TMLPRanker(Ranker):
    """allRank transformer ranker (see module docstring for the defaults' origin).

    Attributes after fit: ``net_`` (the torch module), ``x_min_``/``x_range_``
    (scaling), ``best_epoch_``, ``history_`` (per-epoch ``train_loss``,
    ``train_ndcg@5``, ``valid_loss``, ``valid_ndcg@5``, ``lr``).
    """

    listwise = True

    loss: str = "lambdaloss"
    fc_units: int = 96
    fc_activation: Optional[str] = "ReLU"
    fc_dropout: float = 0.0
    n_blocks: int = 2
    d_ff: int = 384
    n_heads: int = 2
    dropout: float = 0.1
    mu: float = 10.0
    sigma: float = 1.0
    temperature: float = 1.0
    learning_rate: float = 0.001
    lr_step: int = 50
    lr_gamma: float = 0.1
    epochs: int = 20
    batch_size: int = 64
    patience: int = 20
    scaling: str = "minmax"
    num_threads: int = 1
    seed: int = 42

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"tmlp-{self.loss}"

    # --- building blocks ------------------------------------------------------------

    def _check_params(self) -> None:
        if self.loss not in _LOSSES:
            raise ConfigError(f"TMLP loss must be one of {_LOSSES}, got {self.loss!r}")
        if self.fc_units % self.n_heads:
            raise ConfigError(f"fc_units ({self.fc_units}) must be divisible by n_heads ({self.n_heads})")
        if self.scaling not in ("minmax", "none"):
            raise ConfigError(f"scaling must be 'minmax' or 'none', got {self.scaling!r}")
        if self.epochs < 1 or self.batch_size < 1:
            raise ConfigError("epochs and batch_size must be >= 1")

    def _build_net(self, n_features: int) -> torch.nn.Module:
        ar = load_allrank()
        transformer = ar.TransformerConfig(N=self.n_blocks, d_ff=self.d_ff, h=self.n_heads,
                                           positional_encoding=None, dropout=self.dropout)
        return ar.make_model(
            # a fresh list: allRank's FCModel inserts n_features into the list it gets
            fc_model={"sizes": [self.fc_units], "input_norm": False,
                      "activation": self.fc_activation, "dropout": self.fc_dropout},
            transformer=transformer,
            post_model={"d_output": 1, "output_activation": None},
            n_features=n_features,
        )

    def _loss_fn(self) -> LossFn:
        ar = load_allrank()
        if self.loss == "lambdaloss":
            return lambda pred, true: ar.lambdaLoss(pred, true, weighing_scheme="ndcgLoss2PP_scheme",
                                                   sigma=self.sigma, mu=self.mu)
        return lambda pred, true: ar.neuralNDCG(pred, true, temperature=self.temperature,
                                                powered_relevancies=True)

    def _scale(self, X: np.ndarray) -> np.ndarray:
        return ((X - self.x_min_) / self.x_range_).astype(np.float32)

    def _scores(self, X: np.ndarray, slates: list[np.ndarray]) -> np.ndarray:
        """Scores of every row, computed slate by slate in batches (eval mode)."""
        import torch

        out = np.zeros(len(X), dtype=np.float64)
        self.net_.eval()
        with torch.no_grad():
            for start in range(0, len(slates), self.batch_size):
                batch = slates[start: start + self.batch_size]
                xb, _, mask = _pad(X, None, batch)
                indices = torch.arange(xb.shape[1]).repeat(xb.shape[0], 1)
                scores = self.net_.score(xb, mask, indices).numpy()
                for b, rows in enumerate(batch):
                    out[rows] = scores[b, : len(rows)]
        return out

    # --- fit / predict ----------------------------------------------------------------

    def _fit(self, X: np.ndarray, y: np.ndarray, groups: np.ndarray, eval_set: Optional[EvalSet]) -> None:
        import torch

        self._check_params()
        if self.scaling == "minmax":
            self.x_min_ = X.min(axis=0)
            span = X.max(axis=0) - self.x_min_
            self.x_range_ = np.where(span > 0, span, 1.0)
        else:
            self.x_min_ = np.zeros(X.shape[1])
            self.x_range_ = np.ones(X.shape[1])
        Xs = self._scale(X)
        slates = query_slates(groups)
        valid = None
        if eval_set is not None:
            Xv, yv, gv = eval_set
            valid = (self._scale(Xv), yv, gv, query_slates(gv))

        with _torch_settings(self.seed, self.num_threads):
            self.net_ = self._build_net(X.shape[1])
            loss_fn = self._loss_fn()
            optimizer = torch.optim.Adam(self.net_.parameters(), lr=self.learning_rate)
            scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=self.lr_step, gamma=self.lr_gamma)
            rng = np.random.default_rng(self.seed)
            best_value, best_state = -np.inf, None
            self.best_epoch_ = self.epochs - 1
            self.history_ = []

            for epoch in range(self.epochs):
                lr_now = optimizer.param_groups[0]["lr"]
                self.net_.train()
                order = rng.permutation(len(slates))
                total_loss = 0.0
                for start in range(0, len(order), self.batch_size):
                    batch = [slates[i] for i in order[start: start + self.batch_size]]
                    xb, yb, mask = _pad(Xs, y, batch)
                    indices = torch.arange(xb.shape[1]).repeat(xb.shape[0], 1)
                    optimizer.zero_grad()
                    loss = loss_fn(self.net_(xb, mask, indices), yb)
                    loss.backward()
                    optimizer.step()
                    total_loss += float(loss.item()) * len(batch)
                scheduler.step()

                record = {"train_loss": total_loss / len(slates), "lr": lr_now,
                          "train_ndcg@5": ndcg_at(self._scores(Xs, slates), y, groups, 5)}
                if valid is not None:
                    Xv_s, yv, gv, slates_v = valid
                    record["valid_loss"] = self._eval_loss(loss_fn, Xv_s, yv, slates_v)
                    record["valid_ndcg@5"] = ndcg_at(self._scores(Xv_s, slates_v), yv, gv, 5)
                    if record["valid_ndcg@5"] > best_value:
                        best_value, self.best_epoch_ = record["valid_ndcg@5"], epoch
                        best_state = copy.deepcopy(self.net_.state_dict())
                self.history_.append(record)
                if valid is not None and epoch - self.best_epoch_ > self.patience:
                    break

            if best_state is not None:
                self.net_.load_state_dict(best_state)
        self.net_.eval()

    def _eval_loss(self, loss_fn: LossFn, X: np.ndarray, y: np.ndarray, slates: list[np.ndarray]) -> float:
        import torch

        self.net_.eval()
        total = 0.0
        with torch.no_grad():
            for start in range(0, len(slates), self.batch_size):
                batch = slates[start: start + self.batch_size]
                xb, yb, mask = _pad(X, y, batch)
                indices = torch.arange(xb.shape[1]).repeat(xb.shape[0], 1)
                total += float(loss_fn(self.net_(xb, mask, indices), yb).item()) * len(batch)
        return total / len(slates)

    def _predict(self, X: np.ndarray, groups: np.ndarray) -> np.ndarray:
        import torch

        previous = torch.get_num_threads()
        torch.set_num_threads(self.num_threads)
        try:
            return self._scores(self._scale(X), query_slates(groups))
        finally:
            torch.set_num_threads(previous)

    # --- persistence -------------------------------------------------------------------

    def _state(self, path: Path) -> JSONObject:
        import torch

        torch.save(self.net_.state_dict(), path / _WEIGHTS_FILE)
        return {"weights_file": _WEIGHTS_FILE, "x_min": self.x_min_.tolist(),
                "x_range": self.x_range_.tolist(), "best_epoch": self.best_epoch_}

    def _restore(self, path: Path, state: JSONObject) -> None:
        import torch

        self._check_params()
        self.x_min_ = np.asarray(state["x_min"], dtype=np.float64)
        self.x_range_ = np.asarray(state["x_range"], dtype=np.float64)
        self.best_epoch_ = int(state["best_epoch"])
        with torch.random.fork_rng(devices=[]):  # building draws initial weights; keep caller's RNG
            self.net_ = self._build_net(len(self.x_min_))
        weights = torch.load(path / _WEIGHTS_FILE, map_location="cpu", weights_only=True)
        self.net_.load_state_dict(weights)
        self.net_.eval()
