"""What level 1 says, where more than one of its sources says it."""

from __future__ import annotations

from memory.i18n import Text

MATCHED = Text(ru="совпали слова: {words}", en="matched words: {words}")
