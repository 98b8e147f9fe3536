"""The shared MiniLM encoder: one model per process, a bounded LRU of label vectors."""

from __future__ import annotations

import numpy as np

from verirank.embed import DIM, Encoder, _model, default_encoder


def test_each_distinct_text_is_embedded_once_and_the_cache_stays_bounded():
    enc = Encoder(cache_size=3)
    first = enc.encode(["Display", "Dark mode", "Display"])
    assert first.shape == (3, DIM) and enc.misses == 2 and enc.hits == 0
    assert np.array_equal(first[0], first[2])
    assert np.isclose(float(first[0] @ first[0]), 1.0, atol=1e-5)  # unit vectors
    again = enc.encode(["Dark mode", "Battery"])
    assert enc.misses == 3 and enc.hits == 1
    assert np.array_equal(again[0], first[1])
    enc.encode(["Sound"])  # a fourth text: the least recently used one ("Display") goes
    assert len(enc._cache) == 3 and "Display" not in enc._cache and "Dark mode" in enc._cache
    # an evicted text is embedded again, to the same vector
    assert np.allclose(enc.encode(["Display"])[0], first[0], atol=1e-6) and enc.misses == 5


def test_the_predictor_and_the_judge_share_one_encoder_and_one_model():
    from execution.predict.match import Matcher

    assert default_encoder() is default_encoder()
    assert Matcher()._encoder() is Matcher()._encoder() is default_encoder()
    assert _model() is _model()
    assert Encoder().encode([]).shape == (0, DIM)
