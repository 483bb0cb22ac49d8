from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = "Memory"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Registers the OpenAPI description of the memory key (drf-spectacular extension).
        from memory.contract import schema  # noqa: F401

        # Registers the outbox's delivery of a note's supersession by meaning.
        from memory.services import knowledge  # noqa: F401
