"""all-MiniLM-L6-v2 in numpy: the sentence encoder without torch or sentence-transformers.

Importing ``sentence_transformers`` (torch, transformers) took 4 s of CPU on an
idle machine and up to 25 s on this loaded one, and it was paid by the first
page of every new process that met a text no cache held. This module computes
the same vectors from the same files (``model.safetensors``, ``tokenizer.json``)
with numpy and the ``tokenizers`` library: loading takes about 0.2 s.

It is the BERT forward pass (6 layers, 12 heads, exact-erf GELU from scipy,
LayerNorm eps 1e-12), then sentence-transformers' mean pooling over the tokens and unit
normalisation; texts are truncated at 256 tokens, as that model's config
says. Its vectors agree with sentence-transformers' to float32 rounding
(cosine >= 0.99999, checked in ``tests/verirank_core/test_minilm.py``), so
disk caches of either stay valid.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import numpy as np

_SQRT_HALF = np.float32(0.7071067811865476)


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


class MiniLM:
    """A BERT sentence encoder read from a sentence-transformers folder; ``encode`` as theirs."""

    def __init__(self, folder: Path | str):
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        folder = Path(folder)
        config = json.loads((folder / "config.json").read_text())
        if config.get("hidden_act") != "gelu" or config.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError(f"{folder}: only BERT with gelu and absolute positions is supported")
        st_config = folder / "sentence_bert_config.json"
        self.max_tokens = int(json.loads(st_config.read_text()).get("max_seq_length", 256)) \
            if st_config.exists() else 256
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])
        self.weights = load_file(str(folder / "model.safetensors"))
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        # the file pads to a fixed 128 and truncates there; sentence-transformers pads per batch
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(self.max_tokens)
        # dense layers as (in, out), ready for x @ w
        self._dense: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for name in self.weights:
            if name.endswith(".weight") and name.replace(".weight", ".bias") in self.weights \
                    and self.weights[name].ndim == 2 and "embeddings" not in name:
                stem = name[: -len(".weight")]
                self._dense[stem] = (np.ascontiguousarray(self.weights[name].T), self.weights[stem + ".bias"])

    def _linear(self, x: np.ndarray, stem: str) -> np.ndarray:
        """``x`` is 2-D (tokens, in): one GEMM (a 3-D @ 2-D product was 20 times slower)."""
        w, b = self._dense[stem]
        return x @ w + b

    def _ln(self, x: np.ndarray, stem: str) -> np.ndarray:
        return _layer_norm(x, self.weights[stem + ".weight"], self.weights[stem + ".bias"], self.eps)

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Token states (batch, tokens, hidden) of the last layer."""
        from scipy.special import erf

        w = self.weights
        batch, length = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][:length][None]
             + w["embeddings.token_type_embeddings.weight"][0][None, None])
        hidden = x.shape[-1]
        x = self._ln(x.reshape(batch * length, hidden), "embeddings.LayerNorm")
        size = hidden // self.heads
        # padding gets a large negative score, as transformers' extended attention mask
        bias = ((1.0 - mask[:, None, None, :].astype(np.float32)) * np.finfo(np.float32).min).astype(np.float32)
        scale = np.float32(1.0 / np.sqrt(size))

        def heads(t: np.ndarray) -> np.ndarray:
            return t.reshape(batch, length, self.heads, size).transpose(0, 2, 1, 3)

        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            q = heads(self._linear(x, p + "attention.self.query"))
            k = heads(self._linear(x, p + "attention.self.key"))
            v = heads(self._linear(x, p + "attention.self.value"))
            scores = (q @ k.transpose(0, 1, 3, 2)) * scale + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch * length, hidden)
            x = self._ln(self._linear(context, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            inner = self._linear(x, p + "intermediate.dense")
            inner = inner * np.float32(0.5) * (np.float32(1.0) + erf(inner * _SQRT_HALF))
            x = self._ln(self._linear(inner, p + "output.dense") + x, p + "output.LayerNorm")
        return x.reshape(batch, length, hidden)

    def encode(self, texts: Sequence[str], batch_size: int = 64, **_: object) -> np.ndarray:
        """Unit vectors (len(texts), 384), float32; texts of like length are batched together."""
        if not texts:
            return np.zeros((0, self.weights["embeddings.word_embeddings.weight"].shape[1]), dtype=np.float32)
        encodings = self.tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: -len(encodings[i].ids))
        out = np.zeros((len(texts), self.weights["embeddings.word_embeddings.weight"].shape[1]), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            chunk = order[start:start + batch_size]
            length = max(len(encodings[i].ids) for i in chunk)
            ids = np.zeros((len(chunk), length), dtype=np.int64)
            mask = np.zeros((len(chunk), length), dtype=np.int64)
            for row, i in enumerate(chunk):
                n = len(encodings[i].ids)
                ids[row, :n] = encodings[i].ids
                mask[row, :n] = 1
            states = self._forward(ids, mask)
            weights = mask[:, :, None].astype(np.float32)
            pooled = (states * weights).sum(1) / np.clip(weights.sum(1), 1e-9, None)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[chunk] = pooled / np.clip(norms, 1e-12, None)
        return out
