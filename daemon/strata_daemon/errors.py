"""Errors a user can act on, each with the exit code the CLI returns for it.

The core raises these; the faces (CLI, MCP, HTTP, TUI) decide how to show them.
Every message says what went wrong and, where it helps, what to do next.
"""

from __future__ import annotations

MAX_MESSAGE = 400

# How to install what a feature needs, said so that it works from a pip install and a checkout.
# strata is installed from its checkout or a wheel made from it, not from a registry: name the
# packages a registry serves, and the checkout's form.
INSTALL_CORE = "reinstall strata from where it came: in its checkout, `pip install --force-reinstall .` or `make run`"
INSTALL_LLM = ("`pip install 'llama-cpp-python>=0.3' 'gguf>=0.10'` (in a checkout: `pip install '.[llm]'`); it "
               "builds llama.cpp once, which needs a C compiler and cmake and takes about 5 minutes")


def shortened(text: str, limit: int = MAX_MESSAGE) -> str:
    """A message cut to MAX_MESSAGE characters: the last guard against an error that quotes a
    whole input (messages quote values through strata_daemon.base.wording.quoted)."""
    text = str(text)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


class StrataError(Exception):
    exit_code = 1
    kind = "error"

    def __init__(self, message: str, *, hint: str | None = None):
        message, hint = shortened(message), None if hint is None else shortened(hint)
        super().__init__(message)
        self.message = message
        self.hint = hint

    def as_dict(self) -> dict:
        out = {"error": self.kind, "message": self.message}
        if self.hint:
            out["hint"] = self.hint
        return out


class NotFound(StrataError):
    exit_code = 3
    kind = "not_found"


class InvalidInput(StrataError):
    exit_code = 4
    kind = "invalid_input"


class Conflict(StrataError):
    exit_code = 5
    kind = "conflict"


class StorageError(StrataError):
    exit_code = 6
    kind = "storage"


class ConfigError(StrataError):
    exit_code = 7
    kind = "config"


class EmbeddingUnavailable(StrataError):
    exit_code = 8
    kind = "embedding_unavailable"


class CasMismatch(StrataError):
    """A compare-and-set found another value than the one expected; `current` holds it."""
    exit_code = 9
    kind = "cas_mismatch"

    def __init__(self, message: str, *, current: str | None, hint: str | None = None):
        super().__init__(message, hint=hint)
        self.current = current

    def as_dict(self) -> dict:
        return {**super().as_dict(), "current": self.current}


class LlmUnavailable(StrataError):
    """The configured LLM cannot be used; dossiers fall back to the extractive synthesizer."""
    exit_code = 10
    kind = "llm_unavailable"


class NotPermitted(StrataError):
    """A namespace this agent may not reach, or a write through a read-only shared scope."""
    exit_code = 11
    kind = "not_permitted"


EXIT_DOCTOR = 12


def of_kind(answer: dict) -> StrataError:
    """An error another strata process answered with ({"error", "message", "hint"?}, the shape of
    every face), as the exception this one would have raised."""
    classes, stack = {}, [StrataError]
    while stack:
        cls = stack.pop()
        classes.setdefault(cls.kind, cls)
        stack.extend(cls.__subclasses__())
    cls = classes.get(answer.get("error"), StrataError)
    message, hint = str(answer.get("message") or "error"), answer.get("hint")
    if cls is CasMismatch:
        return CasMismatch(message, current=answer.get("current"), hint=hint)
    return cls(message, hint=hint)


# Exit codes, documented in docs/operations.md; 2 is argparse's usage error.
EXIT_CODES = {
    0: "success",
    1: "unexpected error (a bug: please report it with the message)",
    2: "usage error (unknown command or option)",
    NotFound.exit_code: "not found (no such memory, recall or key in this namespace)",
    InvalidInput.exit_code: "invalid input (nothing was stored), or a capsule with errors (`capsule check`)",
    Conflict.exit_code: "conflict (e.g. feedback already given for that recall)",
    StorageError.exit_code: "storage problem (database locked too long, corrupt, read-only or disk full)",
    ConfigError.exit_code: "bad configuration (the message names the key)",
    EmbeddingUnavailable.exit_code: "embedding model missing, damaged or not loadable (the message says which)",
    CasMismatch.exit_code: "compare-and-set mismatch (the fact holds another value; the message shows it)",
    LlmUnavailable.exit_code: "the LLM named by [llm] model is missing, damaged or not loadable",
    NotPermitted.exit_code: "not permitted: another agent's namespace that strata.toml does not share "
                            "(agent.shared), or a write through a shared, read-only scope",
    EXIT_DOCTOR: "`strata doctor` found a problem (each is listed with its fix)",
    130: "interrupted (Ctrl-C)",
}
