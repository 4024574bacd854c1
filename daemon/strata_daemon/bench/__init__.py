"""Benchmark helpers: synthetic corpora and timing harnesses."""
