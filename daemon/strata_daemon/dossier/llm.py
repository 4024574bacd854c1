"""The local LLM behind the LLM synthesizer: llama-cpp-python, blocking (run it in a thread).

Output is held to a JSON schema by llama.cpp's grammar; generation streams so that a deadline
can stop it between two tokens (a thread cannot be killed, a stream can be left).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from strata_daemon.base import cpu, stopping
from strata_daemon.base.cpu import others_busy, threads_for
from strata_daemon.embedding.model import GGUF_MAGIC
from strata_daemon.errors import INSTALL_LLM, LlmUnavailable


class LlmTimeout(Exception):
    pass


class LlmFailed(Exception):
    def __init__(self, message: str, raw: str = ""):
        super().__init__(message)
        self.raw = raw  # what the model wrote, kept with the version for diagnosis


@dataclass
class Generation:
    lines: list[dict]
    raw: str
    prompt_tokens: int
    completion_tokens: int
    prompt_seconds: float  # until the first generated token
    generation_seconds: float
    truncated: bool = False  # llm.max_tokens cut the answer; the complete lines before the cut were kept
    threads: int = 0  # llama.cpp threads it ran on (fewer than llm.threads when other work kept cores busy)

    def stats(self) -> dict:
        return {"truncated": self.truncated, "threads": self.threads, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "prompt_seconds": round(self.prompt_seconds, 3),
                "generation_seconds": round(self.generation_seconds, 3),
                "prompt_tokens_per_s": round(self.prompt_tokens / self.prompt_seconds, 1)
                if self.prompt_seconds else None,
                "generation_tokens_per_s": round(self.completion_tokens / self.generation_seconds, 1)
                if self.generation_seconds else None}


def lines_schema(ids: list[str], sections: tuple[str, ...], *, max_lines: int, max_chars: int) -> dict:
    """What the model must answer: {"lines": [{"section", "text", "sources": [ids]}]}."""
    return {"type": "object", "additionalProperties": False, "required": ["lines"], "properties": {
        "lines": {"type": "array", "minItems": 1, "maxItems": max_lines, "items": {
            "type": "object", "additionalProperties": False, "required": ["section", "text", "sources"],
            "properties": {
                "section": {"type": "string", "enum": list(sections)},
                "text": {"type": "string", "minLength": 1, "maxLength": max_chars},
                "sources": {"type": "array", "minItems": 1, "maxItems": 4, "items": {"type": "string", "enum": ids}},
            }}}}}


def parse_lines(raw: str) -> tuple[list[dict], bool]:
    """The line objects of an answer, and whether it was cut short. An answer cut by the token
    limit keeps the lines that were complete (the grammar guarantees everything before the
    cut is well-formed)."""
    try:
        answer = json.loads(raw)
        truncated = False
    except ValueError:
        answer, truncated = None, True
        end = raw.rfind("}")
        while end > 0 and answer is None:
            try:
                answer = json.loads(raw[:end + 1] + "]}")
            except ValueError:
                end = raw.rfind("}", 0, end)
        if answer is None:
            raise LlmFailed("the answer is not the JSON asked for and holds no complete line; "
                            "raise llm.max_tokens", raw) from None
    lines = answer.get("lines") if isinstance(answer, dict) else None
    if not isinstance(lines, list) or not all(isinstance(x, dict) for x in lines):
        raise LlmFailed("the answer has no list of lines", raw)
    return lines, truncated


class LocalLlm:
    def __init__(self, path: str | os.PathLike, *, threads: int, context: int):
        self.path = Path(path).expanduser()
        self.name = self.path.stem
        self.threads, self.context = threads, context
        self._llm = None
        self._lock = threading.Lock()  # one llama context: one generation at a time

    def load(self):
        if self._llm is not None:
            return self._llm
        try:
            with open(self.path, "rb") as f:
                magic = f.read(4)
        except OSError as e:
            raise LlmUnavailable(f"cannot read the LLM {self.path}: {e.strerror}",
                                 hint="check [llm] model in strata.toml; dossiers stay extractive meanwhile") from None
        if magic != GGUF_MAGIC:
            raise LlmUnavailable(f"the LLM {self.path} is not a GGUF file", hint="point [llm] model at a .gguf model")
        try:
            cpu.passive_openmp()
            from llama_cpp import Llama
        except ImportError:
            raise LlmUnavailable("llama-cpp-python is not installed (dossiers stay extractive meanwhile)",
                                 hint=INSTALL_LLM) from None
        with open(os.devnull, "w") as devnull, contextlib.redirect_stderr(devnull):
            try:
                self._llm = Llama(model_path=str(self.path), n_ctx=self.context, n_threads=self.threads,
                                  verbose=False)
            except (ValueError, RuntimeError, OSError) as e:
                raise LlmUnavailable(f"llama.cpp could not load the LLM {self.path}: {e}",
                                     hint="the file may be damaged; dossiers stay extractive meanwhile") from None
        return self._llm

    def count_tokens(self, text: str) -> int:
        return len(self.load().tokenize(text.encode("utf-8"), add_bos=True, special=True))

    def generate(self, messages: list[dict], schema: dict, *, max_tokens: int, temperature: float,
                 deadline: float) -> Generation:
        """Answer `messages` as JSON matching `schema`. Raises LlmTimeout once `deadline`
        (time.monotonic) passes, LlmFailed when the answer is not the JSON asked for."""
        llm = self.load()
        from llama_cpp import llama_set_n_threads  # load() has made sure llama_cpp imports

        with self._lock:
            threads = threads_for(self.threads, os.cpu_count() or 1, others_busy())
            started = time.monotonic()
            if started >= deadline:
                raise LlmTimeout("no time left before the generation started")
            llama_set_n_threads(llm.ctx, threads, threads)
            llm.reset()
            parts, first = [], None
            try:
                stream = llm.create_chat_completion(
                    messages, response_format={"type": "json_object", "schema": schema}, max_tokens=max_tokens,
                    temperature=temperature, seed=0, stream=True)
                for chunk in stream:
                    if stopping.requested():
                        stream.close()
                        raise stopping.Stopped("generation stopped for the daemon's stop")
                    now = time.monotonic()
                    if now >= deadline:
                        stream.close()
                        raise LlmTimeout(f"generation stopped after {now - started:.1f} s "
                                         f"({len(parts)} tokens)")
                    if first is None:
                        first = now
                    parts.append(chunk["choices"][0]["delta"].get("content") or "")
            except (ValueError, RuntimeError) as e:
                raise LlmFailed(f"llama.cpp failed: {e}") from None
            ended = time.monotonic()
            completion = len(parts)
            prompt = max(0, int(llm.n_tokens) - completion)
        raw = "".join(parts)
        lines, truncated = parse_lines(raw)
        return Generation(lines, raw, prompt, completion, (first or ended) - started, ended - (first or ended),
                          truncated, threads)
