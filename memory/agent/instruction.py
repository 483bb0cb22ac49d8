"""The instruction and the skills: definitions live in the folder, versioned by git (law 0).

The system prompt of a call is MEMORY-AGENT.md followed by the skills the operation needs, each
the active version in the skills repository (``memory.agent.skills_repo``: ``<name>/SKILL.md``,
front matter: name, description, tools). A shadow run replays a request with a candidate in
place of the active version (``trying``); nothing else ever reads a candidate. A skill the agent
proposed (front matter ``beside``) is read wherever the skill it goes beside is; the
instruction's candidate (``skills_repo.INSTRUCTION_NAME``), tried, stands for MEMORY-AGENT.md.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from memory.agent import skills_repo
from memory.agent.skill import Skill, SkillError

_trying: ContextVar[Mapping[str, Skill] | None] = ContextVar("memory_skills_trying", default=None)


@contextmanager
def trying(candidates: Mapping[str, Skill]) -> Iterator[None]:
    """Within this block the named skills are read as the given (candidate) versions."""
    token = _trying.set(dict(candidates))
    try:
        yield
    finally:
        _trying.reset(token)


def skills() -> dict[str, Skill]:
    """The active version of every skill (or the candidate being tried in a shadow run)."""
    tried = {k: v for k, v in (_trying.get() or {}).items() if k != skills_repo.INSTRUCTION_NAME}
    return {**skills_repo.active(), **tried}


def instruction() -> str:
    tried = (_trying.get() or {}).get(skills_repo.INSTRUCTION_NAME)
    if tried is not None:
        return tried.body.strip()
    return skills_repo.instruction_path().read_text(encoding="utf-8").strip()


def system_prompt(needed: Sequence[str], extra: str = "") -> str:
    """MEMORY-AGENT.md, then the full text of each skill this operation needs."""
    known = skills()
    parts = [instruction()]
    joined = [n for n, s in known.items() if s.beside in needed and n not in needed]
    for name in [*needed, *joined]:
        if name not in known:
            raise SkillError(f"no skill {name!r} in the skills repository")
        parts.append(f"## Навык {name}\n\n{known[name].body}")
    if extra:
        parts.append(extra.strip())
    return "\n\n---\n\n".join(parts)
