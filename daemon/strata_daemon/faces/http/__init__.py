"""The HTTP face: the Memory API over a Unix socket (and opt-in loopback TCP), with an OpenAPI document."""
