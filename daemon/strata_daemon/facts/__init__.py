"""Persistent facts: key -> value ground truth with bitemporal history."""
