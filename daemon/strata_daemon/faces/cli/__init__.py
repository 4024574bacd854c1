"""The `strata` command (main.py): one module of commands per group, each registering its options
and importing what a command needs only when it runs; output.py is how results are shown."""
