"""Import the few allRank pieces TMLP needs, without allRank's heavy imports.

allRank 1.4.3 is installed with ``--no-deps``. Two of its modules pull in
packages we never install, at import time, for code TMLP does not use:

* ``allrank.data.dataset_loading`` imports ``torchvision`` (for its data
  loader transforms). Every loss imports it only for the constant
  ``PADDED_Y_VALUE``.
* ``allrank.utils.file_utils`` imports ``gcsfs`` and ``pkg_resources`` (for
  Google Cloud paths). ``allrank.models.model_utils`` imports it only for
  ``is_gs_path``/``copy_file_to_local``, used when loading GCS weights.

When the real module cannot be imported, a minimal stand-in module holding
just those names is placed in ``sys.modules`` under allRank's own module
name, before the losses are imported. Nothing in site-packages is changed,
and unrelated packages (transformers checks for torchvision) never see a
fake ``torchvision``.
"""

from __future__ import annotations

import importlib
import sys
import types
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable
from urllib.parse import urlparse

from verirank_core.errors import RankingError

if TYPE_CHECKING:
    import torch

#: allRank's marker for padding positions in a label tensor
PADDED_Y_VALUE = -1


def _stub_dataset_loading() -> types.ModuleType:
    module = types.ModuleType("allrank.data.dataset_loading")
    module.__doc__ = "verirank stand-in: only PADDED_Y_VALUE (the real module needs torchvision)"
    module.PADDED_Y_VALUE = PADDED_Y_VALUE  # type: ignore[attr-defined]
    return module


def _stub_file_utils() -> types.ModuleType:
    module = types.ModuleType("allrank.utils.file_utils")
    module.__doc__ = "verirank stand-in: local paths only (the real module needs gcsfs, pkg_resources)"

    def is_gs_path(path: str) -> bool:
        return urlparse(str(path)).scheme == "gs"

    def copy_file_to_local(path: str) -> str:
        raise RankingError(f"Google Cloud Storage paths are not supported: {path}")

    module.is_gs_path = is_gs_path  # type: ignore[attr-defined]
    module.copy_file_to_local = copy_file_to_local  # type: ignore[attr-defined]
    return module


def _import_or_stub(name: str, make_stub: Callable[[], types.ModuleType]) -> None:
    if name in sys.modules:
        return
    try:
        importlib.import_module(name)
    except ImportError:
        sys.modules[name] = make_stub()


@dataclass(frozen=True)
class AllRank:
    """The allRank callables TMLP uses."""

    make_model: Callable[..., torch.nn.Module]
    TransformerConfig: type
    lambdaLoss: Callable[..., torch.Tensor]
    neuralNDCG: Callable[..., torch.Tensor]


_CACHE: dict[str, AllRank] = {}


def load_allrank() -> AllRank:
    """Import allRank's model factory and the two losses (once per process)."""
    if "allrank" in _CACHE:
        return _CACHE["allrank"]
    try:
        import allrank.data  # noqa: F401  (the empty package, so the stub has a parent)
        import allrank.utils  # noqa: F401
    except ImportError as exc:
        raise RankingError(f"allRank is not installed ({exc}); pip install --no-deps allrank==1.4.3") from exc
    _import_or_stub("allrank.data.dataset_loading", _stub_dataset_loading)
    _import_or_stub("allrank.utils.file_utils", _stub_file_utils)

    from allrank.config import TransformerConfig
    from allrank.models.losses.lambdaLoss import lambdaLoss
    from allrank.models.losses.neuralNDCG import neuralNDCG
    from allrank.models.model import make_model

    _CACHE["allrank"] = AllRank(make_model=make_model, TransformerConfig=TransformerConfig,
                                lambdaLoss=lambdaLoss, neuralNDCG=neuralNDCG)
    return _CACHE["allrank"]
