"""One skill as a file: ``<name>/SKILL.md`` with front matter (name, description, tools) and its
body. Parsed here; kept and versioned by ``memory.agent.skills_repo``; composed into a system
prompt by ``memory.agent.instruction``."""

from __future__ import annotations

import re
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
    # A skill the agent proposed joins the calls of an existing one: it is read wherever that
    # one is (``memory.agent.instruction``). Empty for the released skills.
    beside: str = ""


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
    beside = meta.get("beside") or ""
    if not isinstance(beside, str):
        raise SkillError(f"{path}: 'beside' is the name of one skill")
    return Skill(
        meta["name"],
        meta["description"].strip(),
        tuple(tools),
        match.group(2).strip(),
        path,
        beside.strip(),
    )
