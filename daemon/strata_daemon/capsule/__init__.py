"""The capsule: the markdown file the agent reads first, its rendered blocks and a person's edits."""
