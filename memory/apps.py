"""The app's start-up: where what a lower layer needs from above is handed down to it."""

from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = "Memory"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Imported here because Django allows models to be imported only once the app registry
        # is ready; each import fills a registry of a lower layer.
        from memory.agent import tools
        from memory.knowledge import fill  # noqa: F401  (the outbox's note deliveries)
        from memory.levels import graph as graph_level
        from memory.services.evolution import (
            candidates,
            shadow,  # noqa: F401  (the replayable skills)
        )

        tools.REACH.ask_graph = graph_level.ask
        tools.REACH.write_candidate = candidates.write_candidate
        tools.REACH.propose_skill = candidates.propose_skill
        tools.REACH.propose_instruction = candidates.propose_instruction
