"""The instruction and the skills: definitions live in the folder, versioned by git (law 0).

The system prompt of a call is MEMORY-AGENT.md followed by the skills the operation needs, each
the active version in the skills repository (``memory.agent.skills_repo``: ``<name>/SKILL.md``,
front matter: name, description, tools). A shadow run replays a request with a candidate in
place of the active version (``trying``); nothing else ever reads a candidate.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

import yaml

BASE_DIR = Path(__file__).resolve().parents[2]
_FRONT = re.compile(r"\A---\n(.*?)\n---\n(.*)\Z", re.S)


class SkillError(ValueError):
    pass


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    tools: tuple[str, ...]
    body: str
    path: Path


def parse_skill(path: Path) -> Skill:
    match = _FRONT.match(path.read_text(encoding="utf-8"))
    if match is None:
        raise SkillError(f"{path}: no front matter between '---' lines")
    meta = yaml.safe_load(match.group(1)) or {}
    for key in ("name", "description"):
        if not isinstance(meta.get(key), str) or not meta[key].strip():
            raise SkillError(f"{path}: front matter needs '{key}'")
    if meta["name"] != path.parent.name:
        raise SkillError(f"{path}: name {meta['name']!r} differs from its folder")
    tools = meta.get("tools") or []
    if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
        raise SkillError(f"{path}: 'tools' is a list of tool names")
    return Skill(
        meta["name"], meta["description"].strip(), tuple(tools), match.group(2).strip(), path
    )


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
    from memory.agent import skills_repo

    return {**skills_repo.active(), **(_trying.get() or {})}


def instruction() -> str:
    from memory.agent import skills_repo

    return skills_repo.instruction_path().read_text(encoding="utf-8").strip()


def system_prompt(needed: Sequence[str], extra: str = "") -> str:
    """MEMORY-AGENT.md, then the full text of each skill this operation needs."""
    known = skills()
    parts = [instruction()]
    for name in needed:
        if name not in known:
            raise SkillError(f"no skill {name!r} in the skills repository")
        parts.append(f"## Навык {name}\n\n{known[name].body}")
    if extra:
        parts.append(extra.strip())
    return "\n\n---\n\n".join(parts)
