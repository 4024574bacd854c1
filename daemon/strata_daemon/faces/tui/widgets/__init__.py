"""Widgets more than one screen could use."""
