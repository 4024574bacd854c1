"""Recall: candidates from full text, vectors and the graph, each stage a function, ranked by the composite score."""
