"""Preview what a label would become as a table or column name (exit 0), or why it is refused (exit 1)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from memory.models import Architect, ShapeEntry
from memory.shape import names


class Command(BaseCommand):
    help = "Show the SQL name a label would get, or the reason it is refused (exit code 1)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("label")
        parser.add_argument("--architect", help="check against this architect's existing names")

    def handle(self, *args: Any, **options: Any) -> None:
        existing: list[names.Name] = []
        if options["architect"]:
            architect = Architect.objects.filter(name=options["architect"]).first()
            if architect is None:
                self.stderr.write(f"no architect {options['architect']!r}")
                raise SystemExit(2)
            existing = [
                names.Name(label=e.label, name=e.name, key=e.key)
                for e in ShapeEntry.objects.filter(architect=architect)
            ]
        try:
            name = names.check(options["label"], existing=existing)
        except names.NameRefused as refusal:
            self.stdout.write(f"refused: {refusal.text.en}")  # the command speaks English
            raise SystemExit(1) from None
        verdict = "reuses existing" if name.reused else "new"
        self.stdout.write(f"{name.name}  ({verdict}; scheme {names.SCHEME_NAME}; key «{name.key}»)")
