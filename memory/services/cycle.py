"""What both verbs share: reading the parameters, opening the run, taking a verdict, the answer frame."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from django.conf import settings
from django.db import transaction

from memory.auth import Caller
from memory.contract.params import Parsed, parse
from memory.contract.registry import Verb
from memory.contract.version import CONTRACT_VERSION
from memory.errors import MemoryServiceError
from memory.i18n import Text
from memory.models import Run
from memory.services.evolution import candidates
from memory.services.runs import run_open, run_verdict_apply

_NEED_OBJECT = Text(
    ru='тело запроса — JSON-объект с параметрами, например {{"text": "…"}}',
    en='the request body is a JSON object of parameters, e.g. {{"text": "…"}}',
)
_NEED_TEXT = Text(
    ru="нужен параметр text: непустая фраза",
    en="the parameter text is required: a non-empty phrase",
)
_NO_RUN = Text(
    ru="у этого архитектора нет прогона {run}",
    en="this architect has no run {run}",
)
_VERDICT_TAKEN = Text(
    ru="вердикт {value} записан для прогона {run}",
    en="verdict {value} recorded for run {run}",
)


def read_params(verb: Verb, data: Any) -> Parsed:
    """Parse a request body; refuse the whole request only when there is no phrase to work on."""
    if not isinstance(data, Mapping):
        raise MemoryServiceError(_NEED_OBJECT(settings.MEMORY_LANG), code="bad_request")
    parsed = parse(verb, data, default_lang=settings.MEMORY_LANG)
    if not parsed.has("text"):
        raise MemoryServiceError(
            _NEED_TEXT(parsed.lang),
            code="text_required",
            details={"params": parsed.fates_dict()},
        )
    return parsed


def open_run(verb: Verb, parsed: Parsed, caller: Caller) -> Run:
    return run_open(
        architect=caller.architect,
        verb=verb,
        text=parsed.get("text", ""),
        caller=caller.name,
        channel=caller.channel,
        scope=parsed.get("scope") or [],
    )


def take_verdict(parsed: Parsed, caller: Caller, run: Run) -> None:
    verdict = parsed.get("verdict")
    if verdict is None:
        return
    target = run_verdict_apply(
        architect=caller.architect,
        target=verdict["run"],
        value=verdict["value"],
        note=verdict.get("note", ""),
        given_by=run,
    )
    if target is None:
        parsed.refuse("verdict", _NO_RUN(parsed.lang, run=verdict["run"]))
    else:
        parsed.accept("verdict", _VERDICT_TAKEN(parsed.lang, value=verdict["value"], run=target.pk))
        # A candidate that replayed the judged run reads the verdict once it is committed.
        transaction.on_commit(lambda: candidates.verdict_given(target))


def frame(verb: Verb, run: Run) -> dict[str, Any]:
    return {"contract": CONTRACT_VERSION, "verb": verb, "run": str(run.pk)}


@contextmanager
def guarded(run: Run) -> Iterator[None]:
    """A cycle that breaks is recorded as failed, with the reason, before the error goes on."""
    try:
        yield
    except Exception as error:
        run.status = "failed"
        run.error = f"{getattr(error, 'code', type(error).__name__)}: {error}"[:4000]
        run.save(update_fields=["status", "error"])
        raise
