"""The application: the facade every face goes through, the wiring behind it, the daemon and its phases, doctor and restore."""
