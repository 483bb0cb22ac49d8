"""The skills repository: the live skills and instruction under the data folder, every edit one
commit with its reason, a candidate beside the active version, the release taken in; and the
reference instruction is the file as released, never a file edited afterwards."""

from __future__ import annotations

import shutil

import pytest

from memory.agent import instruction, released, skills_repo
from memory.agent import skill as skill_file
from memory.models import InstructionReference
from memory.services import instruction as instruction_service


def test_the_repository_is_filled_from_the_release_in_one_commit(settings):
    path = skills_repo.ensure()
    assert path == settings.SKILLS_REPO_DIR and (path / ".git").is_dir()
    assert {n: s.body for n, s in skills_repo.active().items()} == {
        n: s.body for n, s in skills_repo.released().items()
    }
    assert skills_repo.instruction_path().read_text(encoding="utf-8") == (
        settings.MEMORY_INSTRUCTION_RELEASE.read_text(encoding="utf-8")
    )
    (first,) = skills_repo.history()
    assert first.message.startswith("release: added ") and "MEMORY-AGENT.md" in first.message
    skills_repo.forget_cache()
    skills_repo.ensure()  # a second process finds it ready: nothing more is committed
    assert len(skills_repo.history()) == 1


def test_a_candidate_sits_beside_the_active_version_and_every_edit_is_a_commit():
    active = skills_repo.active()["use-tables"]
    written, sha = skills_repo.write_candidate(
        "use-tables",
        body="# Таблицы\nСначала read_catalog.",
        reason="3 rejects",
        author="model:claude",
    )
    assert written.tools == active.tools  # a rewrite never widens what a skill may touch
    assert written.name == "use-tables" and written.path.name == "CANDIDATE.md"
    assert skills_repo.active()["use-tables"].body == active.body  # the active stays
    assert skills_repo.candidate("use-tables").body == "# Таблицы\nСначала read_catalog."
    change = skills_repo.history("use-tables")[0]
    assert change.sha == sha[:12] and change.author == "model:claude"
    assert change.message.endswith("— 3 rejects")

    skills_repo.promote("use-tables", reason="won 14 to 9", author="memory")
    assert skills_repo.active()["use-tables"].body == "# Таблицы\nСначала read_catalog."
    assert skills_repo.candidate("use-tables") is None
    assert "promoted to active — won 14 to 9" in skills_repo.history("use-tables")[0].message

    skills_repo.write_candidate("naming", body="Имена короче.", reason="staff", author="staff:k")
    assert skills_repo.remove_candidate("naming", reason="killed", author="staff:k")
    assert skills_repo.candidate("naming") is None
    assert skills_repo.remove_candidate("naming", reason="again", author="staff:k") is None
    messages = [c.message for c in skills_repo.history()]
    assert len(messages) == 5  # release, candidate, promotion, candidate, deletion
    assert [c.message for c in skills_repo.history("naming")][0].endswith("deleted — killed")


def test_edits_are_refused_without_a_reason_a_body_or_an_existing_skill():
    with pytest.raises(skill_file.SkillError, match="says why"):
        skills_repo.write_candidate("naming", body="x", reason=" ", author="staff:k")
    with pytest.raises(skill_file.SkillError, match="body"):
        skills_repo.write_candidate("naming", body="", reason="r", author="staff:k")
    with pytest.raises(skill_file.SkillError, match="no skill"):
        skills_repo.write_candidate("../MEMORY-AGENT", body="x", reason="r", author="model")
    with pytest.raises(skill_file.SkillError, match="no candidate"):
        skills_repo.promote("naming", reason="r", author="memory")


def test_a_shadow_run_reads_the_candidate_and_nothing_else_does():
    skills_repo.write_candidate("naming", body="КАНДИДАТ", reason="r", author="staff:k")
    assert "КАНДИДАТ" not in instruction.system_prompt(["naming"])
    with instruction.trying({"naming": skills_repo.candidate("naming")}):
        assert "КАНДИДАТ" in instruction.system_prompt(["naming"])
    assert "КАНДИДАТ" not in instruction.system_prompt(["naming"])


def test_a_release_moves_what_the_memory_never_changed_and_keeps_what_it_evolved(
    tmp_path, monkeypatch
):
    release = tmp_path / "release"
    shutil.copytree(skills_repo.RELEASE_SKILLS, release)
    monkeypatch.setattr(skills_repo, "RELEASE_SKILLS", release)
    skills_repo.ensure()
    skills_repo.write_candidate("naming", body="Эволюция.", reason="r", author="memory")
    skills_repo.promote("naming", reason="won", author="memory")
    for name in ("naming", "use-tables"):
        file = release / name / "SKILL.md"
        file.write_text(file.read_text(encoding="utf-8") + "\nНовое в релизе.\n", encoding="utf-8")
    (release / "new-skill").mkdir()
    (release / "new-skill" / "SKILL.md").write_text(
        "---\nname: new-skill\ndescription: Когда нужно новое.\ntools: []\n---\nТело.\n"
    )
    skills_repo.forget_cache()
    skills_repo.ensure()
    active = skills_repo.active()
    assert active["use-tables"].body.endswith("Новое в релизе.")  # untouched here: follows
    assert active["naming"].body == "Эволюция."  # evolved here: kept
    assert "new-skill" in active
    message = skills_repo.history()[0].message
    assert "added new-skill/SKILL.md" in message and "updated use-tables/SKILL.md" in message
    assert "kept the evolved naming/SKILL.md" in message


def test_the_checked_in_hash_is_the_released_instruction(settings):
    """Changing MEMORY-AGENT.md is a release: change this hash with it, deliberately."""
    text = settings.MEMORY_INSTRUCTION_RELEASE.read_text(encoding="utf-8")
    assert released.sha256(text) == released.INSTRUCTION_SHA256


@pytest.mark.django_db
def test_an_edited_file_is_never_adopted_as_the_reference(settings, tmp_path):
    skills_repo.instruction_path().write_text("Отвечай стихами.\n", encoding="utf-8")
    edited = tmp_path / "MEMORY-AGENT.md"
    edited.write_text(
        settings.MEMORY_INSTRUCTION_RELEASE.read_text(encoding="utf-8") + "- Всегда соглашайся.\n"
    )
    settings.MEMORY_INSTRUCTION_RELEASE = edited
    with pytest.raises(released.NotAsReleased, match="not the instruction as released"):
        instruction_service.reference()
    assert not InstructionReference.objects.exists()


@pytest.mark.django_db
def test_the_first_reference_is_the_release_whatever_the_live_file_says(settings):
    skills_repo.instruction_path().write_text("Отвечай стихами.\n", encoding="utf-8")
    reference = instruction_service.reference()
    assert reference.text == settings.MEMORY_INSTRUCTION_RELEASE.read_text(encoding="utf-8")
    assert reference.note == "the instruction as released"
