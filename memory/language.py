"""Keywords built by code, with real morphology: the memory's cheapest way to read a phrase.

Russian words become lemmas (pymorphy3 with its OpenCorpora dictionary), so «друг», «друзья»
and «друзей» meet as «друг». English words lose stop words and are stemmed (Snowball), so
"friend" and "friends" meet as "friend". Function words are recognised by their grammatical
class (pronouns, prepositions, conjunctions, particles, question words), not by a hand list.
"""

from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*|\d+(?:[.,]\d+)?", re.UNICODE)
_CYRILLIC = re.compile(r"[а-яё]", re.IGNORECASE)
_LATIN = re.compile(r"^[a-z][a-z'-]*$")

# Grammemes that mark a word as a function word rather than a thing the memory stores.
_RU_FUNCTION_GRAMMEMES = frozenset(
    {"NPRO", "PREP", "CONJ", "PRCL", "INTJ", "Apro", "Ques", "Anph", "Dmns", "Prdx"}
)
# Verbs of being and having carry no subject of their own ("у меня есть друг").
_RU_LIGHT_LEMMAS = frozenset({"быть", "есть", "являться", "это"})


@lru_cache(maxsize=1)
def _morph():  # type: ignore[no-untyped-def]
    import pymorphy3

    return pymorphy3.MorphAnalyzer(lang="ru")


@lru_cache(maxsize=1)
def _english():  # type: ignore[no-untyped-def]
    import snowballstemmer
    import stopwords

    return snowballstemmer.stemmer("english"), frozenset(stopwords.get_stopwords("english"))


@lru_cache(maxsize=65536)
def _russian_lemma(word: str) -> str | None:
    parse = _morph().parse(word)[0]
    if _RU_FUNCTION_GRAMMEMES & set(parse.tag.grammemes):
        return None
    lemma = parse.normal_form.replace("ё", "е")
    if lemma in _RU_LIGHT_LEMMAS:
        return None
    return lemma


@lru_cache(maxsize=65536)
def _english_stem(word: str) -> str | None:
    stemmer, stop = _english()
    if word in stop:
        return None
    return stemmer.stemWord(word)


def words(text: str) -> list[str]:
    """The words of a phrase, lower-cased, with «ё» folded into «е»."""
    return [match.group(0).lower().replace("ё", "е") for match in _WORD.finditer(text)]


def lemma(word: str) -> str | None:
    """The matching form of one word, or None for a function word."""
    word = word.lower().replace("ё", "е")
    if not word:
        return None
    if word[0].isdigit():
        return word
    if _CYRILLIC.search(word):
        return _russian_lemma(word)
    if _LATIN.match(word):
        return _english_stem(word) if len(word) > 1 else None
    return word


def terms(text: str) -> list[str]:
    """Every content lemma of a phrase, repeats kept: what the full-text index counts."""
    return [found[:64] for found in map(lemma, words(text)) if found]


def keywords(text: str) -> list[str]:
    """Distinct content lemmas of a phrase, in the order they first appear."""
    return list(dict.fromkeys(terms(text)))
