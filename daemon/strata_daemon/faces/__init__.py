"""The faces: the command line, the HTTP API, the MCP server and the inspector. Each goes through the facade (strata_daemon.app)."""
