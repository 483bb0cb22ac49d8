"""Names: the one function through which every table or column name reaches SQL.

Normalise, never repair (PASSPORT.md §11). Case, spaces, hyphens and underscores are forms of
one name and are folded. Anything else that is not a letter of the Russian or the ASCII Latin
alphabet or an ASCII digit — a semicolon, a quote, a backslash, a comment mark, a control or
zero-width character, a letter of another script — means what came is not a name, and the whole
label is refused with the reason. ``x; DROP TABLE …`` never becomes a column.

Cyrillic is transliterated by one fixed, named scheme (iuliia's ``wikipedia``), never guessed.
Reserved SQL words (sqlparse's keyword lists) and the memory's own column names are refused, so
are names over the database's identifier limit. A label equal to an existing one after
normalisation and lemmatisation reuses the existing name instead of making a near-duplicate.

A refusal's reason is written in Russian and English (``NameRefused.text``); its ``message`` is in
the language active when it is raised — the answer's ``lang`` while a request is served.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import iuliia
from django.utils import translation

from memory import language
from memory.errors import MemoryServiceError
from memory.i18n import Text

SCHEME = iuliia.WIKIPEDIA
SCHEME_NAME = "wikipedia"  # iuliia's name for the scheme; recorded with every catalog entry

# Suffixes of the two companion columns of every kind (value, kind of claim, basis).
KIND_SUFFIX = "__kind"
BASIS_SUFFIX = "__basis"
TABLE_PREFIX = "mem_"
MAX_WORDS = 4
# PostgreSQL cuts identifiers at 63 bytes; SQLite has no limit, but a name must work on both.
IDENTIFIER_LIMIT = 63
MAX_NAME_LENGTH = IDENTIFIER_LIMIT - max(len(BASIS_SUFFIX), len(TABLE_PREFIX))

# The memory's own columns in grown tables and the root table's name.
OWN_NAMES = frozenset(
    {"id", "architect_id", "root_id", "value", "created_at", "root", "mem", "oid", "ctid", "rowid"}
)

_RUSSIAN = "абвгдеёжзийклмнопрстуфхцчшщъыьэюя"
_SEPARATORS = frozenset(" -_")
_QUOTE = Text(ru="кавычка", en="a quote")
_FORBIDDEN = {
    ";": Text(ru="точка с запятой", en="a semicolon"),
    "'": _QUOTE,
    '"': _QUOTE,
    "`": _QUOTE,
    "‘": _QUOTE,
    "’": _QUOTE,
    "“": _QUOTE,
    "”": _QUOTE,
    "«": _QUOTE,
    "»": _QUOTE,
    "\\": Text(ru="обратная косая черта", en="a backslash"),
    "/": Text(ru="косая черта", en="a slash"),
    "*": Text(ru="звёздочка", en="an asterisk"),
    "#": Text(ru="решётка", en="a hash sign"),
}
_NOT_A_NAME = Text(ru="«{label}» — не имя: {reason}", en="«{label}» is not a name: {reason}")


class NameRefused(MemoryServiceError):
    """A refused label. ``message`` and ``details["reason"]`` are in the language active when it
    was refused (the answer's ``lang`` during a request); ``text`` and ``reason`` carry both."""

    code = "name_refused"
    status = 400
    text: Text
    reason: Text


@dataclass(frozen=True)
class Name:
    """A label that passed: its SQL name, its lemma key for near-duplicates, and the label."""

    label: str
    name: str
    key: str
    reused: bool = False


@lru_cache(maxsize=1)
def reserved_words() -> frozenset[str]:
    from sqlparse import keywords

    words: set[str] = set()
    for table in (keywords.KEYWORDS, keywords.KEYWORDS_COMMON, keywords.KEYWORDS_PLPGSQL):
        words.update(word.lower() for word in table)
    return frozenset(words) | OWN_NAMES


def _lang() -> str:
    return "en" if (translation.get_language() or "").startswith("en") else "ru"


def _refuse(label: str, reason: Text, **values: str) -> NameRefused:
    said = Text(ru=reason.ru.format(**values), en=reason.en.format(**values))
    text = Text(
        ru=_NOT_A_NAME.ru.format(label=label, reason=said.ru),
        en=_NOT_A_NAME.en.format(label=label, reason=said.en),
    )
    lang = _lang()
    refusal = NameRefused(text(lang), details={"label": label, "reason": said(lang)})
    refusal.text, refusal.reason = text, said
    return refusal


def _describe(char: str) -> str:
    return f"U+{ord(char):04X} {unicodedata.name(char, 'unnamed')}"


def _check_characters(label: str) -> None:
    if "--" in label:
        raise _refuse(
            label, Text(ru="в нём есть знак комментария '--'", en="it contains a comment mark '--'")
        )
    for char in label:
        if char in _FORBIDDEN:
            what = _FORBIDDEN[char]
            raise _refuse(
                label,
                Text(
                    ru="в нём есть " + what.ru + " {char}", en="it contains " + what.en + " {char}"
                ),
                char=repr(char),
            )
        category = unicodedata.category(char)
        if category in ("Cc", "Cf", "Cs", "Co", "Cn"):
            raise _refuse(
                label,
                Text(
                    ru="в нём есть невидимый или управляющий символ {char}",
                    en="it contains an invisible or control character {char}",
                ),
                char=_describe(char),
            )
        if char in _SEPARATORS or ("a" <= char.lower() <= "z" and char.isascii()):
            continue
        if char.isascii() and char.isdigit():
            continue
        if char.lower() in _RUSSIAN:
            continue
        if category.startswith("Z"):
            raise _refuse(
                label,
                Text(
                    ru="в нём есть необычный пробел {char}",
                    en="it contains an unusual space {char}",
                ),
                char=_describe(char),
            )
        if "CYRILLIC" in unicodedata.name(char, ""):
            raise _refuse(
                label,
                Text(
                    ru="{char} — вне русского алфавита, который покрывает транслитерация {scheme}",
                    en="{char} is outside the Russian alphabet that the {scheme} "
                    "transliteration covers",
                ),
                char=_describe(char),
                scheme=SCHEME_NAME,
            )
        if category.startswith("L") or category.startswith("N"):
            raise _refuse(
                label,
                Text(
                    ru="{char} — не буква русского или латинского (ASCII) алфавита и не цифра "
                    "ASCII",
                    en="{char} is not a Russian or ASCII Latin letter or an ASCII digit",
                ),
                char=_describe(char),
            )
        raise _refuse(
            label,
            Text(
                ru="в нём есть {char}, а в имени такого быть не может",
                en="it contains {char}, which a name cannot hold",
            ),
            char=_describe(char),
        )


def _fold(label: str) -> list[str]:
    """Case, spaces, hyphens and underscores are forms of one name: split into lower words."""
    return [w for w in re.split(r"[ \-_]+", label.lower()) if w]


def lemma_key(words: Iterable[str]) -> str:
    """Equal after normalisation and lemmatisation ⇒ one name ("друзья" and "друг")."""
    lemmas = [language.lemma(w) or w for w in words]
    return " ".join(lemmas)


def check(label: str, *, existing: Iterable[Name] = ()) -> Name:
    """Turn a label into a SQL name, or refuse it whole with the reason.

    ``existing`` are the names already in the same namespace (an architect's tables, or the
    columns of one table): a near-duplicate reuses the existing name.
    """
    if not isinstance(label, str):
        raise _refuse(str(label), Text(ru="имя — это текст", en="a name is text"))
    label = unicodedata.normalize("NFC", label)
    if not label.strip():
        raise _refuse(label, Text(ru="оно пустое", en="it is empty"))
    if len(label) > 200:
        raise _refuse(
            label[:40] + "…",
            Text(
                ru="имя — короткое название, а не текст", en="a label is a short name, not a text"
            ),
        )
    _check_characters(label)
    words = _fold(label)
    if not words:
        raise _refuse(label, Text(ru="в нём нет букв", en="it has no letters"))
    if len(words) > MAX_WORDS:
        raise _refuse(
            label,
            Text(
                ru="имя — не больше {most} слов, а не фраза (слов: {count}); назовите вещь, а не "
                "предложение",
                en="a label is at most {most} words, not a phrase ({count} words); name the "
                "thing, not the sentence",
            ),
            most=str(MAX_WORDS),
            count=str(len(words)),
        )
    key = lemma_key(words)
    for other in existing:
        if other.key == key:
            return Name(label=label, name=other.name, key=key, reused=True)
    latin = [SCHEME.translate(word).lower() for word in words]
    for word, translated in zip(words, latin, strict=True):
        if not translated:
            raise _refuse(
                label,
                Text(
                    ru="в слове {word} после транслитерации не осталось букв",
                    en="the word {word} has no letters once transliterated",
                ),
                word=repr(word),
            )
    name = "_".join(latin)
    if not re.fullmatch(r"[a-z0-9_]+", name):
        raise _refuse(
            label,
            Text(
                ru="транслитерация {scheme} дала {name}, а не ASCII",
                en="the {scheme} transliteration gave {name}, not ASCII",
            ),
            scheme=SCHEME_NAME,
            name=repr(name),
        )
    if not name[0].isalpha():
        raise _refuse(label, Text(ru="имя начинается с буквы", en="a name starts with a letter"))
    if name in reserved_words():
        raise _refuse(
            label,
            Text(ru="{name} — зарезервированное слово", en="{name} is a reserved word"),
            name=repr(name),
        )
    if len(name) > MAX_NAME_LENGTH:
        raise _refuse(
            label,
            Text(
                ru="{name} после транслитерации — {length} символов; предел — {limit}",
                en="{name} is {length} characters after transliteration; the limit is {limit}",
            ),
            name=repr(name),
            length=str(len(name)),
            limit=str(MAX_NAME_LENGTH),
        )
    for other in existing:
        if other.name == name:
            return Name(label=label, name=name, key=other.key, reused=True)
    return Name(label=label, name=name, key=key)
