"""The daemon's scheduled phases: what each does, when it is due, and how runs are recorded."""
