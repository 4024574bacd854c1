"""Consolidation, the daemon's nightly "sleep" (seeds 001 and 003): merge near-duplicates,
replay, potentiate, promote, stale decay, interference, archive, associate."""
