"""The memory: a black box with two verbs, remember and recall."""

from .celery import app as celery_app

__all__ = ["celery_app"]
