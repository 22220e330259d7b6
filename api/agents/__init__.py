"""The agents' door: the MCP server at `/mcp` (official ``mcp`` SDK, Streamable HTTP), its bearer
authentication and OAuth 2.1 metadata, and the `/oauth/*` endpoints (docs/agents.md). The tools themselves
and the state behind them are the core's (:mod:`stacklens.agents`)."""
