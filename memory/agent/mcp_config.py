"""How a model process reaches this project's MCP server: a config naming our own command.

The tenant and the run travel as the server's command-line arguments, written by the memory —
the model can neither see nor change them. The child gets the database URL of the process that
spawned it, so it writes where the request is being served (the test database in tests).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

from django.conf import settings
from django.db import connection

from memory.model.base import ToolGrant
from memory.stores import embedded

MANAGE = Path(__file__).resolve().parents[2] / "manage.py"
# Settings a child process must share with its parent, passed only when set.
SHARED_ENV = (
    "SECRET_KEY",
    "SECRET_KEY_FILE",
    "MEMORY_LANG",
    "TIME_ZONE",
    "CELERY_BROKER_URL",
    "QDRANT_URL",
    "QDRANT_API_KEY",
    "LIGHTRAG_URL",
    "LIGHTRAG_URLS",
    "LIGHTRAG_API_KEY",
    "GRAPH_DATABASE_URL",
    "EMBEDDINGS_URL",
    "EMBEDDINGS_API_KEY",
    "OBJECTS_BACKEND",
    "MACHINE_SECRET",
    "MEMORY_INTERNAL_URL",
    "PYTHONPATH",
)


def database_url() -> str:
    """The URL of the database this process is connected to."""
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    user = quote(db.get("USER") or "", safe="")
    password = quote(db.get("PASSWORD") or "", safe="")
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    return f"postgres://{auth}{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"


def child_env() -> dict[str, str]:
    env = {
        "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "memory.settings"),
        "DATABASE_URL": database_url(),
        "MEMORY_DATA_DIR": str(settings.DATA_DIR),
        "MEMORY_STORES_DIR": str(settings.MEMORY_STORES_DIR),
        "MEMORY_SKILLS_DIR": str(settings.SKILLS_REPO_DIR),
    }
    env.update({name: os.environ[name] for name in SHARED_ENV if name in os.environ})
    if embedded():
        # The embedded stores belong to this process: the child reaches them through the door.
        # A parent that serves no door (not started by `make run`) says so: the child starts,
        # and its store reads answer that there is no door (PASSPORT.md §14.4).
        env["MEMORY_STORE_ACCESS"] = "door"
        env["MEMORY_INTERNAL_URL"] = settings.MEMORY_INTERNAL_URL or "none"
    return env


def server_params(grant: ToolGrant) -> dict[str, Any]:
    return {
        "command": sys.executable,
        "args": [
            str(MANAGE),
            "memory_mcp",
            "--architect",
            str(grant.architect_id),
            "--run",
            grant.run_id,
            "--tools",
            ",".join(grant.tools),
        ],  # fmt: skip
        "env": child_env(),
    }


def config(grant: ToolGrant | None, *, server_name: str) -> dict[str, Any]:
    if grant is None or not grant.tools:
        return {"mcpServers": {}}
    return {"mcpServers": {server_name: server_params(grant)}}
