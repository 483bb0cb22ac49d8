"""The Celery application: research and relearning run here, beside the web server."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory.settings")

app = Celery("memory")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
