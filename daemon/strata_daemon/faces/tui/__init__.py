"""`strata tui`: a Textual inspector over the same Memory API the CLI uses.

Nothing in the core imports this package; it is only loaded by `strata tui` and its tests."""
