"""OpenAPI touches drf-spectacular cannot infer from the serializers alone."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension

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


def close_answer_components(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    schemas = result.get("components", {}).get("schemas", {})
    for name in CLOSED_COMPONENTS:
        if name in schemas:
            schemas[name]["additionalProperties"] = False
    return result


class MemoryKeyScheme(OpenApiAuthenticationExtension):
    target_class = "memory.auth.MemoryKeyAuthentication"
    name = "memoryKey"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A memory key: `python manage.py memory_key --architect NAME`.",
        }
