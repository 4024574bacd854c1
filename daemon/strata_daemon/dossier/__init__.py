"""Dossiers: one cited document per topic, written extractively or by a local LLM."""
