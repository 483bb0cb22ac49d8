"""The forms a parameter can take. Each shape yields a fresh DRF field: the same field validates
a request, describes the parameter in the OpenAPI schema, and picks the playground's widget.

The validator and the published schema say the same thing (tests/contract/test_schema_agreement.py
checks it both ways): strings are strings (no number is taken for one), kept as sent (no silent
trimming, so a length is the length the schema counts), a non-blank string holds a character that
is not a space, tab or line break (the schema's ``pattern``), a date is exactly ``YYYY-MM-DD``, a run id is a
UUID written 8-4-4-4-12, and a record takes only the keys it names.

Every message a field can give is written here in Russian and English and follows the language
active when it is raised (the answer's ``lang``): DRF's own catalogue lacks several of them.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from django.core.validators import RegexValidator
from django.utils import translation
from django.utils.functional import lazy
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rfc3339_validator import validate_rfc3339

from memory.i18n import Text

UPLOAD_KINDS = ("text", "image", "video", "audio", "document")
SCOPE_KINDS = ("calendar", "geo")
# The longest phrase (`text`, `deny`, an item of `previous_results`), in characters. The request
# body limit (MEMORY_MAX_BODY_BYTES) must hold a phrase this long however it is written in JSON.
TEXT_MAX_CHARS = 20_000
PLACE_MAX_CHARS = 100
# A place key as sent: letters of the Russian or ASCII Latin alphabet in either case, digits,
# ':', '_', '-'; spaces, tabs and line breaks around it are allowed and dropped. Stored
# lower-cased. Whitespace is named character by character: regex engines disagree on `\s`.
SPACES = " \t\n\r"
PLACE_PATTERN = r"^[ \t\n\r]*[0-9A-Za-zА-ЯЁа-яё][0-9A-Za-zА-ЯЁа-яё:_-]*[ \t\n\r]*$"
# A thread id; the lookahead keeps Python's `$` from accepting a trailing newline.
THREAD_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]*(?!\n)$"
THREAD_MAX_CHARS = 200
# Not blank: holds a character other than a space, a tab or a line break.
NOT_BLANK = r"[^ \t\n\r]"
DATE_PATTERN = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
# The years a moment (``said_at``) may name: 1900-2099.
MOMENT_YEARS = r"^(19|20)[0-9]{2}-"
UUID_PATTERN = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)


def current_lang() -> str:
    """The language active now: the answer's `lang` while a request is served."""
    return "en" if (translation.get_language() or "").startswith("en") else "ru"


def _say(text: Text) -> str:
    return text(current_lang())


# A message that is written in the language active when it is shown, not when it is made.
say = lazy(_say, str)


def refusal(text: Text, **values: Any) -> str:
    """A validation message in the language active now."""
    return text(current_lang(), **values)


_JSON_TYPES = {
    dict: "object",
    list: "array",
    str: "string",
    int: "number",
    float: "number",
    bool: "boolean",
    type(None): "null",
}


def json_type(value: Any) -> str:
    return _JSON_TYPES.get(type(value), type(value).__name__)


_REQUIRED = Text(ru="обязательное поле", en="this field is required")
_NULL = Text(ru="null здесь не допускается", en="null is not allowed here")
_NOT_STRING = Text(ru="ожидалась строка", en="a string was expected")
_BLANK = Text(ru="пустая строка или одни пробелы", en="empty, or only whitespace")
_TOO_LONG = Text(ru="длиннее {max_length} символов", en="longer than {max_length} characters")
_TOO_SHORT = Text(ru="короче {min_length} символов", en="shorter than {min_length} characters")
_CHOICE = Text(ru="«{input}» — не из допустимых значений", en='"{input}" is not a valid choice')
_BOOLEAN = Text(ru="ожидалось true или false", en="true or false was expected")
_NOT_LIST = Text(ru="ожидался список", en="a list was expected")
_LIST_EMPTY = Text(ru="список не может быть пустым", en="the list may not be empty")
_LIST_TOO_LONG = Text(ru="больше {max_length} элементов", en="more than {max_length} items")
_LIST_TOO_SHORT = Text(ru="меньше {min_length} элементов", en="fewer than {min_length} items")
_DATE = Text(
    ru="дата пишется ровно так: ГГГГ-ММ-ДД, и такой день должен быть в календаре",
    en="a date is written exactly YYYY-MM-DD, and the day must exist",
)
_DATETIME = Text(
    ru="момент пишется по RFC 3339: ГГГГ-ММ-ДДTчч:мм:сс и смещение (Z или +03:00), год 1900–2099",
    en="a moment is written as RFC 3339: YYYY-MM-DDThh:mm:ss and an offset (Z or +03:00), "
    "in the years 1900-2099",
)
_UUID = Text(
    ru="ожидался UUID вида 8-4-4-4-12 шестнадцатеричных цифр",
    en="a UUID written as 8-4-4-4-12 hexadecimal digits was expected",
)
_THREAD = Text(ru="это не идентификатор нити", en="not a thread id")
_PLACE = Text(
    ru="'place' — ключ: буквы, цифры, '-', '_' или ':', без пробелов внутри",
    en="'place' is a key: letters, digits, '-', '_' or ':', no spaces",
)
_OBJECT = Text(ru="ожидался объект, пришло: {type}", en="an object was expected, got: {type}")
_UNKNOWN_KEY = Text(
    ru="неизвестный ключ; допустимы: {allowed}", en="unknown key; allowed: {allowed}"
)
_GEO_PLACE = Text(ru="записи места нужен 'place'", en="a geo record needs 'place'")
_GEO_DATES = Text(ru="у записи места нет дат: {dates}", en="a geo record carries no dates: {dates}")
_CALENDAR_PLACE = Text(
    ru="у записи календаря нет 'place'", en="a calendar record carries no 'place'"
)
_CALENDAR_FORM = Text(
    ru="запись календаря — ровно одно из: 'date'; 'start' и 'end'; 'deadline'",
    en="a calendar record is exactly one of: 'date'; 'start' and 'end'; 'deadline'",
)
_START_AFTER_END = Text(ru="'start' позже 'end'", en="'start' is after 'end'")

# DRF's keys, our words (DRF fills its own placeholders: {max_length}, {input}).
_BASE = {"required": say(_REQUIRED), "null": say(_NULL)}
_CHAR = {
    **_BASE,
    "invalid": say(_NOT_STRING),
    "blank": say(_BLANK),
    "max_length": say(_TOO_LONG),
    "min_length": say(_TOO_SHORT),
}
_CHOICE_MESSAGES = {**_BASE, "invalid_choice": say(_CHOICE)}
_LIST = {
    **_BASE,
    "not_a_list": say(_NOT_LIST),
    "empty": say(_LIST_EMPTY),
    "max_length": say(_LIST_TOO_LONG),
    "min_length": say(_LIST_TOO_SHORT),
}


class StrictCharField(serializers.CharField):
    """A JSON string, kept exactly as sent. DRF's CharField takes numbers for strings and trims
    whitespace before counting; the schema does neither, so neither does this field."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("trim_whitespace", False)
        kwargs["error_messages"] = {**_CHAR, **kwargs.get("error_messages", {})}
        allow_blank = kwargs.get("allow_blank", False)
        super().__init__(**kwargs)
        if not allow_blank:
            # Published as the schema's `pattern`; the same expression refuses a string of spaces.
            self.validators.append(RegexValidator(NOT_BLANK, message=say(_BLANK)))

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return data


class StrictChoiceField(serializers.ChoiceField):
    def __init__(self, **kwargs: Any) -> None:
        kwargs["error_messages"] = {**_CHOICE_MESSAGES, **kwargs.get("error_messages", {})}
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> Any:
        # DRF looks the choice up by str(data); only the string itself names a choice.
        if not isinstance(data, str):
            self.fail("invalid_choice", input=data)
        return super().to_internal_value(data)


class StrictListField(serializers.ListField):
    def __init__(self, **kwargs: Any) -> None:
        kwargs["error_messages"] = {**_LIST, **kwargs.get("error_messages", {})}
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> list[Any]:
        if not isinstance(data, list):
            self.fail("not_a_list", input_type=json_type(data))
        return super().to_internal_value(data)


class IsoDateField(serializers.DateField):
    """Exactly ``YYYY-MM-DD`` and a day that exists: the schema's ``format: date``."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs["error_messages"] = {**_BASE, "invalid": say(_DATE), "datetime": say(_DATE)}
        super().__init__(**kwargs)

    def to_internal_value(self, value: Any) -> date:
        if isinstance(value, str) and DATE_PATTERN.fullmatch(value):
            try:
                return date.fromisoformat(value)
            except ValueError:
                pass
        self.fail("invalid", format="YYYY-MM-DD")
        raise AssertionError  # pragma: no cover - fail() raises


@extend_schema_field({"type": "string", "format": "date-time", "pattern": MOMENT_YEARS})
class Rfc3339Field(serializers.DateTimeField):
    """A moment as RFC 3339 writes it (the schema's ``format: date-time``): a date, a time and an
    offset, in the years ``MOMENT_YEARS`` (the schema's ``pattern``: what people said, not year
    37 with an offset no database holds). A leap second is read as the second before it; the
    moment is kept in UTC."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs["error_messages"] = {**_BASE, "invalid": say(_DATETIME), "date": say(_DATETIME)}
        super().__init__(**kwargs)

    def to_internal_value(self, value: Any) -> datetime:
        text = value.upper() if isinstance(value, str) else ""
        # case-blind, as the schema's format checker; the years as its pattern
        if text and validate_rfc3339(text) and re.search(MOMENT_YEARS, value):
            if text[17:19] == "60":
                text = f"{text[:17]}59{text[19:]}"
            try:
                return datetime.fromisoformat(text).astimezone(UTC)
            except ValueError:
                pass
        self.fail("invalid", format="RFC 3339")
        raise AssertionError  # pragma: no cover - fail() raises


class CanonicalUUIDField(serializers.UUIDField):
    """A UUID written 8-4-4-4-12 (DRF would also take braces, ``urn:uuid:`` or bare hex)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs["error_messages"] = {**_BASE, "invalid": say(_UUID)}
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> uuid.UUID:
        if not isinstance(data, str) or not UUID_PATTERN.fullmatch(data):
            self.fail("invalid")
        return uuid.UUID(data)


class StrictBooleanField(serializers.BooleanField):
    """JSON has real booleans; "yes" or 1 is not one."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs["error_messages"] = {**_BASE, "invalid": say(_BOOLEAN)}
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> bool:
        if isinstance(data, bool):
            return data
        self.fail("invalid", input=data)
        raise AssertionError  # pragma: no cover - fail() raises


class StrictSerializer(serializers.Serializer):
    """A record: a JSON object whose unknown keys are an error, not silently dropped."""

    default_error_messages = _BASE

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, Mapping):
            raise serializers.ValidationError(refusal(_OBJECT, type=json_type(data)))
        unknown = sorted(set(data) - set(self.fields), key=str)
        if unknown:
            allowed = ", ".join(self.fields)
            raise serializers.ValidationError(
                {str(key): [refusal(_UNKNOWN_KEY, allowed=allowed)] for key in unknown}
            )
        return super().to_internal_value(data)


class ScopeRecord(StrictSerializer):
    """Calendar (a date, a period, or a deadline) or geo (a place key). No inheritance ladders:
    a place key matches itself only."""

    kind = StrictChoiceField(choices=SCOPE_KINDS)
    date = IsoDateField(required=False, help_text="calendar: one day")
    start = IsoDateField(required=False, help_text="calendar: first day of a period")
    end = IsoDateField(required=False, help_text="calendar: last day of a period")
    deadline = IsoDateField(required=False, help_text="calendar: a deadline")
    place = StrictCharField(
        required=False,
        max_length=PLACE_MAX_CHARS,
        validators=[RegexValidator(PLACE_PATTERN, message=say(_PLACE))],
        help_text="geo: a place key, e.g. 'madrid'",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        kind = attrs["kind"]
        dates = [key for key in ("date", "start", "end", "deadline") if key in attrs]
        if kind == "geo":
            if "place" not in attrs:
                raise serializers.ValidationError(refusal(_GEO_PLACE))
            if dates:
                raise serializers.ValidationError(refusal(_GEO_DATES, dates=", ".join(dates)))
            return {"kind": "geo", "place": attrs["place"].strip(SPACES).lower()}
        if "place" in attrs:
            raise serializers.ValidationError(refusal(_CALENDAR_PLACE))
        forms = [
            ["date"] == dates,
            ["deadline"] == dates,
            sorted(dates) == ["end", "start"],
        ]
        if not any(forms):
            raise serializers.ValidationError(refusal(_CALENDAR_FORM))
        if "start" in attrs and attrs["start"] > attrs["end"]:
            # The one rule of a scope record the schema cannot state.
            raise serializers.ValidationError(refusal(_START_AFTER_END))
        return {"kind": "calendar", **{key: attrs[key].isoformat() for key in dates}}


class Upload(StrictSerializer):
    """A file sent with remember."""

    kind = StrictChoiceField(choices=UPLOAD_KINDS)
    name = StrictCharField(max_length=255)
    media_type = StrictCharField(max_length=127, required=False)
    description = StrictCharField(max_length=2000, required=False, allow_blank=True)
    content_base64 = StrictCharField(required=False, help_text="the file, base64-encoded")


class Verdict(StrictSerializer):
    """The verdict on an earlier run, given from outside (PASSPORT.md §8)."""

    run = CanonicalUUIDField()
    value = StrictChoiceField(choices=("confirm", "reject"))
    note = StrictCharField(max_length=2000, required=False, allow_blank=True)


@dataclass(frozen=True)
class Shape:
    """A parameter's form: how to build its field, and which widget shows it."""

    widget: str
    build: Callable[..., serializers.Field]
    choices: tuple[str, ...] = ()

    def field(self, **kwargs: Any) -> serializers.Field:
        return self.build(**kwargs)


def _text(max_length: int) -> Callable[..., serializers.Field]:
    def build(**kwargs: Any) -> serializers.Field:
        return StrictCharField(max_length=max_length, **kwargs)

    return build


def _choice(choices: tuple[str, ...]) -> Callable[..., serializers.Field]:
    def build(**kwargs: Any) -> serializers.Field:
        return StrictChoiceField(choices=choices, **kwargs)

    return build


def _list(
    child: Callable[[], serializers.Field], max_length: int
) -> Callable[..., serializers.Field]:
    def build(**kwargs: Any) -> serializers.Field:
        return StrictListField(child=child(), max_length=max_length, **kwargs)

    return build


def _thread(**kwargs: Any) -> serializers.Field:
    return StrictCharField(
        max_length=THREAD_MAX_CHARS,
        validators=[RegexValidator(THREAD_PATTERN, message=say(_THREAD))],
        **kwargs,
    )


TEXT = Shape("textarea", _text(TEXT_MAX_CHARS))
SHORT_TEXT = Shape("text", _text(200))
FLAG = Shape("flag", StrictBooleanField)
THREAD = Shape("thread", _thread)
SCOPE_LIST = Shape("scope_list", _list(ScopeRecord, 50))
UPLOAD_LIST = Shape("upload_list", _list(Upload, 20), choices=UPLOAD_KINDS)
VERDICT = Shape("verdict", lambda **kw: Verdict(**kw))
MOMENT = Shape("moment", lambda **kw: Rfc3339Field(**kw))
TEXT_LIST = Shape("text_list", _list(lambda: StrictCharField(max_length=TEXT_MAX_CHARS), 20))


def choice(choices: tuple[str, ...]) -> Shape:
    return Shape("choice", _choice(choices), choices=choices)
