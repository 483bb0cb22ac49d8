"""Make a user a member of an architect: the only way, besides the admin, a user gets a memory."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from memory.models import Architect


class Command(BaseCommand):
    help = (
        "Make USERNAME a member of ARCHITECT (the user then speaks for that architect's memory). "
        "An unknown architect is refused unless --create-architect is given."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username", help="an existing user")
        parser.add_argument("architect", help="an existing architect's name")
        parser.add_argument(
            "--create-architect",
            action="store_true",
            help="create ARCHITECT if no architect has that name",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        username = options["username"].strip()
        name = options["architect"].strip()
        if not username or not name:
            raise CommandError("USERNAME and ARCHITECT must not be empty")
        User = get_user_model()
        with transaction.atomic():
            user = User.objects.select_for_update().filter(username=username).first()
            if user is None:
                raise CommandError(f"no user named {username!r} (create it first: createsuperuser)")
            architect = Architect.objects.filter(name=name).first()
            created = False
            if architect is None:
                if not options["create_architect"]:
                    raise CommandError(
                        f"no architect named {name!r}; check the name, or pass "
                        "--create-architect to create a new, empty memory"
                    )
                architect = Architect.objects.create(name=name)
                created = True
            before = user.architect
            user.architect = architect
            user.save(update_fields=["architect"])
        if created:
            self.stdout.write(f"architect created: {architect.name}")
        if before is None:
            self.stdout.write(f"{user.username} is now a member of {architect.name}")
        elif before.pk == architect.pk:
            self.stdout.write(f"{user.username} was already a member of {architect.name}")
        else:
            self.stdout.write(
                f"{user.username} moved from {before.name} to {architect.name} "
                f"(no longer sees {before.name}'s memory)"
            )
