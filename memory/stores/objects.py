"""Objects: whole things with an eternal id — uploads, and documents the agent composed.

An object is found by its card (name, the uploader's description, the first 1,500 characters of
a text file), embedded in the ``memory-objects`` vector collection.
"""

from __future__ import annotations

CARD_TEXT_CHARS = 1500


def card_text(*, name: str, description: str, text: str | None) -> str:
    """The text an object is found by. Images and PDFs have no text here: only name and words."""
    parts = [name.strip()]
    if description and description.strip():
        parts.append(description.strip())
    if text:
        parts.append(text[:CARD_TEXT_CHARS])
    return "\n".join(parts)
