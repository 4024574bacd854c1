"""strata: a local-only daemon that gives an autonomous agent a layered memory of itself.

`from strata_daemon import Memory` gives the Python API; it is loaded on first use, so that a
command that does not open a memory (`strata --help`) does not import every layer."""

__version__ = "0.1.0"
__all__ = ["Memory", "__version__"]


def __getattr__(name: str):
    if name == "Memory":
        from strata_daemon.app.memory import Memory

        return Memory
    raise AttributeError(f"module 'strata_daemon' has no attribute {name!r}")
