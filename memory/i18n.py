"""Bilingual text for answers written to a model: Russian (the owner's language) and English.

Answers are written in the agreed language (setting MEMORY_LANG, parameter ``lang``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Lang = Literal["ru", "en"]
LANGS: tuple[Lang, ...] = ("ru", "en")


@dataclass(frozen=True)
class Text:
    ru: str
    en: str

    def __call__(self, lang: str, **values: Any) -> str:
        template = self.en if lang == "en" else self.ru
        return template.format(**values) if values else template

    def as_dict(self) -> dict[str, str]:
        return {"ru": self.ru, "en": self.en}
