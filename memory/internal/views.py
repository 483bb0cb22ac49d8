"""Internal endpoints: the stores one by one, for processes that do not own the embedded stores
and for the playground's probes. Not part of the contract; absent from the public schema."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memory.internal.auth import IsMachine, MachineSecretAuthentication
from memory.knowledge.objects import object_read
from memory.models import MemoryObject
from memory.stores import outbox
from memory.stores.door import DoorUnavailable
from memory.stores.graph import DoorGraph, graph
from memory.stores.vectors import KINDS, DoorVectors, vectors


class _Internal(APIView):
    authentication_classes = [MachineSecretAuthentication]
    permission_classes = [IsMachine]


def _owned(engine: Any) -> Any:
    """The door is served by the owner of the stores; a process that itself reaches them through
    the door would only ask itself again."""
    if isinstance(engine, DoorGraph | DoorVectors):
        raise DoorUnavailable(
            "this process reaches the stores through the internal door itself and cannot serve it",
            retryable=False,
        )
    return engine


class GraphQueryIn(serializers.Serializer):
    architect = serializers.IntegerField()
    question = serializers.CharField()
    hl_keywords = serializers.ListField(child=serializers.CharField(), min_length=1)
    ll_keywords = serializers.ListField(child=serializers.CharField(), min_length=1)


class VectorSearchIn(serializers.Serializer):
    architect = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=KINDS)
    query = serializers.CharField()
    limit = serializers.IntegerField(min_value=1, max_value=100, default=10)
    scope = serializers.ListField(child=serializers.DictField(), required=False, default=list)
    with_vectors = serializers.BooleanField(default=False)


class DrainIn(serializers.Serializer):
    ids = serializers.ListField(child=serializers.IntegerField(), allow_null=True, required=False)
    force = serializers.BooleanField(default=False)


@extend_schema(exclude=True)
class GraphQueryView(_Internal):
    def post(self, request: Request) -> Response:
        data = GraphQueryIn(data=request.data)
        data.is_valid(raise_exception=True)
        found = _owned(graph()).query(
            architect_id=data.validated_data["architect"],
            question=data.validated_data["question"],
            hl_keywords=data.validated_data["hl_keywords"],
            ll_keywords=data.validated_data["ll_keywords"],
        )
        return Response(found.as_dict())


@extend_schema(exclude=True)
class VectorSearchView(_Internal):
    def post(self, request: Request) -> Response:
        data = VectorSearchIn(data=request.data)
        data.is_valid(raise_exception=True)
        hits = _owned(vectors()).search(
            kind=data.validated_data["kind"],
            architect_id=data.validated_data["architect"],
            query=data.validated_data["query"],
            limit=data.validated_data["limit"],
            scope=data.validated_data["scope"],
            with_vectors=data.validated_data["with_vectors"],
        )
        return Response({"hits": [asdict(h) for h in hits]})


@extend_schema(exclude=True)
class DrainView(_Internal):
    def post(self, request: Request) -> Response:
        data = DrainIn(data=request.data)
        data.is_valid(raise_exception=True)
        result = outbox.drain(
            ids=data.validated_data.get("ids"), force=data.validated_data["force"]
        )
        return Response(result.as_dict())


@extend_schema(exclude=True)
class ObjectReadView(_Internal):
    """An object's bytes, for services that were given its path in a recall answer."""

    def get(self, request: Request, object_id: str) -> HttpResponse:
        obj = MemoryObject.objects.filter(pk=object_id).first()
        if obj is None:
            raise NotFound(f"no object {object_id}")
        _, content = object_read(architect=obj.architect, object_id=str(obj.pk))
        response = HttpResponse(content, content_type=obj.media_type)
        response["Content-Length"] = str(len(content))
        return response
