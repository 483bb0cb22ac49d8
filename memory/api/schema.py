"""OpenAPI touches drf-spectacular cannot infer from the serializers alone."""

from __future__ import annotations

import threading
from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SCHEMA_KWARGS, SpectacularAPIView

from memory.contract import shapes
from memory.contract.version import CONTRACT_VERSION

# Answer components are closed: a field the schema does not name is a contract change, and the
# tests that validate real answers against the schema must notice it.
CLOSED_COMPONENTS = (
    "RecallAnswer",
    "RememberAnswer",
    "AnswerBody",
    "AnswerObject",
    "ReportEntry",
    "ParamFate",
    "Missing",
    "TableWrite",
    "Stored",
    "ModelBlock",
    "StoreWrite",
    "ModelError",
    "ErrorBody",
    "ErrorDetail",
)


# Request components are closed too: the validator refuses a key it does not know (an unknown
# parameter is bad_form, an unknown key in a record fails the record), so the schema says so.
CLOSED_REQUESTS = ("RememberRequest", "RecallRequest", "UploadRequest", "VerdictRequest")

# Refusals every operation under /api/ can give besides its own (memory.contract.limits, DRF).
GATE_RESPONSES = {
    "413": "too_large: the body is over MEMORY_MAX_BODY_BYTES; nothing is written",
    "415": "unsupported_media_type: the body is JSON (Content-Type: application/json)",
    "431": "headers_too_large: the request headers are over MEMORY_MAX_HEADER_BYTES",
}
GATE_400 = (
    "; or refused by the gate before anything is written: bad_json (not JSON), too_deep (nested "
    "deeper than MEMORY_MAX_JSON_DEPTH), bad_character (NUL, a control character other than tab "
    "and line breaks, DEL or a lone surrogate anywhere in the body, `where` names it); or "
    "bad_scope (a scope record is malformed: the whole request is refused, nothing is written, "
    "`params.scope.index` names the record)"
)


def _scope_record(description: str) -> dict[str, Any]:
    """A scope record, one variant per form, so the schema states what the validator checks:
    a place, or exactly one of a date, a period (start and end) or a deadline. The validator's
    one further rule — a period's start is not after its end — is stated in words."""
    date = {"type": "string", "format": "date"}

    def variant(name: str, kind_value: str, properties: dict[str, Any]) -> dict[str, Any]:
        return {
            "title": name,
            "type": "object",
            "properties": {"kind": {"type": "string", "enum": [kind_value]}, **properties},
            "required": ["kind", *properties],
            "additionalProperties": False,
        }

    place = {
        "type": "string",
        "minLength": 1,
        "maxLength": shapes.PLACE_MAX_CHARS,
        "pattern": shapes.PLACE_PATTERN,
        "description": "a place key, e.g. 'madrid' (kept lower-cased)",
    }
    return {
        "description": description + " A period's start is not after its end.",
        "oneOf": [
            variant("geo", "geo", {"place": place}),
            variant("day", "calendar", {"date": date}),
            variant("period", "calendar", {"start": date, "end": date}),
            variant("deadline", "calendar", {"deadline": date}),
        ],
    }


def close_answer_components(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    result.setdefault("info", {})["version"] = CONTRACT_VERSION
    schemas = result.get("components", {}).get("schemas", {})
    for name in (*CLOSED_COMPONENTS, *CLOSED_REQUESTS):
        if name in schemas:
            schemas[name]["additionalProperties"] = False
    if "ScopeRecordRequest" in schemas:
        described = schemas["ScopeRecordRequest"].get("description", "")
        schemas["ScopeRecordRequest"] = _scope_record(described)
    verdict = schemas.get("VerdictRequest", {}).get("properties", {})
    if "run" in verdict:
        verdict["run"]["pattern"] = f"^{shapes.UUID_PATTERN.pattern}$"
    for path, operations in result.get("paths", {}).items():
        if not path.startswith("/api/"):
            continue
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            if "400" in responses and GATE_400 not in responses["400"].get("description", ""):
                responses["400"]["description"] += GATE_400
            for code, description in GATE_RESPONSES.items():
                responses.setdefault(code, _error_response(description))
    return result


def _error_response(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
    }


class MemoryKeyScheme(OpenApiAuthenticationExtension):
    target_class = "memory.auth.MemoryKeyAuthentication"
    name = "memoryKey"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A memory key: `python manage.py memory_key --architect NAME`.",
        }


# drf-spectacular's generation is not safe in two threads at once (its extensions resolve their
# target classes on first use and its warning counters are shared: upstream issues #1122, #1123,
# #1368): on a fresh process, 8 concurrent first GETs of /api/schema/ answered one 200 and seven
# 500s. gunicorn's gthread worker serves requests in threads, so every generation in the process
# (the schema view, the MCP door's components) takes this one lock.
GENERATING = threading.Lock()


def components() -> dict[str, Any]:
    """The published OpenAPI components (generated from the registry), under the lock."""
    with GENERATING:
        return SchemaGenerator().get_schema(request=None, public=True)["components"]["schemas"]


class SchemaView(SpectacularAPIView):
    """/api/schema/: drf-spectacular's view, one generation at a time."""

    @extend_schema(**SCHEMA_KWARGS)  # as the parent's: the schema describes its own page
    def get(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        with GENERATING:
            return super().get(request, *args, **kwargs)
