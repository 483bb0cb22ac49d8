"""Named things in a phrase, offline: Russian by natasha (its NER and morphology models ship in
the package), English by simple rules. Used when no model is configured, and to build the
graph's keywords for a question."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import lru_cache

from memory import language

_TYPES = {"PER": "person", "LOC": "place", "ORG": "organization"}
_CAPITALISED = re.compile(r"\b[A-Z][a-zA-Z'-]+(?:\s+[A-Z][a-zA-Z'-]+)*")
_LOCK = threading.Lock()


@dataclass(frozen=True)
class Named:
    name: str
    type: str


@lru_cache(maxsize=1)
def _natasha():  # type: ignore[no-untyped-def]
    from natasha import Doc, MorphVocab, NewsEmbedding, NewsMorphTagger, NewsNERTagger, Segmenter

    embedding = NewsEmbedding()
    return Doc, Segmenter(), MorphVocab(), NewsMorphTagger(embedding), NewsNERTagger(embedding)


def _russian(text: str) -> list[Named]:
    doc_class, segmenter, vocab, morph, ner = _natasha()
    with _LOCK:  # the taggers keep per-call state
        doc = doc_class(text)
        doc.segment(segmenter)
        doc.tag_morph(morph)
        doc.tag_ner(ner)
        found = []
        for span in doc.spans:
            span.normalize(vocab)
            found.append(Named(span.normal or span.text, _TYPES.get(span.type, "thing")))
    return found


def _english(text: str) -> list[Named]:
    """Runs of capitalised words, leaving out a sentence's first word when it is a stop word."""
    found = []
    for match in _CAPITALISED.finditer(text):
        words = match.group(0).split()
        start = match.start()
        sentence_start = start == 0 or text[:start].rstrip().endswith((".", "!", "?"))
        if sentence_start and language.lemma(words[0]) is None:
            words = words[1:]
        if words:
            found.append(Named(" ".join(words), "thing"))
    return found


# The same text is read again and again: a note at remember and again each time a later note
# is weighed against it (supersede), a question at levels 3 and 5. Its things do not change, so
# the last texts' are kept (at most ``RECENT_LENGTH`` characters each: a long text is read once).
RECENT = 2048
RECENT_LENGTH = 2000


def entities(text: str) -> list[Named]:
    if len(text) <= RECENT_LENGTH:
        return list(_recent(text))
    return _entities(text)


@lru_cache(maxsize=RECENT)
def _recent(text: str) -> tuple[Named, ...]:
    return tuple(_entities(text))


def _entities(text: str) -> list[Named]:
    found: dict[str, Named] = {}
    if re.search(r"[а-яё]", text, re.I):
        for named in _russian(text):
            found.setdefault(named.name.lower(), named)
    for named in _english(text):
        found.setdefault(named.name.lower(), named)
    return list(found.values())
