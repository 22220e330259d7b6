"""Agents: what an AI agent may read and change through the Model Context Protocol (docs/agents.md).

:mod:`~stacklens.agents.tokens` personal tokens and who a bearer token speaks for;
:mod:`~stacklens.agents.oauth_store` the OAuth 2.1 clients, codes and tokens MCP clients obtain;
:mod:`~stacklens.agents.calls` one tool call's caller and what it read; :mod:`~stacklens.agents.budget` the
budgets every call runs under; :mod:`~stacklens.agents.audit` the audit trail of calls;
:mod:`~stacklens.agents.untrusted` how event data is marked as untrusted text;
:mod:`~stacklens.agents.markdown` an issue with its latest event as paginated markdown; the ``tools_*``
modules the tools themselves. The protocol itself (the official ``mcp`` SDK) lives in the API adapter.
"""
