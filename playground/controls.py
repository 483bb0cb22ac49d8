"""The stand's controls, generated from the contract's parameter registry.

Each registered parameter becomes a control: its widget from the parameter's shape, its label
and help in the page's language, and a "reaches the service" badge computed from the
registry's capability for each verb that takes it — with the reason when it does not. Nothing
here lists by hand what is supported: when the registry changes, the page changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memory import ladder
from memory.contract import registry
from memory.contract.registry import Param
from memory.contract.shapes import SCOPE_KINDS, UPLOAD_KINDS
from memory.i18n import Text

# The stand sets these itself: the phrase is the main field, and the language is the page's
# (the owner removed the language switch from the stand; the parameter stays in the contract).
OWN = {"text", "lang"}

UPLOAD_LABELS = {
    "text": Text(ru="Текст", en="Text"),
    "image": Text(ru="Изображение", en="Image"),
    "video": Text(ru="Видео", en="Video"),
    "audio": Text(ru="Аудио / голос", en="Audio / voice"),
    "document": Text(ru="Документ (HTML, PDF)", en="Document (HTML, PDF)"),
}
SCOPE_LABELS = {
    "calendar": Text(ru="календарь", en="calendar"),
    "geo": Text(ru="место", en="place"),
}
_REACHES = Text(ru="доезжает до службы", en="reaches the service")
_DOES_NOT = Text(ru="не поддержано", en="not supported")


@dataclass(frozen=True)
class Badge:
    verb: str
    reaches: bool
    text: str
    reason: str = ""


@dataclass(frozen=True)
class Choice:
    value: str
    label: str
    hint: str = ""


@dataclass(frozen=True)
class Control:
    name: str
    widget: str
    label: str
    help: str
    verbs: tuple[str, ...]
    badges: tuple[Badge, ...]
    choices: tuple[Choice, ...] = field(default_factory=tuple)

    @property
    def reaches(self) -> bool:
        return any(b.reaches for b in self.badges)

    @property
    def reason(self) -> str:
        return next((b.reason for b in self.badges if not b.reaches and b.reason), "")


def _badges(param: Param, lang: str) -> tuple[Badge, ...]:
    out = []
    for verb in param.verbs:
        capability = param.status(verb)
        reaches = capability.status == "accepted"
        reason = capability.reason(lang) if capability.reason else ""
        out.append(Badge(verb, reaches, (_REACHES if reaches else _DOES_NOT)(lang), reason))
    return tuple(out)


def _choices(param: Param, lang: str) -> tuple[Choice, ...]:
    if param.name == "depth":
        return tuple(
            Choice(word, word, ladder.DEPTH_HINTS[word][lang]) for word in ladder.DEPTH_WORDS
        )
    if param.shape.widget == "upload_list":
        return tuple(Choice(kind, UPLOAD_LABELS[kind](lang)) for kind in UPLOAD_KINDS)
    if param.shape.widget == "scope_list":
        return tuple(Choice(kind, SCOPE_LABELS[kind](lang)) for kind in SCOPE_KINDS)
    return tuple(Choice(value, value) for value in param.shape.choices)


def control(param: Param, lang: str) -> Control:
    return Control(
        name=param.name,
        widget=param.shape.widget,
        label=param.label(lang),
        help=param.help(lang),
        verbs=param.verbs,
        badges=_badges(param, lang),
        choices=_choices(param, lang),
    )


def controls(lang: str) -> list[Control]:
    return [control(p, lang) for p in registry.PARAMS if p.name not in OWN]


def by_name(lang: str) -> dict[str, Control]:
    return {c.name: c for c in controls(lang)}
