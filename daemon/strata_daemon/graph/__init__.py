"""The spiderweb: what goes with what (Hebbian edges, typed links, entities, spreading)."""
