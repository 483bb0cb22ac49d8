"""Every released skill parses, and every tool a skill names exists in the MCP server."""

from __future__ import annotations

import asyncio
import re

import pytest

from memory.agent import instruction, mcp_server, skills_repo, tools
from memory.agent import skill as skill_file

SKILLS = skills_repo.released()
SERVED = {t.name for t in asyncio.run(mcp_server.build([t.name for t in tools.TOOLS]).list_tools())}
SNAKE_IN_BACKTICKS = re.compile(r"`([a-z]+(?:_[a-z]+)+)`")


def test_the_owners_skills_exist():
    assert {"use-tables", "naming", "use-knowledge-graph"} <= set(SKILLS)


def test_every_store_has_its_skill_and_the_instruction_names_it():
    # The owner's passport §19: one skill per store (tables, graph, vectors, objects).
    assert {"use-tables", "use-knowledge-graph", "use-vectors", "use-objects"} <= set(SKILLS)
    assert "keep_object" in SKILLS["use-objects"].tools
    text = instruction.instruction()
    for name in ("use-tables", "use-knowledge-graph", "use-vectors", "use-objects"):
        assert f"навык {name}" in text


@pytest.mark.parametrize("name", sorted(SKILLS))
def test_every_tool_a_skill_names_is_served(name):
    skill = SKILLS[name]
    assert skill.description
    assert set(skill.tools) <= SERVED, set(skill.tools) - SERVED
    mentioned = set(SNAKE_IN_BACKTICKS.findall(skill.body))
    assert mentioned <= SERVED, mentioned - SERVED
    assert set(skill.tools) <= mentioned | set(re.findall(r"\b[a-z]+_[a-z_]+\b", skill.body))


def test_a_skill_without_front_matter_is_refused(tmp_path):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "SKILL.md").write_text("# no front matter\n")
    with pytest.raises(skill_file.SkillError, match="front matter"):
        skill_file.parse_skill(folder / "SKILL.md")


def test_a_skill_named_unlike_its_folder_is_refused(tmp_path):
    folder = tmp_path / "tables"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: other\ndescription: x\n---\nbody\n")
    with pytest.raises(skill_file.SkillError, match="differs from its folder"):
        skill_file.parse_skill(folder / "SKILL.md")


def test_the_instruction_is_compact_and_skill_first():
    text = instruction.instruction()
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) <= 12
    for name in SKILLS:
        assert f"навык {name}" in text, name
    for tombstone in ("🪦", "отменено", "раньше", "больше не"):
        assert tombstone not in text


def test_the_system_prompt_carries_the_skills_asked_for():
    prompt = instruction.system_prompt(["use-tables"])
    assert prompt.startswith(instruction.instruction())
    assert "## Навык use-tables" in prompt
    assert "## Навык naming" not in prompt
    with pytest.raises(skill_file.SkillError):
        instruction.system_prompt(["no-such-skill"])
