"""``manage.py`` commands: ``memory_run`` (the service on embedded defaults), ``memory_mcp`` (the
MCP server the ``claude`` CLI starts), keys, members and names."""
