"""The model, reached through one interface; which backend is a matter of settings."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from django.conf import settings

from memory.model.base import ModelBackend, NoModel


@lru_cache(maxsize=1)
def backend() -> ModelBackend:
    kind = settings.MODEL_BACKEND
    if kind == "claude":
        from memory.model.claude_cli import ClaudeCli  # only the configured backend is loaded

        return ClaudeCli(
            binary=settings.CLAUDE_BIN,
            model=settings.CLAUDE_MODEL,
            workdir=Path(settings.CLAUDE_WORKDIR),
        )
    if kind == "anthropic":
        from memory.model.http import AnthropicMessages  # (as above)

        return AnthropicMessages(
            base_url=settings.ANTHROPIC_BASE_URL,
            api_key=settings.ANTHROPIC_API_KEY,
            model=settings.ANTHROPIC_MODEL,
        )
    if kind == "openai":
        from memory.model.http import OpenAIChat  # (as above)

        return OpenAIChat(
            base_url=settings.OPENAI_BASE_URL,
            api_key=settings.OPENAI_API_KEY,
            model=settings.OPENAI_MODEL,
        )
    return NoModel()


def configured() -> bool:
    return bool(getattr(backend(), "configured", False))
