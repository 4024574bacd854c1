"""The episodic store: raw observations, scored."""
