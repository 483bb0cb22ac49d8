"""The gate of /api/: what a request may be before any code reads its parameters.

Checked in this order, each refusal in the one error shape (``memory.contract.errors``) and in
the answer's language, before anything is written:

1. request headers over ``MEMORY_MAX_HEADER_BYTES`` together → 431 ``headers_too_large``;
2. a body over ``MEMORY_MAX_BODY_BYTES`` → 413 ``too_large`` (by Content-Length, before reading);
3. a JSON body that does not parse → 400 ``bad_json`` (the line and column named);
4. JSON nested deeper than ``MEMORY_MAX_JSON_DEPTH`` → 400 ``too_deep``;
5. a character no database stores or no phrase needs, anywhere in the body (a value, a key, a
   list item): NUL (U+0000), the other control characters U+0001–U+001F except tab, line feed
   and carriage return, DEL (U+007F), a lone surrogate → 400 ``bad_character``, naming where.
   One rule on SQLite and PostgreSQL: PostgreSQL cannot store NUL at all, and a phrase that
   carries control characters has been damaged on its way, so it is refused, not kept.

The answer's language is the body's ``lang`` when the body is a JSON object naming ``ru`` or
``en``, otherwise the agreed ``MEMORY_LANG`` — the rule ``memory.contract.params`` uses — and it
is active while the request is served, so DRF's messages and the naming module's follow it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured, RequestDataTooBig
from django.http import HttpRequest, HttpResponse
from django.utils import translation
from rest_framework.parsers import JSONParser
from rest_framework.utils.mediatypes import media_type_matches

from memory.contract.errors import is_api, json_error
from memory.contract.shapes import TEXT_MAX_CHARS
from memory.errors import MemoryServiceError
from memory.i18n import LANGS, Text

# The widest a character gets in JSON: a character outside the BMP written as two \uXXXX escapes.
WIDEST_CHAR_BYTES = 12
# Room for everything else a request carries besides one phrase of the longest length.
OTHER_PARAMS_BYTES = 64 * 1024
BAD_CHARACTERS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_HEADERS = Text(
    ru="заголовки запроса занимают {size} байт, больше предела {limit} (MEMORY_MAX_HEADER_BYTES)",
    en="the request headers take {size} bytes, over the limit of {limit} (MEMORY_MAX_HEADER_BYTES)",
)
_TOO_LARGE = Text(
    ru="тело запроса — {size} байт, больше предела {limit} (MEMORY_MAX_BODY_BYTES); ничего не "
    "записано. Фраза text — до {chars} символов, и такая фраза в предел всегда помещается.",
    en="the request body is {size} bytes, over the limit of {limit} (MEMORY_MAX_BODY_BYTES); "
    "nothing is written. A phrase (text) is up to {chars} characters, and one that long always "
    "fits the limit.",
)
_NOT_JSON = Text(
    ru="тело запроса — не JSON: ошибка в строке {line}, столбце {column}",
    en="the request body is not JSON: an error at line {line}, column {column}",
)
_NOT_UTF8 = Text(
    ru="тело запроса — не текст в кодировке {charset}",
    en="the request body is not text in the {charset} encoding",
)
_NOT_A_NUMBER = Text(
    ru="тело запроса — не JSON: {constant} в JSON не бывает",
    en="the request body is not JSON: JSON has no {constant}",
)
_TOO_DEEP = Text(
    ru="вложенность JSON глубже {limit} уровней (MEMORY_MAX_JSON_DEPTH), у {where}; ничего не "
    "записано",
    en="the JSON is nested deeper than {limit} levels (MEMORY_MAX_JSON_DEPTH), at {where}; "
    "nothing is written",
)
_NUL = Text(
    ru="в {where} символ U+0000 (NUL) на позиции {position}: его не хранит ни одна база; запрос "
    "отклонён целиком, ничего не записано",
    en="{where} holds U+0000 (NUL) at position {position}: no database stores it; the whole "
    "request is refused, nothing is written",
)
_CONTROL = Text(
    ru="в {where} управляющий символ {char} на позиции {position}: из управляющих символов "
    "память принимает только табуляцию и переводы строки (\\t, \\n, \\r); запрос отклонён "
    "целиком, ничего не записано",
    en="{where} holds the control character {char} at position {position}: of the control "
    "characters the memory takes only tab and line breaks (\\t, \\n, \\r); the whole request is "
    "refused, nothing is written",
)
_SURROGATE = Text(
    ru="в {where} одиночный суррогат {char} на позиции {position}: это не символ Юникода; запрос "
    "отклонён целиком, ничего не записано",
    en="{where} holds a lone surrogate {char} at position {position}: it is not a Unicode "
    "character; the whole request is refused, nothing is written",
)
_BODY = Text(ru="тело запроса", en="the request body")
_KEY = Text(ru="ключ {key}", en="the key {key}")


def min_body_bytes() -> int:
    """The smallest body limit that still holds the longest phrase, however it is written."""
    return TEXT_MAX_CHARS * WIDEST_CHAR_BYTES + OTHER_PARAMS_BYTES


class Refusal(Exception):
    def __init__(self, status: int, code: str, text: Text, **extra: Any) -> None:
        super().__init__(code)
        self.status, self.code, self.text, self.extra = status, code, text, extra
        self.lang: str | None = None  # the body's language, when it was read before the fault

    def details(self) -> dict[str, Any]:
        return {k: v for k, v in self.extra.items() if k in ("where", "limit")}

    def as_error(self, lang: str) -> MemoryServiceError:
        """The same refusal for a caller that is not the HTTP door (the playground)."""
        message = self.text(lang, **self.extra)
        return MemoryServiceError(
            message, code=self.code, status=self.status, details=self.details()
        )


def _path(parts: tuple[str | int, ...]) -> str:
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _NAME.fullmatch(part):
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
    return out


def _bad_character(
    lang: str, text: str, parts: tuple[str | int, ...], *, is_key: bool
) -> Refusal | None:
    match = BAD_CHARACTERS.search(text)
    if match is None:
        return None
    char = match.group()
    where = _path(parts) or _BODY(lang)
    if is_key:
        where = _KEY(lang, key=json.dumps(text, ensure_ascii=False)) + (
            f" ({_path(parts[:-1])})" if parts[:-1] else ""
        )
    template = _NUL if char == "\x00" else _SURROGATE if "\ud800" <= char else _CONTROL
    return Refusal(
        400,
        "bad_character",
        template,
        where=where,
        position=match.start(),
        char=f"U+{ord(char):04X}",
    )


def inspect(data: Any, lang: str, max_depth: int) -> Refusal | None:
    """Depth and characters of a parsed body, walked without recursion."""
    stack: list[tuple[Any, tuple[str | int, ...], int]] = [(data, (), 0)]
    while stack:
        node, parts, depth = stack.pop()
        if isinstance(node, (dict, list)):
            if depth + 1 > max_depth:
                return Refusal(
                    400, "too_deep", _TOO_DEEP, where=_path(parts) or _BODY(lang), limit=max_depth
                )
            items = node.items() if isinstance(node, dict) else enumerate(node)
            children = []
            for key, child in items:
                if isinstance(key, str):
                    refusal = _bad_character(lang, key, (*parts, key), is_key=True)
                    if refusal is not None:
                        return refusal
                children.append((child, (*parts, key), depth + 1))
            stack.extend(reversed(children))  # first things first: the first fault is named
        elif isinstance(node, str):
            refusal = _bad_character(lang, node, parts, is_key=False)
            if refusal is not None:
                return refusal
    return None


def _reject_constant(constant: str) -> Any:
    raise _NotJson(constant)


class _NotJson(ValueError):
    pass


def parse_body(body: bytes, charset: str, lang: str, max_depth: int) -> Any:
    """The body as JSON, or a :class:`Refusal` raised with the reason (depth and characters
    are :func:`inspect`'s)."""
    try:
        text = body.decode(charset)
    except (UnicodeDecodeError, LookupError):
        raise Refusal(400, "bad_json", _NOT_UTF8, charset=charset) from None
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except _NotJson as error:
        raise Refusal(400, "bad_json", _NOT_A_NUMBER, constant=str(error)) from None
    except json.JSONDecodeError as error:
        raise Refusal(400, "bad_json", _NOT_JSON, line=error.lineno, column=error.colno) from None
    except RecursionError:
        raise Refusal(400, "too_deep", _TOO_DEEP, where=_BODY(lang), limit=max_depth) from None
    return data


def _headers_size(request: HttpRequest) -> int:
    size = 0
    for name, value in request.META.items():
        if name.startswith("HTTP_") or name in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            size += len(name) + len(str(value)) + 4  # "Name: value\r\n"
    return size


def _content_length(request: HttpRequest) -> int:
    try:
        return max(int(request.META.get("CONTENT_LENGTH") or 0), 0)
    except ValueError:
        return 0


def _is_json(request: HttpRequest) -> bool:
    """Whether DRF will read this body as JSON: its own test, so nothing it parses skips the gate
    (``application/*`` and ``*/*`` choose the JSON parser too)."""
    return media_type_matches(JSONParser.media_type, request.content_type or "")


class InputLimits:
    """Middleware: the gate of /api/ (see the module's doc). Other paths pass untouched."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        if settings.MEMORY_MAX_BODY_BYTES < min_body_bytes():
            raise ImproperlyConfigured(
                f"MEMORY_MAX_BODY_BYTES={settings.MEMORY_MAX_BODY_BYTES} cannot hold the longest "
                f"phrase ({TEXT_MAX_CHARS} characters, up to {WIDEST_CHAR_BYTES} bytes each in "
                f"JSON) with the other parameters: it must be at least {min_body_bytes()}"
            )
        if settings.DATA_UPLOAD_MAX_MEMORY_SIZE != settings.MEMORY_MAX_BODY_BYTES:
            raise ImproperlyConfigured(
                "DATA_UPLOAD_MAX_MEMORY_SIZE must equal MEMORY_MAX_BODY_BYTES: one body limit"
            )

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not is_api(request.path):
            return self.get_response(request)
        lang = settings.MEMORY_LANG
        try:
            lang = self._check(request)
        except Refusal as refusal:
            return self._refuse(refusal, refusal.lang or lang)
        request.memory_lang = lang  # type: ignore[attr-defined]
        with translation.override(lang):
            return self.get_response(request)

    def _check(self, request: HttpRequest) -> str:
        lang = settings.MEMORY_LANG
        size, limit = _headers_size(request), settings.MEMORY_MAX_HEADER_BYTES
        if size > limit:
            raise Refusal(431, "headers_too_large", _HEADERS, size=size, limit=limit)
        length, limit = _content_length(request), settings.MEMORY_MAX_BODY_BYTES
        if length > limit:
            raise Refusal(
                413, "too_large", _TOO_LARGE, size=length, limit=limit, chars=TEXT_MAX_CHARS
            )
        try:
            body = request.body
        except RequestDataTooBig:
            raise Refusal(
                413, "too_large", _TOO_LARGE, size=length, limit=limit, chars=TEXT_MAX_CHARS
            ) from None
        if body and _is_json(request):
            charset = request.encoding or settings.DEFAULT_CHARSET
            depth = settings.MEMORY_MAX_JSON_DEPTH
            data = parse_body(body, charset, lang, depth)
            if isinstance(data, dict) and data.get("lang") in LANGS:
                lang = data["lang"]
            refusal = inspect(data, lang, depth)
            if refusal is not None:
                refusal.lang = lang
                raise refusal
        return lang

    def _refuse(self, refusal: Refusal, lang: str) -> HttpResponse:
        message = refusal.text(lang, **refusal.extra)
        return json_error(refusal.status, refusal.code, message, **refusal.details())
