"""The forms a parameter can take. Each shape yields a fresh DRF field: the same field validates
a request, describes the parameter in the OpenAPI schema, and picks the playground's widget."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rest_framework import serializers

UPLOAD_KINDS = ("text", "image", "video", "audio", "document")
SCOPE_KINDS = ("calendar", "geo")
PLACE_KEY = re.compile(r"^[0-9a-zа-яё][0-9a-zа-яё:_-]{0,99}$")
THREAD_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$")


class StrictSerializer(serializers.Serializer):
    """A record whose unknown keys are an error, not silently dropped."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, Mapping):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(
                    {key: ["unknown key; allowed: " + ", ".join(self.fields)] for key in unknown}
                )
        return super().to_internal_value(data)


class ScopeRecord(StrictSerializer):
    """Calendar (a date, a period, or a deadline) or geo (a place key). No inheritance ladders:
    a place key matches itself only."""

    kind = serializers.ChoiceField(choices=SCOPE_KINDS)
    date = serializers.DateField(required=False, help_text="calendar: one day")
    start = serializers.DateField(required=False, help_text="calendar: first day of a period")
    end = serializers.DateField(required=False, help_text="calendar: last day of a period")
    deadline = serializers.DateField(required=False, help_text="calendar: a deadline")
    place = serializers.CharField(
        required=False, max_length=100, help_text="geo: a place key, e.g. 'madrid'"
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        kind = attrs["kind"]
        dates = [key for key in ("date", "start", "end", "deadline") if key in attrs]
        if kind == "geo":
            if "place" not in attrs:
                raise serializers.ValidationError("a geo record needs 'place'")
            if dates:
                raise serializers.ValidationError(
                    "a geo record carries no dates: " + ", ".join(dates)
                )
            place = attrs["place"].strip().lower()
            if not PLACE_KEY.match(place):
                raise serializers.ValidationError(
                    "'place' is a key: letters, digits, '-', '_' or ':', no spaces"
                )
            return {"kind": "geo", "place": place}
        if "place" in attrs:
            raise serializers.ValidationError("a calendar record carries no 'place'")
        forms = [
            ["date"] == dates,
            ["deadline"] == dates,
            sorted(dates) == ["end", "start"],
        ]
        if not any(forms):
            raise serializers.ValidationError(
                "a calendar record is exactly one of: 'date'; 'start' and 'end'; 'deadline'"
            )
        if "start" in attrs and attrs["start"] > attrs["end"]:
            raise serializers.ValidationError("'start' is after 'end'")
        return {"kind": "calendar", **{key: attrs[key].isoformat() for key in dates}}


class Upload(StrictSerializer):
    kind = serializers.ChoiceField(choices=UPLOAD_KINDS)
    name = serializers.CharField(max_length=255)
    media_type = serializers.CharField(max_length=127, required=False)
    description = serializers.CharField(max_length=2000, required=False, allow_blank=True)
    content_base64 = serializers.CharField(required=False, help_text="the file, base64-encoded")


class Verdict(StrictSerializer):
    """The verdict on an earlier run, given from outside (passport §11 step 2)."""

    run = serializers.UUIDField()
    value = serializers.ChoiceField(choices=("confirm", "reject"))
    note = serializers.CharField(max_length=2000, required=False, allow_blank=True)


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
        return serializers.CharField(max_length=max_length, allow_blank=False, **kwargs)

    return build


def _choice(choices: tuple[str, ...]) -> Callable[..., serializers.Field]:
    def build(**kwargs: Any) -> serializers.Field:
        return serializers.ChoiceField(choices=choices, **kwargs)

    return build


def _list(
    child: Callable[[], serializers.Field], max_length: int
) -> Callable[..., serializers.Field]:
    def build(**kwargs: Any) -> serializers.Field:
        return serializers.ListField(child=child(), max_length=max_length, **kwargs)

    return build


class StrictBooleanField(serializers.BooleanField):
    """JSON has real booleans; "yes" or 1 is not one."""

    def to_internal_value(self, data: Any) -> bool:
        if isinstance(data, bool):
            return data
        self.fail("invalid", input=data)
        raise AssertionError  # pragma: no cover - fail() raises


TEXT = Shape("textarea", _text(20_000))
SHORT_TEXT = Shape("text", _text(200))
FLAG = Shape("flag", StrictBooleanField)
THREAD = Shape(
    "thread",
    lambda **kw: serializers.RegexField(
        THREAD_ID, max_length=200, error_messages={"invalid": "not a thread id"}, **kw
    ),
)
SCOPE_LIST = Shape("scope_list", _list(ScopeRecord, 50))
UPLOAD_LIST = Shape("upload_list", _list(Upload, 20), choices=UPLOAD_KINDS)
VERDICT = Shape("verdict", lambda **kw: Verdict(**kw))
TEXT_LIST = Shape("text_list", _list(lambda: serializers.CharField(max_length=20_000), 20))


def choice(choices: tuple[str, ...]) -> Shape:
    return Shape("choice", _choice(choices), choices=choices)
