"""Reading the stand's form into the contract's parameters, and back into what the page shows.

Scope records are cards numbered as the architect sees them; an empty card is not a scope and
is not sent. The service numbers the records it received, so the stand keeps the map from sent
position to card number and puts each refusal on the card it belongs to.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from memory.contract.registry import param
from memory.i18n import Text

SCOPE_FIELDS = ("date", "start", "end", "deadline", "place")
_ON = Text(ru="вкл", en="on")
_RECORDS = Text(ru="записей: {n}", en="{n} record(s)")
_ONLY = Text(ru="только {verb}", en="{verb} only")
_CARD = Text(ru="Карточка {n}", en="Card {n}")


@dataclass
class Card:
    number: int
    kind: str = "calendar"
    fields: dict[str, str] = field(default_factory=dict)
    error: str = ""

    @property
    def empty(self) -> bool:
        return not any(v.strip() for v in self.fields.values())

    def record(self) -> dict[str, str]:
        return {"kind": self.kind, **{k: v.strip() for k, v in self.fields.items() if v.strip()}}


@dataclass
class Stand:
    """What the architect set, as the page shows it and as the service receives it."""

    text: str = ""
    verb: str = ""
    depth: str = ""
    trace: bool = False
    wait: bool = False
    thread: str = ""
    said_at: str = ""
    deny: str = ""
    create_table: str = ""
    previous_results: str = ""
    verdict_run: str = ""
    verdict_value: str = ""
    cards: list[Card] = field(default_factory=lambda: [Card(1)])
    sent_cards: list[int] = field(default_factory=list)  # card number of each sent record

    def values(self) -> dict[str, Any]:
        """Every parameter that is set, whatever the verb."""
        out: dict[str, Any] = {}
        if self.depth:
            out["depth"] = self.depth
        if self.trace:
            out["trace"] = True
        if self.wait:
            out["wait"] = True
        if self.thread.strip():
            out["thread"] = self.thread.strip()
        if self.said_at.strip():
            out["said_at"] = self.said_at.strip()
        if self.deny.strip():
            out["deny"] = self.deny.strip()
        if self.create_table.strip():
            out["create_table"] = self.create_table.strip()
        lines = [line.strip() for line in self.previous_results.splitlines() if line.strip()]
        if lines:
            out["previous_results"] = lines
        if self.verdict_run and self.verdict_value:
            out["verdict"] = {"run": self.verdict_run, "value": self.verdict_value}
        records = [card for card in self.cards if not card.empty]
        if records:
            out["scope"] = [card.record() for card in records]
        return out

    def data(self, verb: str, lang: str) -> tuple[dict[str, Any], list[str]]:
        """The request body for ``verb``, and the set parameters the verb does not take."""
        body: dict[str, Any] = {"text": self.text, "lang": lang}
        left_out = []
        for name, value in self.values().items():
            spec = param(name)
            if spec is not None and verb in spec.verbs:
                body[name] = value
            else:
                left_out.append(name)
        self.sent_cards = (
            [card.number for card in self.cards if not card.empty] if "scope" in body else []
        )
        return body, left_out

    @property
    def has_errors(self) -> bool:
        return any(card.error for card in self.cards)

    def summary(self, lang: str) -> list[tuple[str, str, str]]:
        """(label, value, which verbs) for every set value: a folded block never hides one."""
        out = []
        for name, value in self.values().items():
            spec = param(name)
            assert spec is not None
            if name in ("trace", "wait"):
                shown = _ON(lang)
            elif name == "scope":
                shown = _RECORDS(lang, n=len(value))
            elif name == "verdict":
                shown = f"{value['value']} → {value['run'][:8]}…"
            elif name == "previous_results":
                shown = _RECORDS(lang, n=len(value))
            else:
                shown = str(value)
            verbs = "" if len(spec.verbs) > 1 else _ONLY(lang, verb=spec.verbs[0])
            out.append((spec.label(lang), shown, verbs))
        return out

    def mark_scope_errors(self, fate: Mapping[str, Any] | None, lang: str) -> None:
        """Put a scope refusal on the card(s) it names (the service counts sent records)."""
        if not fate or fate.get("fate") != "bad_form":
            return
        note = fate.get("note", "")
        for index in fate.get("indexes", []):
            if index < len(self.sent_cards):
                number = self.sent_cards[index]
                for card in self.cards:
                    if card.number == number:
                        card.error = f"{_CARD(lang, n=number)}: {note}"


def read(post: Mapping[str, Any]) -> Stand:
    # Each card carries its own hidden "scope_cards" field: read every value, not the last one.
    given = (
        post.getlist("scope_cards") if hasattr(post, "getlist") else [post.get("scope_cards", "1")]
    )
    numbers = [int(n) for value in given for n in re.findall(r"\d+", str(value))] or [1]
    cards = []
    for number in numbers:
        prefix = f"scope-{number}-"
        cards.append(
            Card(
                number=number,
                kind=post.get(prefix + "kind", "calendar") or "calendar",
                fields={name: post.get(prefix + name, "") for name in SCOPE_FIELDS},
            )
        )
    return Stand(
        text=post.get("text", ""),
        verb=post.get("verb", ""),
        depth=post.get("depth", ""),
        trace=post.get("trace") in ("on", "true", "1"),
        wait=post.get("wait") in ("on", "true", "1"),
        thread=post.get("thread", ""),
        said_at=post.get("said_at", ""),
        deny=post.get("deny", ""),
        create_table=post.get("create_table", ""),
        previous_results=post.get("previous_results", ""),
        verdict_run=post.get("verdict_run", ""),
        verdict_value=post.get("verdict_value", ""),
        cards=cards,
    )
