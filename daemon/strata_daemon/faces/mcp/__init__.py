"""The MCP face: strata's tools and resources for an LLM agent (loaded only by `strata mcp`)."""
