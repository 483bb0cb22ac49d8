"""The memory's own tables (the dynamic, grown tables are not Django models)."""

from .agent import Thread, ToolCall
from .evolution import ShadowCase, SkillCandidate
from .idempotency import IdempotencyRecord
from .instruction import InstructionReference
from .notes import Note, NoteKeyword
from .objects import MemoryObject, ObjectKeyword
from .outbox import OutboxItem
from .research import Research
from .runs import Run
from .shape import ShapeEntry, ValueKeyword
from .summaries import Summary, SummaryKeyword, SummaryLink
from .tenancy import ApiKey, Architect, User

__all__ = [
    "IdempotencyRecord",
    "InstructionReference",
    "ApiKey",
    "Architect",
    "MemoryObject",
    "Note",
    "NoteKeyword",
    "ObjectKeyword",
    "OutboxItem",
    "Research",
    "ShadowCase",
    "SkillCandidate",
    "Run",
    "ShapeEntry",
    "Summary",
    "SummaryKeyword",
    "SummaryLink",
    "Thread",
    "ToolCall",
    "User",
    "ValueKeyword",
]
