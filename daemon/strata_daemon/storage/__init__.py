"""SQLite is the bus: every process opens the same WAL database."""

from .db import Database

__all__ = ["Database"]
