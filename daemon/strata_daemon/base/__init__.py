"""The floor every other package stands on: times, bounded reads, namespaces, stop requests, logging. Imports nothing of strata."""
