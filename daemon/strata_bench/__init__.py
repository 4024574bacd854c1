"""The benchmark harness of strata and the generator of docs/reference: a package beside
strata_daemon that uses only its public API (strata_daemon, its app and faces, config and errors)."""
