"""strata: a local-only daemon that gives an autonomous agent a layered memory of itself."""

__version__ = "0.1.0"

from strata_daemon.app.memory import Memory  # noqa: E402

__all__ = ["Memory", "__version__"]
