"""Keywords built by code, with real morphology: the memory's cheapest way to read a phrase.

Russian words become lemmas (pymorphy3 with its OpenCorpora dictionary), so «друг», «друзья»
and «друзей» meet as «друг». English words lose stop words and are stemmed (Snowball), so
"friend" and "friends" meet as "friend". Function words are recognised by their grammatical
class (pronouns, prepositions, conjunctions, particles, question words), not by a hand list.
"""

from __future__ import annotations

import calendar
import re
import threading
from collections.abc import Sequence
from datetime import date
from functools import lru_cache

from django.utils import timezone

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
def _stop() -> frozenset[str]:
    import stopwords

    return frozenset(stopwords.get_stopwords("english"))


# A Snowball stemmer keeps the word it works on in itself: two threads stemming with one
# instance corrupt each other's word (an IndexError inside find_among_b, seen with eight
# concurrent remembers and the outbox's lane). Each thread has its own.
_local = threading.local()


def _stemmer(language: str):  # type: ignore[no-untyped-def]
    """This thread's Snowball stemmer of ``language`` ("english", "russian")."""
    stemmers = _local.__dict__.setdefault("stemmers", {})
    if language not in stemmers:
        import snowballstemmer

        stemmers[language] = snowballstemmer.stemmer(language)
    return stemmers[language]


def _english():  # type: ignore[no-untyped-def]
    return _stemmer("english"), _stop()


# Where the dictionary weighs two readings the same, a noun in its own form wins when it is one
# of them («Оленина»: оленина, as «Олениной» reads), else a proper name («Весту»: Веста, as
# «Весте» and «Весты» read, not вест): every form of a name meets as one lemma. Other ties keep
# the dictionary's first reading.
_RU_NAME_GRAMMEMES = frozenset({"Name", "Surn", "Patr", "Geox", "Orgn", "Trad"})


@lru_cache(maxsize=65536)
def _russian_lemma(word: str) -> str | None:
    parses = _morph().parse(word)
    tied = [p for p in parses if p.score >= parses[0].score - 1e-9]
    parse = next(
        (p for p in tied if p.normal_form == word and "NOUN" in p.tag),
        next((p for p in tied if _RU_NAME_GRAMMEMES & set(p.tag.grammemes)), parses[0]),
    )
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


@lru_cache(maxsize=65536)
def readings(word: str) -> frozenset[str]:
    """Every lemma a word may have (a Russian word's dictionary readings: «перешли» is
    «перейти» or «переслать»), where ``lemma`` keeps one; an English word's stem."""
    word = word.lower().replace("ё", "е")
    if _CYRILLIC.search(word):
        return frozenset(p.normal_form.replace("ё", "е") for p in _morph().parse(word))
    found = lemma(word)
    return frozenset({found} if found else ())


def other_readings(text: str) -> dict[str, list[str]]:
    """The other readings (``readings``) of a phrase's keywords, where the dictionary has more
    than one: {the keyword ``keywords`` chose: [its other lemmas]}. «до сантехника» reads
    «сантехника» (the plumbing) first and «сантехник» (the plumber) second; the phrase alone
    cannot say which was meant, the memory's words can (``memory.levels.context``). A reading
    that is a function word is listed too: no note is indexed by one, so none is chosen."""
    out: dict[str, list[str]] = {}
    for word in words(text):
        chosen = lemma(word)
        others = sorted(readings(word) - {chosen}) if chosen else []
        if others and chosen not in out:
            out[chosen] = others
    return out


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


ROOT_MIN = 4  # the shortest stem that can name a root («сбер», "plan"); «дом», «люб» cannot


def roots(text: str, ignore: frozenset[str] = frozenset()) -> set[str]:
    """The stems of a phrase's content words (Snowball, in either language), numbers and the
    words whose lemma is in ``ignore`` left out: what ``share_root`` compares."""
    out = set()
    for word in words(text):
        found = lemma(word)
        if not found or found[:1].isdigit() or found in ignore:
            continue
        stem = _stemmer("russian").stemWord(word) if _CYRILLIC.search(word) else found
        if len(stem) >= ROOT_MIN:
            out.add(stem)
    return out


def shared_roots(a: set[str], b: set[str]) -> set[str]:
    """The roots two phrases' ``roots`` share, one stem inside the other (the shorter kept):
    «Сбер» and «Сбербанке», «стригусь» and «подстригает», «клинингом» and «клининговая», which
    the dictionary gives different lemmas."""
    return {min(x, y, key=len) for x in a for y in b if x in y or y in x}


def names(text: str) -> set[str]:
    """The lemmas of the words written with a capital inside a sentence (not its first word):
    the names a phrase speaks of («Какой номер у брата Антона?» → антон)."""
    out = set()
    for match in _WORD.finditer(text):
        word = match.group(0)
        opening = text[: match.start()].rstrip(" «\"'„“(")
        if word[:1].isupper() and opening and not opening.endswith((".", "!", "?")):
            found = lemma(word)
            if found:
                out.add(found)
    return out


_PHONE = re.compile(r"\+?\d[\d\s()\-]{6,}\d")
_MONEY = re.compile(r"[₽$€£]|\d\s*(?:k|тыс)\b", re.IGNORECASE)
_DAY = re.compile(r"\b\d{1,2}[./]\d{1,2}(?:[./]\d{2,4})?\b")
# Words that make a number an address, an amount or a time, in either language (lemmas/stems).
_VALUE_WORDS = {
    "address": (
        "улица", "проспект", "переулок", "шоссе", "бульвар", "набережная", "адрес", "дом",
        "квартира", "офис", "street", "road", "lane", "avenu", "address", "flat", "floor",
        "squar", "unit", "yard",
    ),
    "money": (
        "рубль", "тысяча", "миллион", "евро", "доллар", "стоить", "платить", "заплатить",
        "обходиться", "обойтись", "цена", "pound", "euro", "dollar", "cost", "price", "pay",
        "paid", "spend", "spent", "money", "fee", "charg", "bill", "quot", "budget",
    ),
    "date": (
        "январь", "февраль", "март", "апрель", "май", "июнь", "июль", "август", "сентябрь",
        "октябрь", "ноябрь", "декабрь", "januari", "februari", "march", "april", "may", "june",
        "juli", "august", "septemb", "octob", "novemb", "decemb", "monday", "tuesday",
        "wednesday", "thursday", "friday", "saturday", "sunday", "понедельник", "вторник",
        "среда", "четверг", "пятница", "суббота", "воскресенье",
    ),
}  # fmt: skip


# What a question asks for by name, and what a statement must hold to answer it: the name (or a
# near one: a phone's «номер»), or a value of that kind. «Какой телефон у Ирины Львовны?» is
# not answered by «Ирина Львовна приходит по вторникам»: every word but the one asked for is
# there, and the rarer words outweigh it (PASSPORT.md «Поиск»).
_ASKED = {
    "phone": ("телефон", "phone", "phones", "telephone"),
    "number": ("номер", "number", "numbers"),
    "code": ("код", "пароль", "code", "codes", "password", "passwords", "pin"),
    "email": ("почта", "email", "emails", "e-mail"),
    "address": ("адрес", "address", "addresses"),
}  # fmt: skip
# The names that also answer a kind: a phone is a number, an e-mail is an address.
_ANSWERED_BY = {
    "phone": ("phone", "number"),
    "number": ("number", "phone"),
    "code": ("code",),
    "email": ("email",),
    "address": ("address", "email"),
}
# Words that name a value's slot, not a subject: sharing one says nothing about whose it is. The
# names a question asks for a value by, and «мобильный», which names a phone's slot beside «номер»
# but asks for nothing alone ("mobile game").
_SLOT_WORDS = (*(name for names in _ASKED.values() for name in names), "мобильный", "mobile")
# Kin and other people a statement is about; two statements about different ones are about
# different subjects («телефон брата» / «телефон сестры»).
_PEOPLE_WORDS = (
    "брат", "сестра", "жена", "муж", "сын", "дочь", "дочка", "мама", "мать", "папа", "отец",
    "тёща", "тесть", "свекровь", "бабушка", "дедушка", "ребёнок", "дети", "друг", "подруга",
    "коллега", "сосед", "brother", "sister", "wife", "husband", "son", "daughter", "mum",
    "mother", "dad", "father", "child", "children", "kid", "friend", "colleague", "neighbour",
    "grandmother", "grandfather", "granny", "grandad", "родители", "parents",
)  # fmt: skip


@lru_cache(maxsize=8)
def _listed(kind: str) -> frozenset[str]:
    """The lemmas of one of this module's word lists: a value's ("address", "money", "date"),
    "slot" or "people" — read once."""
    listed = {"slot": _SLOT_WORDS, "people": _PEOPLE_WORDS, **_VALUE_WORDS}[kind]
    return frozenset(lemma(w) or w for w in listed)


@lru_cache(maxsize=1)
def slots() -> frozenset[str]:
    """The lemmas of words that name a value's slot («телефон», "code") and of value words: an
    address's, an amount's, a date's (a month or a weekday is part of a value, as a number is,
    whether or not the language writes it with a capital)."""
    return _listed("slot") | _listed("address") | _listed("money") | _listed("date")


def people(text: str) -> set[str]:
    """The kin and other people a phrase is about («брата» → брат, "children" → child)."""
    return set(keywords(text)) & _listed("people")


# The speaker in the first person singular: "my work mobile" is the speaker's own.
_FIRST_PERSON = frozenset(
    "i my me mine myself я мой моя моё мое мои моего моей моих моему моим моими моем моём "
    "меня мне мной".split()
)


def first_person(text: str) -> bool:
    """Does a phrase speak of the speaker («мой телефон», "my mobile", «у меня»)?"""
    return any(word.lower() in _FIRST_PERSON for word in _WORD.findall(text))


_FROM = frozenset({"from", "с", "со"})
_FROM_NOW = frozenset({"now", "today", "tomorrow"})


def from_a_time(text: str) -> bool:
    """Does a phrase say a value holds from a time on: «с марта», «со вторника», «с 1 мая»,
    "from January", "from Monday", "from now on"?"""
    dates = _listed("date")
    said = words(text)
    for i, word in enumerate(said[:-1]):
        if word not in _FROM:
            continue
        following = said[i + 1]
        then = said[i + 2] if i + 2 < len(said) else ""
        if (
            following in _FROM_NOW
            or lemma(following) in dates
            or (following.isdigit() and then and lemma(then) in dates)
        ):
            return True
    return False


def _digit(text: str) -> bool:
    return any(ch.isdigit() for ch in text)


def values(text: str) -> set[str]:
    """The kinds of value a phrase states, read by code: a phone, an address, an amount of
    money, a date. Two near statements with a value of the same kind about the same people say
    its old and its new value (``memory.knowledge.supersede``)."""
    found = set()
    lemmas = set(keywords(text))
    if _PHONE.search(text):
        found.add("phone")
    if _digit(text):
        for kind in ("address", "money", "date"):
            if lemmas & _listed(kind):
                found.add(kind)
    if _MONEY.search(text):
        found.add("money")
    if _DAY.search(text):
        found.add("date")
    return found


# A question that asks who, where, when, why or how («Где взять номер ИНН?», «Кто знает код от
# сейфа?», "How does he address them?", "When did he start his mobile game?") asks for something
# else than the value, unless it also asks what or which one.
_OTHER_ASKS = frozenset(
    "где куда откуда когда почему зачем как кто кого кому кем чей чья чье чьи "
    "where when why how who whom whose".split()
)
_WHAT = frozenset(
    "какой какая какое какие какого какую каким каков какова каково что what which".split()
)


@lru_cache(maxsize=1)
def _asked_names() -> dict[str, frozenset[str]]:
    """Each kind's names: Russian words by their lemma («телефона» → телефон), English ones as
    written (a stem would take "coding" for "code")."""
    return {
        kind: frozenset(lemma(w) or w if _CYRILLIC.search(w) else w for w in listed)
        for kind, listed in _ASKED.items()
    }


# An English name right after one of these is a verb ("how does he address them", "to code").
_VERB_BEFORE = frozenset("i you he she we they to does do did will can could should would".split())


def _named(text: str) -> set[str]:
    said = set()
    before = ""
    for w in words(text):
        if _CYRILLIC.search(w):
            said.add(lemma(w) or w)
        elif before not in _VERB_BEFORE:
            said.add(w)
        before = w
    return {kind for kind, names in _asked_names().items() if said & names}


# Values a question asks for by a phrase, which carries its own question word: a version
# («какую версию», "which version": a number), years («сколько лет», "how old", "what age") and a
# price («сколько стоит», «во сколько обходится», "how much … cost/pay/charge"). Years and a
# price are also asked by a name («возраст»; «цена», «стоимость», "price"), which counts as any
# name does: not in a question that asks who, where, when, why or how («Кто считает стоимость
# виллы?» asks for a person). They are held by a number in digits or in words («двенадцать
# лет», "fourteen"), a price also by its being free.
_PHRASE_NAMES = {
    "years": frozenset({"возраст"}),
    "price": frozenset({"цена", "стоимость", "price"}),
}
_YEARS_PAIRS = frozenset({("how", "old"), ("what", "age"), ("сколько", "год")})
_VERSION = frozenset({"версия", "version"})
_FREE = re.compile(r"бесплатн|даром|\bfree\b|\bfor nothing\b", re.IGNORECASE)
_NUMBER_WORDS = frozenset(
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety "
    "hundred thousand million billion dozen half".split()
)


def _asked_by_phrase(said: list[str], lemmas: list[str]) -> set[str]:
    pairs = set(zip(lemmas, lemmas[1:], strict=False)) | set(zip(said, said[1:], strict=False))
    kinds = {"years"} if pairs & _YEARS_PAIRS else set()
    # «Какую версию», "which version": a version is a number ("his own version of love" is not)
    if any(w in _WHAT and lemmas[i + 1] in _VERSION for i, w in enumerate(said[:-1])):
        kinds.add("number")
    after_how_much = next(
        (said[i + 2 :] for i in range(len(said) - 1) if said[i : i + 2] == ["how", "much"]), []
    )
    money = _listed("money")  # the words that make a number an amount (``values``)
    if ("сколько" in said and set(lemmas) & money) or {lemma(w) for w in after_how_much} & money:
        kinds.add("price")
    return kinds


def _numeral(text: str) -> bool:
    """Does a phrase hold a number, in digits or in words («двенадцать», "fourteen")?"""
    if _digit(text):
        return True
    return any(
        w in _NUMBER_WORDS or (_CYRILLIC.search(w) and _morph().parse(w)[0].tag.POS == "NUMR")
        for w in words(text)
    )


def asked_values(question: str) -> set[str]:
    """The kinds of value a question asks for: by name a phone, a number, a code or password,
    an e-mail, an address, years, a price (none when it asks who, where, when, why or how, and
    not what); by a phrase a version's number, years or a price (``_asked_by_phrase``)."""
    said = words(question)
    lemmas = [lemma(w) or w for w in said]
    kinds = _asked_by_phrase(said, lemmas)
    if set(said) & _OTHER_ASKS and not set(said) & _WHAT:
        return kinds
    by_name = {kind for kind, names in _PHRASE_NAMES.items() if set(lemmas) & names}
    return kinds | by_name | _named(question)


def _holds(text: str, kind: str, named: set[str]) -> bool:
    if kind == "years":
        return _numeral(text)
    if kind == "price":
        return _numeral(text) or bool(_FREE.search(text))
    if named & set(_ANSWERED_BY[kind]):
        return True
    digit = _digit(text)
    if kind == "phone":
        return bool(_PHONE.search(text))
    if kind in ("number", "code"):
        return digit
    if kind == "email":
        return "@" in text
    return digit or "@" in text or "address" in values(text)  # an address has a number


def unheld(question: str, texts: Sequence[str]) -> list[str]:
    """The kinds of value the question asks for (``asked_values``) that none of ``texts``
    holds, by name or as a value: such statements do not answer it."""
    asked = asked_values(question)
    if not asked:
        return []
    named = [_named(t) for t in texts]
    return sorted(
        kind
        for kind in asked
        if not any(_holds(t, kind, n) for t, n in zip(texts, named, strict=True))
    )


def without_unheld_words(question: str, text: str) -> str | None:
    """The question with the content words ``text`` does not hold left out — neither by lemma
    nor by a shared root (``shared_roots``) — function words kept: «Кто лечит мне зубы?» beside
    «Мой стоматолог — доктор Руденко» is «кто мне». None when the text holds every content word
    (nothing to leave out), and None when it holds none of them and is written in another
    alphabet: words cannot say what a Russian note lacks of an English question ("favourite" is
    «любимый»). What ``memory.decision.pull`` compares the whole question with."""
    held = set(keywords(text))
    held_roots = roots(text)
    kept, left_out, any_held = [], False, False
    for word in words(question):
        found = lemma(word)
        if found and found not in held and not shared_roots(roots(word), held_roots):
            left_out = True
            continue
        any_held = any_held or bool(found)
        kept.append(word)
    if not any_held and bool(_CYRILLIC.search(question)) != bool(_CYRILLIC.search(text)):
        return None
    return " ".join(kept) if left_out else None


def same_question(a: str, b: str) -> bool:
    """Do two phrases ask the same thing: the same content lemmas (word order, case, function
    words and inflection aside), or the same text?"""
    return a.strip() == b.strip() or set(keywords(a)) == set(keywords(b))


# ---- days and months a phrase names ------------------------------------------------------

_MONTHS_EN = (
    "january february march april may june july august september october november december"
).split()
_MONTHS_RU = (
    "январь февраль март апрель май июнь июль август сентябрь октябрь ноябрь декабрь"
).split()
# English month names that are also common words count only beside a day or a year.
_AMBIGUOUS_EN = frozenset({"may", "march", "august"})
_ISO_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")


def _month(word: str) -> int | None:
    if word in _MONTHS_EN:
        return _MONTHS_EN.index(word) + 1
    if _CYRILLIC.search(word):
        found = _russian_lemma(word)
        if found in _MONTHS_RU:
            return _MONTHS_RU.index(found) + 1
    return None


def _number(token: str | None, low: int, high: int) -> int | None:
    if token is None or not token.isdigit():
        return None
    value = int(token)
    return value if low <= value <= high else None


def periods(text: str, today: date | None = None) -> list[tuple[date, date]]:
    """The days and months a phrase names, as (first day, last day): "on October 24, 2023",
    "1 February, 2023", "in August 2023", «3 марта», «в августе 2023 года», "2023-10-24". A date
    without its year is the latest one not after ``today``; a month name that is also a common
    English word ("may", "march") counts only beside a day or a year. Read by code from the
    words, never by a model; a year alone or a relative date ("last week") is not read."""
    today = today or timezone.localdate()
    found: list[tuple[date, date]] = []
    for match in _ISO_DAY.finditer(text):
        try:
            day = date(int(match[1]), int(match[2]), int(match[3]))
        except ValueError:
            continue
        found.append((day, day))
    tokens = words(_ISO_DAY.sub(" ", text))
    for i, word in enumerate(tokens):
        month = _month(word)
        if month is None:
            continue
        before = tokens[i - 1] if i > 0 else None
        after = tokens[i + 1] if i + 1 < len(tokens) else None
        day = _number(before, 1, 31) or _number(after, 1, 31)
        rest = tokens[i + 2 : i + 3] if _number(after, 1, 31) else tokens[i + 1 : i + 2]
        year = _number(rest[0] if rest else None, 1000, 9999)
        if word in _AMBIGUOUS_EN and day is None and year is None:
            continue
        if year is None:
            year = today.year
            if (month, day or 1) > (today.month, today.day):
                year -= 1
        try:
            first = date(year, month, day or 1)
        except ValueError:
            continue
        last = first if day else date(year, month, calendar.monthrange(year, month)[1])
        found.append((first, last))
    return list(dict.fromkeys(found))
