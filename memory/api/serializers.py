"""The contract's shapes for OpenAPI. Request serializers are generated from the registry;
answer serializers describe exactly what the services return (tests validate real answers
against the published schema)."""

from __future__ import annotations

from rest_framework import serializers

from memory import ladder
from memory.contract.registry import Verb, params_for


def _description(verb: Verb, name: str) -> str:
    for p in params_for(verb):
        if p.name == name:
            capability = p.status(verb)
            status = capability.status
            if capability.reason is not None:
                status += f" — {capability.reason.en}"
            return f"{p.help.en} / {p.help.ru} [{status}]"
    raise KeyError(name)


def request_serializer(verb: Verb) -> type[serializers.Serializer]:
    """One field per registered parameter of ``verb``, built by the parameter's own shape."""
    fields = {
        p.name: p.shape.field(required=p.required, help_text=_description(verb, p.name))
        for p in params_for(verb)
    }
    name = verb.capitalize()  # drf-spectacular adds "Request": components Remember/RecallRequest
    return type(name, (serializers.Serializer,), {**fields, "__module__": __name__})


Remember = request_serializer("remember")
Recall = request_serializer("recall")


class ParamFate(serializers.Serializer):
    fate = serializers.ChoiceField(choices=("accepted", "not_supported", "bad_form"))
    note = serializers.CharField(required=False)
    index = serializers.IntegerField(required=False, help_text="first failing list item")
    indexes = serializers.ListField(
        child=serializers.IntegerField(), required=False, help_text="every failing list item"
    )


class ParamFates(serializers.DictField):
    child = ParamFate()


class ReportEntry(serializers.Serializer):
    level = serializers.IntegerField(min_value=1, max_value=5)
    store = serializers.CharField()
    source = serializers.CharField(help_text="the table, collection or service consulted")
    status = serializers.ChoiceField(
        choices=("answered", "empty", "skipped", "failed", "running"),
        help_text="running: level 5's research goes on after the answer (see `research`)",
    )
    returned = serializers.IntegerField(min_value=0)
    kind = serializers.ChoiceField(choices=ladder.KINDS, allow_null=True)
    note = serializers.CharField(allow_blank=True)


class AnswerObject(serializers.Serializer):
    id = serializers.CharField()
    media_type = serializers.CharField()
    summary = serializers.CharField()
    name = serializers.CharField(required=False)
    size = serializers.IntegerField(required=False, min_value=0)
    # Always a signed link that expires, for a memory key of the same architect (fork 3).
    url = serializers.CharField()
    # By occasion: a text object up to memory.knowledge.objects.INLINE_BYTES comes inline; any
    # other is also readable through the internal door at ``path`` (the machine secret).
    content = serializers.CharField(required=False, allow_blank=True)
    path = serializers.CharField(required=False)


class AnswerBody(serializers.Serializer):
    form = serializers.ChoiceField(choices=("text", "data", "object"))
    found = serializers.BooleanField()
    text = serializers.CharField(allow_blank=True)
    data = serializers.JSONField(required=False)
    object = AnswerObject(required=False)


class Missing(serializers.Serializer):
    parameter = serializers.CharField()
    dimension = serializers.CharField()
    why = serializers.CharField()


class _Frame(serializers.Serializer):
    contract = serializers.CharField(help_text="semver of the contract")
    verb = serializers.ChoiceField(choices=("remember", "recall"))
    run = serializers.UUIDField(help_text="this request cycle; give it back in `verdict`")
    params = ParamFates(help_text="the fate of every parameter sent")
    seconds = serializers.FloatField()
    trace = serializers.ListField(child=serializers.JSONField(), required=False)
    thread = serializers.CharField(required=False, help_text="present when a model was called")


class RelearnedStore(serializers.Serializer):
    id = serializers.CharField(allow_null=True, required=False)
    status = serializers.ChoiceField(choices=("written", "queued", "failed", "skipped"))
    items = serializers.IntegerField(min_value=0, required=False)
    note = serializers.CharField(required=False, allow_blank=True)


class Relearned(serializers.Serializer):
    """What the relearning cycle kept from this answer (PASSPORT.md «Цикл дообучения»)."""

    skill = serializers.CharField()
    mode = serializers.ChoiceField(choices=("sync", "async"))
    status = serializers.ChoiceField(
        choices=("failed",), required=False, help_text="present only when the cycle broke"
    )
    note = serializers.CharField(required=False, help_text="why the cycle broke")
    summary = serializers.UUIDField(required=False, help_text="the summary's id (tables)")
    text = serializers.CharField(required=False, help_text="the summary")
    written_by = serializers.ChoiceField(choices=("code", "model"), required=False)
    object = serializers.UUIDField(required=False, help_text="the artifact in the object store")
    vectors = RelearnedStore(required=False)
    graph = RelearnedStore(required=False)
    link = RelearnedStore(required=False)


class ResearchState(serializers.Serializer):
    """Level 5's job: named by the run of the recall that started it."""

    run = serializers.UUIDField(help_text="name it in previous_results to fetch the result")
    status = serializers.ChoiceField(choices=("queued", "running", "done", "failed"))
    progress = serializers.JSONField(
        help_text="levels reached, steps, entities and terms tried, model turns, seconds"
    )
    error = serializers.CharField(required=False)


class RecallAnswer(_Frame):
    kind = serializers.ChoiceField(choices=ladder.KINDS)
    answer = AnswerBody()
    depth_used = serializers.IntegerField(
        min_value=0, max_value=5, help_text="the level actually reached"
    )
    report = serializers.ListField(child=ReportEntry())
    missing = serializers.ListField(child=Missing(), help_text="what the answer depends on")
    research = ResearchState(required=False, help_text="present when level 5 was started or named")
    relearned = Relearned(
        required=False,
        help_text="present when the answer was found at level 4 or deeper: what was kept so the "
        "same question is answered at level 1 next time",
    )


class TableWrite(serializers.Serializer):
    table = serializers.CharField(help_text="the physical table")
    label = serializers.CharField(help_text="the table as it was named")
    action = serializers.CharField()
    rows = serializers.IntegerField(min_value=0)
    note = serializers.CharField(required=False, allow_blank=True)


class Stored(serializers.Serializer):
    note = serializers.UUIDField()
    # Earlier notes this one replaced as the current value (they stay, as history).
    supersedes = serializers.ListField(child=serializers.UUIDField(), required=False)


class ModelError(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()
    retryable = serializers.BooleanField()


class ModelBlock(serializers.Serializer):
    """What the model did for this remember (facts from the run, not the model's account)."""

    called = serializers.BooleanField()
    status = serializers.ChoiceField(choices=("done", "failed", "skipped"))
    backend = serializers.CharField(required=False)
    turns = serializers.IntegerField(required=False, min_value=0)
    tools = serializers.ListField(child=serializers.CharField(), required=False)
    note = serializers.CharField(required=False)
    error = ModelError(required=False)


class StoreWrite(serializers.Serializer):
    status = serializers.ChoiceField(
        choices=("written", "queued", "failed"),
        help_text="written now; queued in the outbox (retried until the store answers); failed "
        "(this write can never be delivered: set aside with the reason, the note stays kept)",
    )
    items = serializers.IntegerField(min_value=0)
    note = serializers.CharField(required=False, help_text="why it is queued or failed")


class StoreWrites(serializers.DictField):
    child = StoreWrite()


class RememberAnswer(_Frame):
    stored = Stored()
    tables = serializers.ListField(child=TableWrite(), help_text="which tables got what")
    tables_created = serializers.ListField(child=serializers.CharField())
    new_tables_filled = serializers.ListField(
        child=serializers.CharField(), help_text="tables created by this run that received rows"
    )
    model = ModelBlock()
    stores = StoreWrites(help_text="vectors and graph: written now, or queued in the outbox")
    relearned = Relearned(
        required=False,
        help_text="present with an accepted deny: the denial summary the relearning cycle kept",
    )


class ErrorDetail(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()
    retryable = serializers.BooleanField()
    params = ParamFates(required=False)
    thread = serializers.CharField(required=False, allow_null=True)
    run = serializers.UUIDField(required=False)
    stored = Stored(required=False)
    label = serializers.CharField(required=False)
    reason = serializers.CharField(required=False)
    where = serializers.CharField(
        required=False, help_text="bad_character, too_deep: where in the body the fault is"
    )
    limit = serializers.IntegerField(
        required=False,
        min_value=0,
        help_text="too_large, headers_too_large: bytes; too_deep: levels",
    )


class ErrorBody(serializers.Serializer):
    contract = serializers.CharField()
    error = ErrorDetail()
