"""The instruction and the skills: definitions live in the folder, versioned by git (law 0).

The system prompt of a call is MEMORY-AGENT.md followed by the skills the operation needs,
each read from ``skills/<name>/SKILL.md`` (front matter: name, description, tools).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

BASE_DIR = Path(__file__).resolve().parents[2]
SKILLS_DIR = BASE_DIR / "skills"
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


def skills() -> dict[str, Skill]:
    found = {}
    for path in sorted(SKILLS_DIR.glob("*/SKILL.md")):
        skill = parse_skill(path)
        found[skill.name] = skill
    return found


def instruction() -> str:
    from django.conf import settings

    return Path(settings.MEMORY_INSTRUCTION_PATH).read_text(encoding="utf-8").strip()


def system_prompt(needed: Sequence[str], extra: str = "") -> str:
    """MEMORY-AGENT.md, then the full text of each skill this operation needs."""
    known = skills()
    parts = [instruction()]
    for name in needed:
        if name not in known:
            raise SkillError(f"no skill {name!r} in {SKILLS_DIR}")
        parts.append(f"## Навык {name}\n\n{known[name].body}")
    if extra:
        parts.append(extra.strip())
    return "\n\n---\n\n".join(parts)
