"""The reference documents in docs/reference/, generated from the code (pure functions).

- cli.md: every command and subcommand of the `strata` argument parser, with its options;
- config.md: every setting of the settings table, by section, and how settings are set;
- http.md: every operation of the OpenAPI document;
- mcp.md: every tool and resource of the MCP server.

`python -m strata_bench.reference docs/reference` writes them; `--check` only compares and
exits 1 when one is out of date. tests/test_reference.py keeps the files equal to what this
module generates, so they change with the code or the tests fail.
"""
