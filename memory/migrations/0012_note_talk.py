from django.db import migrations, models


def place_notes(apps, schema_editor):
    """Existing notes get their conversation and place in it, by the rule new notes follow."""
    from memory.knowledge.notes import conversations

    Note = apps.get_model("memory", "Note")
    for architect_id in Note.objects.values_list("architect_id", flat=True).distinct():
        notes = Note.objects.filter(architect_id=architect_id).order_by("sender", "created_at")
        for conversation in conversations(list(notes.only("pk", "sender", "created_at"))):
            for position, note in enumerate(conversation):
                note.talk, note.position = conversation[0].pk, position
            Note.objects.bulk_update(conversation, ["talk", "position"], batch_size=500)


class Migration(migrations.Migration):

    dependencies = [
        ("memory", "0011_note_scope_index"),
    ]

    operations = [
        migrations.AddField(
            model_name="note",
            name="talk",
            field=models.UUIDField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="note",
            name="position",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.RunPython(place_notes, migrations.RunPython.noop),
    ]
