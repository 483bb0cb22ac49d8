"""The contract's HTTP door: one APIView per verb, and the read of an object an answer linked."""

from __future__ import annotations

from urllib.parse import quote

from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memory.api import serializers as s
from memory.knowledge.objects import object_by_link
from memory.services import idempotency
from memory.services.recall import recall
from memory.services.remember import AlreadyAnswered, remember

_ERRORS = {
    400: OpenApiResponse(s.ErrorBody, description="no phrase, or a body that is not an object"),
    401: OpenApiResponse(s.ErrorBody, description="no memory key, or a wrong one"),
    503: OpenApiResponse(
        s.ErrorBody,
        description="database_busy: a deadlock or lost connection rolled the request back; "
        "nothing was written, retryable",
    ),
}
_MODEL_ERRORS = {
    404: OpenApiResponse(
        s.ErrorBody, description="thread_not_found: the thread is not this architect's, or lost"
    ),
}


_IDEMPOTENCY = OpenApiParameter(
    idempotency.HEADER,
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    required=False,
    pattern=idempotency.KEY_PATTERN,
    description="Makes a retry safe: the same key with the same body returns the first answer "
    "(header Idempotent-Replayed: true); with another body the request is refused (422); while "
    "the first is still served, 409. Keys live IDEMPOTENCY_TTL_HOURS (24 h by default).",
)
_IDEMPOTENCY_ERRORS = {
    409: OpenApiResponse(
        s.ErrorBody,
        description="idempotency_in_progress: the first request with this key is still served",
    ),
    422: OpenApiResponse(
        s.ErrorBody, description="idempotency_key_reused: this key came with another body"
    ),
}


class RememberView(APIView):
    @extend_schema(
        operation_id="remember",
        summary="Remember: add to memory",
        request=s.Remember,
        parameters=[_IDEMPOTENCY],
        responses={200: s.RememberAnswer, **_ERRORS, **_MODEL_ERRORS, **_IDEMPOTENCY_ERRORS},
    )
    def post(self, request: Request) -> Response:
        key = request.headers.get(idempotency.HEADER)
        try:
            answer = remember(caller=request.user, data=request.data, idempotency_key=key)
        except AlreadyAnswered as first:
            return Response(
                first.answer, status=first.status, headers={"Idempotent-Replayed": "true"}
            )
        return Response(answer)


class RecallView(APIView):
    @extend_schema(
        operation_id="recall",
        summary="Recall: retrieve from memory",
        request=s.Recall,
        responses={200: s.RecallAnswer, **_ERRORS},
    )
    def post(self, request: Request) -> Response:
        return Response(recall(caller=request.user, data=request.data))


class ObjectView(APIView):
    @extend_schema(
        operation_id="object",
        summary="Read an object an answer linked (its `url`)",
        parameters=[
            OpenApiParameter(
                "token",
                OpenApiTypes.STR,
                OpenApiParameter.QUERY,
                required=True,
                description="the signed token of the answer's link (expires after "
                "OBJECT_LINK_SECONDS)",
            )
        ],
        responses={
            (200, "*/*"): OpenApiResponse(OpenApiTypes.BINARY, description="the object whole"),
            401: _ERRORS[401],
            404: OpenApiResponse(
                s.ErrorBody,
                description="object_not_found: not this architect's object, or a wrong link",
            ),
            410: OpenApiResponse(
                s.ErrorBody, description="link_expired: ask again for a fresh one"
            ),
        },
    )
    def get(self, request: Request, object_id: str) -> HttpResponse:
        obj, content = object_by_link(
            architect=request.user.architect,
            object_id=str(object_id),
            token=request.query_params.get("token", ""),
            lang=getattr(request, "memory_lang", None) or settings.MEMORY_LANG,
        )
        response = HttpResponse(content, content_type=obj.media_type)
        response["Content-Disposition"] = f"inline; filename*=UTF-8''{quote(obj.name)}"
        return response
