"""Create a memory key for an architect (created if missing). The key is the last line printed."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from memory.ladder import DEPTH_WORDS
from memory.models import ApiKey, Architect


class Command(BaseCommand):
    help = "Create a memory key bound to one architect, with a maximum depth."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--architect", required=True, help="architect name (created if missing)"
        )
        parser.add_argument(
            "--max-depth",
            choices=DEPTH_WORDS,
            default=None,
            help="deepest level this key may ask for (default: MEMORY_KEY_DEFAULT_DEPTH)",
        )
        parser.add_argument("--name", default="", help="a label to recognise the key by")

    def handle(self, *args: Any, **options: Any) -> None:
        name = options["architect"].strip()
        if not name:
            self.stderr.write("--architect must not be empty")
            raise SystemExit(2)
        with transaction.atomic():
            architect, created = Architect.objects.get_or_create(name=name)
            key = ApiKey(
                architect=architect,
                name=options["name"],
                max_depth=options["max_depth"] or settings.MEMORY_KEY_DEFAULT_DEPTH,
            )
            plaintext = key.set_new_key()
            key.save()
        if created:
            self.stdout.write(f"architect created: {architect.name}")
        self.stdout.write(f"key for {architect.name}, max depth {key.max_depth}; shown once:")
        self.stdout.write(plaintext)
