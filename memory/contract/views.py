"""The contract's HTTP door: one APIView per verb, nothing else public."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memory.contract import serializers as s
from memory.services.recall import recall
from memory.services.remember import remember

_ERRORS = {
    400: OpenApiResponse(s.ErrorBody, description="no phrase, or a body that is not an object"),
    401: OpenApiResponse(s.ErrorBody, description="no memory key, or a wrong one"),
}
_MODEL_ERRORS = {
    404: OpenApiResponse(
        s.ErrorBody, description="thread_not_found: the thread is not this architect's, or lost"
    ),
}


class RememberView(APIView):
    @extend_schema(
        operation_id="remember",
        summary="Remember: add to memory",
        request=s.Remember,
        responses={200: s.RememberAnswer, **_ERRORS, **_MODEL_ERRORS},
    )
    def post(self, request: Request) -> Response:
        return Response(remember(caller=request.user, data=request.data))


class RecallView(APIView):
    @extend_schema(
        operation_id="recall",
        summary="Recall: retrieve from memory",
        request=s.Recall,
        responses={200: s.RecallAnswer, **_ERRORS},
    )
    def post(self, request: Request) -> Response:
        return Response(recall(caller=request.user, data=request.data))
