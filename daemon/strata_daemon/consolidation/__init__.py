"""Consolidation, the daemon's nightly "sleep": merge near-duplicates,
replay, potentiate, promote, stale decay, interference, archive, associate."""
