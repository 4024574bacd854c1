"""Forgetting: purges that reach every layer a memory or fact left words in."""
