"""The Celery application (research, relearning, the outbox's replay and the evolution's jobs run
here, beside the web server) and the one way work reaches it: ``enqueue``."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from typing import Any

from celery import Celery
from django.conf import settings
from django.db import transaction

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory.settings")

log = logging.getLogger(__name__)

app = Celery("memory")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

Failed = Callable[[BaseException], None]


def enqueue(task: str, *args: Any, countdown: float = 0.0, failed: Failed | None = None) -> None:
    """Hand the job ``task(*args)`` to Celery once the current transaction commits (at once
    outside one): a job never sees rows its request did not commit, and a rolled-back request
    sends nothing. Never raises (see ``send``)."""
    transaction.on_commit(lambda: send(task, args, countdown=countdown, failed=failed), robust=True)


def send(
    task: str, args: Sequence[Any] = (), *, countdown: float = 0.0, failed: Failed | None = None
) -> None:
    """Send by name now, so no module imports the tasks it starts. Celery's eager mode
    (``CELERY_TASK_ALWAYS_EAGER``) runs the job here instead. A broker that is down is logged
    and handed to ``failed`` (the job's own row says why), never raised: the answer that started
    the job is already given."""
    try:
        if settings.CELERY_TASK_ALWAYS_EAGER:
            app.loader.import_default_modules()  # Celery's own import of the tasks modules
            app.tasks[task].apply(args=list(args))
        else:
            app.send_task(task, args=list(args), countdown=max(0.0, countdown))
    except Exception as error:
        log.warning("could not hand %s%s to Celery: %s", task, tuple(args), error)
        if failed is not None:
            try:
                failed(error)
            except Exception:
                log.exception("recording that %s was not sent failed", task)
