"""Reading a request against the registry: every parameter sent gets a named fate.

``accepted`` — taken and acting (the note names any limit) · ``not_supported`` — right form, no
capability yet (the note says why) · ``bad_form`` — dropped (the note says why; a list item
names its index). A parameter the answer is silent about would be indistinguishable from one
that does not exist, so nothing is ever ignored silently. The one exception to "dropped": a
parameter the registry marks ``refuses_whole`` (``scope``) refuses the whole request instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from django.conf import settings
from django.utils import translation
from rest_framework import serializers

from memory.contract import limits
from memory.contract.registry import Verb, param, params_for
from memory.errors import MemoryServiceError
from memory.i18n import LANGS, Text

FateName = Literal["accepted", "not_supported", "bad_form"]

_UNKNOWN = Text(
    ru="неизвестный параметр; {verb} принимает: {names}",
    en="unknown parameter; {verb} takes: {names}",
)
_OTHER_VERB = Text(
    ru="это параметр {verbs}, а не {verb}",
    en="this is a parameter of {verbs}, not of {verb}",
)
_ITEM = Text(
    ru="запись №{number} (индекс {index}): {reason}",
    en="record #{number} (index {index}): {reason}",
)
_REFUSED_WHOLE = Text(
    ru="параметр {name} неверен, а без него запрос значил бы другое: запрос отклонён целиком, "
    "ничего не записано. {note}",
    en="the parameter {name} is malformed, and without it the request would mean something "
    "else: the whole request is refused, nothing is written. {note}",
)


@dataclass
class Fate:
    fate: FateName
    note: str = ""
    index: int | None = None
    indexes: list[int] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"fate": self.fate}
        if self.note:
            out["note"] = self.note
        if self.index is not None:
            out["index"] = self.index
        if self.indexes:
            out["indexes"] = self.indexes
        return out


@dataclass
class Parsed:
    verb: Verb
    lang: str
    values: dict[str, Any] = field(default_factory=dict)
    fates: dict[str, Fate] = field(default_factory=dict)

    def has(self, name: str) -> bool:
        return name in self.values

    def get(self, name: str, default: Any = None) -> Any:
        return self.values.get(name, default)

    def accept(self, name: str, note: str = "") -> None:
        self.fates[name] = Fate("accepted", note)

    def not_supported(self, name: str, note: str) -> None:
        """The form is right, but nothing here can act on this value (the note says why)."""
        self.fates[name] = Fate("not_supported", note)

    def refuse(self, name: str, note: str, index: int | None = None) -> None:
        """Drop a parameter the service found unusable (e.g. a verdict for an unknown run)."""
        self.values.pop(name, None)
        self.fates[name] = Fate("bad_form", note, index)

    def fates_dict(self) -> dict[str, dict[str, Any]]:
        return {name: fate.as_dict() for name, fate in self.fates.items()}


def _flatten(detail: Any, prefix: str = "") -> list[str]:
    """DRF error details (nested dicts and lists) as flat 'key: message' lines."""
    if isinstance(detail, Mapping):
        lines: list[str] = []
        for key, value in detail.items():
            label = f"{prefix}{key}" if key != "non_field_errors" else prefix.rstrip(".")
            lines.extend(_flatten(value, f"{label}." if label else ""))
        return lines
    if isinstance(detail, list):
        return [line for item in detail for line in _flatten(item, prefix)]
    text = str(detail)
    return [f"{prefix.rstrip('.')}: {text}" if prefix else text]


def _bad_form(error: serializers.ValidationError, lang: str) -> Fate:
    detail = error.detail
    # A list field reports its failing items as {index: errors}: name every index.
    if isinstance(detail, Mapping) and detail and all(isinstance(k, int) for k in detail):
        items = sorted(detail.items())
        notes = [
            _ITEM(lang, number=i + 1, index=i, reason="; ".join(_flatten(errors)))
            for i, errors in items
        ]
        return Fate("bad_form", " · ".join(notes), index=items[0][0], indexes=[i for i, _ in items])
    return Fate("bad_form", "; ".join(_flatten(detail)))


class RefusedWhole(MemoryServiceError):
    """A parameter whose bad form refuses the whole request (the registry's ``refuses_whole``)."""

    status = 400


def parse(verb: Verb, data: Mapping[str, Any], *, default_lang: str, refuse: bool = True) -> Parsed:
    """Validate each parameter on its own: one bad parameter never sinks the others — except
    one the registry marks ``refuses_whole`` (``scope``): then the request is refused with
    :class:`RefusedWhole` before anything is written, the error naming every parameter's fate
    (a failing record by its index). A body holding a character the gate refuses (NUL, control
    characters, lone surrogates) or nested too deep is refused first, as the gate does.
    ``refuse=False`` only reads the fates (tests of single parameters)."""
    if refuse:
        # The gate's character and depth rule, here too: the playground reaches the services
        # without passing the gate of /api/ (memory.contract.limits).
        lang = data.get("lang") if data.get("lang") in LANGS else default_lang
        refusal = limits.inspect(data, lang, settings.MEMORY_MAX_JSON_DEPTH)
        if refusal is not None:
            raise refusal.as_error(lang)
    parsed = _read(verb, data, default_lang=default_lang)
    if refuse:
        for name, fate in parsed.fates.items():
            spec = param(name)
            if fate.fate == "bad_form" and spec and spec.refuses_whole and verb in spec.verbs:
                raise RefusedWhole(
                    _REFUSED_WHOLE(parsed.lang, name=name, note=fate.note),
                    code=f"bad_{name}",
                    details={"params": parsed.fates_dict()},
                )
    return parsed


def _read(verb: Verb, data: Mapping[str, Any], *, default_lang: str) -> Parsed:
    lang = data.get("lang") if data.get("lang") in LANGS else default_lang
    parsed = Parsed(verb=verb, lang=lang)
    for name, raw in data.items():
        spec = param(name)
        if spec is None:
            names = ", ".join(p.name for p in params_for(verb))
            parsed.fates[name] = Fate("bad_form", _UNKNOWN(lang, verb=verb, names=names))
            continue
        if verb not in spec.verbs:
            parsed.fates[name] = Fate(
                "bad_form", _OTHER_VERB(lang, verbs=", ".join(spec.verbs), verb=verb)
            )
            continue
        try:
            with translation.override(lang):  # DRF's own messages follow the answer's language
                value = spec.shape.field().run_validation(raw)
        except serializers.ValidationError as error:
            with translation.override(lang):
                parsed.fates[name] = _bad_form(error, lang)
            continue
        capability = spec.status(verb)
        if capability.status == "not_supported":
            reason = capability.reason(lang) if capability.reason else ""
            parsed.fates[name] = Fate("not_supported", reason)
            continue
        parsed.values[name] = value
        parsed.fates[name] = Fate("accepted")
    return parsed
