"""The model's side of the memory: the tools it may call (``tools``), the MCP server that serves them
to the ``claude`` CLI (``mcp_server``, ``mcp_config``), one skill file (``skill``), the system
prompt from the instruction and the skills (``instruction``), and the skills repository, versioned
by git (``skills_repo``, ``released``)."""
