"""A context block: what an agent needs for one turn, within a token budget."""
