"""The public names beside the facade: what the faces and the benchmark harness use of strata
besides a Memory, so that none of them reaches into a layer or the store. Each name is the
layer's own, given here its public place, and loaded when first used: `strata --help` builds
the choices of its options from a few of them without importing the rest.

- vocabularies a face shows or checks: memory states, tiers and qualities, consolidation rules,
  link types, learning phases;
- JSON Lines in and out (`strata import`, `strata export`), context pairs on a command line;
- the database copies kept beside a home;
- parts a benchmark measures on their own or against a baseline built the same way: the SQLite
  strata opens, the full-text query it writes, the embedders and their batches, fact capture,
  the in-memory vector copy, spreading, the capsule document, the corpus cache's code and
  schema.
"""

from __future__ import annotations

import importlib
from typing import Any

_PLACES = {  # name -> (module, its name there; None: the module itself)
    "STATES": ("episodes.model", "STATES"),
    "TIERS": ("episodes.model", "TIERS"),
    "QUALITIES": ("episodes.model", "QUALITIES"),
    "parse_context_pairs": ("episodes.model", "parse_context_pairs"),
    "CONSOLIDATION_RULES": ("consolidation.rules", "RULES"),
    "LINK_TYPES": ("store.graph", "LINK_TYPES"),
    "ACTIVE": ("scoring.composite", "ACTIVE"),
    "PASSIVE": ("scoring.composite", "PASSIVE"),
    "export_line": ("episodes.jsonl", "export_line"),
    "parse_jsonl": ("episodes.jsonl", "parse_jsonl"),
    "stored_rows": ("episodes.jsonl", "stored_rows"),
    "capsule_document": ("capsule.document", None),
    "capsule_files": ("capsule.files", None),
    "copies": ("store.copies", None),
    "connect": ("store.driver", "connect"),  # the SQLite strata opens (sqlite-vec, FTS5), with its pragmas
    "sqlite_module": ("store.driver", "sqlite_module"),  # that SQLite's module, for a bare connection
    "sqlite_errors": ("store.driver", "driver_errors"),
    "copy_database": ("store.driver", "copy"),
    "Database": ("store.db", "Database"),
    "open_database": ("store.engines", "open_database"),  # a home's SQLite file or PostgreSQL database
    "changes_committed": ("store.db", "changes"),  # whether a command stored what it was asked to
    "embedded_document": ("store.vectors", "document"),
    "consolidation_reads": ("store.consolidation", "memories"),
    "match_expression": ("store.fts_query", "match_expression"),
    "query_pieces": ("store.fts_query", "pieces"),  # a text's word pieces as the full-text index holds them
    "fts_table": ("store.fts_tables", "table_of"),  # a namespace's full-text table
    "FTS_TOKENIZER": ("store.fts_tables", "TOKENIZER"),
    "EPISODE_COLUMNS": ("store.episodes", "COLUMNS"),
    "VECTOR_TABLE": ("store.vectors", "TABLE"),
    "MIGRATIONS": ("store.migrate", "MIGRATIONS"),
    "EMBED_BATCH": ("embedding.backlog", "EMBED_BATCH"),
    "EMBED_WINDOW": ("embedding.backlog", "EMBED_WINDOW"),
    "VectorCache": ("embedding.cache", "VectorCache"),
    "DEFAULT_EMBEDDER": ("embedding.loader", "DEFAULT"),
    "Embedder": ("embedding.loader", "Embedder"),
    "load_embedder": ("embedding.loader", "load_embedder"),
    "packaged_source": ("embedding.model", "packaged_source"),
    "TOKENIZER_SHA256": ("embedding.onnx", "TOKENIZER_SHA256"),
    "fact_rules": ("facts.rules", None),
    "fact_judge": ("facts.judge", None),
    "fact_statements": ("facts.statements", None),
    "spread": ("graph.spread", "spread"),
}
# The modules whose code decides what a stored corpus holds besides its generator: a kept corpus
# is built again when one of them changes.
CAPTURE_MODULES = ("fact_rules", "fact_judge", "fact_statements")
__all__ = sorted([*_PLACES, "CAPTURE_MODULES", "LEARNING_PHASES", "SCHEMA_VERSION"])


def __getattr__(name: str) -> Any:
    if name == "LEARNING_PHASES":
        return (__getattr__("PASSIVE"), __getattr__("ACTIVE"))
    if name == "SCHEMA_VERSION":
        return max(n for n, _, _ in __getattr__("MIGRATIONS"))
    if name not in _PLACES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attr = _PLACES[name]
    found = importlib.import_module(f"strata_daemon.{module}")
    value = found if attr is None else getattr(found, attr)
    globals()[name] = value  # loaded once
    return value
