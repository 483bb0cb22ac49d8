"""The skills repository: the live skills and instruction, a git repository under the data folder.

Law 0 of the passport: the definition lives in a folder, the data in the stores. The project
ships the released skills (``skills/``) and instruction (``MEMORY-AGENT.md``); the running memory
works on its own copy in ``MEMORY_SKILLS_DIR``, a git repository (dulwich, no git binary needed).
Every edit — a candidate written by the model's tool or by staff, a promotion, a death, a reset
of the instruction, a release brought in — is one commit, made at once, with the reason as its
message. The history is what the skills page shows.

Each skill folder holds its active version (``SKILL.md``) and at most one candidate beside it
(``CANDIDATE.md``). A candidate keeps the active version's tools: a rewrite may change how a
skill works, never widen what it may touch.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import yaml
from django.conf import settings
from dulwich import porcelain
from dulwich.repo import Repo

from memory.agent.skill import BASE_DIR, Skill, SkillError, parse_skill
from memory.shape import names

RELEASE_SKILLS = BASE_DIR / "skills"
ACTIVE = "SKILL.md"
CANDIDATE = "CANDIDATE.md"
INSTRUCTION = "MEMORY-AGENT.md"
RELEASED = "released.json"
CODE = "memory"
# The instruction's candidate (lines the agent proposes for MEMORY-AGENT.md) is measured like a
# skill's, under this name, in a folder of its own: ``MEMORY-AGENT/CANDIDATE.md``, its body the
# whole instruction it would be. It has no SKILL.md there: the live instruction stays the file
# MEMORY-AGENT.md, and only a promotion writes it.
INSTRUCTION_NAME = "MEMORY-AGENT"

_ready: set[str] = set()
_thread_lock = threading.RLock()


def root() -> Path:
    return Path(settings.SKILLS_REPO_DIR)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def version(text: str) -> str:
    """A version's short name: the first 12 hex digits of its text's sha256."""
    return _sha(text)[:12]


def _identity(author: str) -> bytes:
    name = (author or CODE).replace("<", "").replace(">", "").strip() or CODE
    return f"{name} <memory@localhost>".encode()


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One writer at a time, across the threads of this process and the processes of the
    memory (web, worker, the model's tool server)."""
    path.mkdir(parents=True, exist_ok=True)
    with _thread_lock, open(path / ".memory-lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ensure() -> Path:
    """The repository, created and filled from the release the first time it is needed; a
    release that brings new or changed skills is taken in (one commit)."""
    path = root()
    if str(path) in _ready and (path / ".git").exists():
        return path
    with _locked(path):
        if not (path / ".git").exists():
            porcelain.init(str(path))
            (path / ".gitignore").write_text(".memory-lock\n", encoding="utf-8")
        _take_release(path)
    _ready.add(str(path))
    return path


def _released_files() -> dict[str, Path]:
    files = {f"{p.parent.name}/{ACTIVE}": p for p in sorted(RELEASE_SKILLS.glob(f"*/{ACTIVE}"))}
    files[INSTRUCTION] = Path(settings.MEMORY_INSTRUCTION_RELEASE)
    return files


def _take_release(path: Path) -> None:
    """Bring the release in: a file the memory never changed follows the release; one it
    evolved is kept, and the page says the release differs. Commits only when something moved."""
    record_path = path / RELEASED
    recorded: dict[str, str] = (
        json.loads(record_path.read_text(encoding="utf-8")) if record_path.exists() else {}
    )
    moved: list[str] = []
    for relative, source in _released_files().items():
        text = source.read_text(encoding="utf-8")
        target = path / relative
        was = recorded.get(relative)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            moved.append(f"added {relative}")
        elif was != _sha(text):
            if _sha(target.read_text(encoding="utf-8")) == was:
                target.write_text(text, encoding="utf-8")
                moved.append(f"updated {relative}")
            elif was is not None:
                moved.append(f"kept the evolved {relative} (the release changed it too)")
        recorded[relative] = _sha(text)
    if not moved and record_path.exists():
        return
    record_path.write_text(json.dumps(recorded, indent=1, sort_keys=True), encoding="utf-8")
    _commit(path, "release: " + "; ".join(moved or ["recorded"]), CODE, add_all=True)


def _commit(
    path: Path,
    message: str,
    author: str,
    *,
    add: list[str] = (),  # type: ignore[assignment]
    remove: list[str] = (),  # type: ignore[assignment]
    add_all: bool = False,
) -> str:
    with Repo(str(path)) as repo:
        if add_all:
            porcelain.add(repo, [str(p) for p in path.rglob("*") if ".git" not in p.parts])
        elif add:
            porcelain.add(repo, [str(path / p) for p in add])
        if remove:
            porcelain.remove(repo, [str(path / p) for p in remove])
        who = _identity(author)
        sha = porcelain.commit(repo, message=message.encode("utf-8"), author=who, committer=who)
    return sha.decode()


# --- reading --------------------------------------------------------------------------------


def released() -> dict[str, Skill]:
    """The skills as the project ships them (the repository is filled from these)."""
    return {p.parent.name: parse_skill(p) for p in sorted(RELEASE_SKILLS.glob(f"*/{ACTIVE}"))}


def instruction_path() -> Path:
    return ensure() / INSTRUCTION


def active() -> dict[str, Skill]:
    path = ensure()
    found = {}
    for file in sorted(path.glob(f"*/{ACTIVE}")):
        skill = parse_skill(file)
        found[skill.name] = skill
    return found


def proposed() -> dict[str, Skill]:
    """Candidates with no active version beside them: a new skill the agent proposed, and the
    instruction's candidate (``INSTRUCTION_NAME``)."""
    path = ensure()
    return {
        file.parent.name: parse_skill(file)
        for file in sorted(path.glob(f"*/{CANDIDATE}"))
        if not (file.parent / ACTIVE).exists()
    }


def candidate(name: str) -> Skill | None:
    file = ensure() / name / CANDIDATE
    return parse_skill(file) if file.exists() else None


def text_of(skill: Skill) -> str:
    return skill.path.read_text(encoding="utf-8")


# --- edits: each one commit, at once ------------------------------------------------------


def _require_skill(name: str) -> Skill:
    known = active()
    if name not in known:
        raise SkillError(f"no skill {name!r}: a candidate is written beside an existing skill")
    return known[name]


def candidate_text(active_skill: Skill, *, body: str, description: str = "") -> str:
    """The candidate's file: the active version's name and tools, its own body (and, if given,
    its own description of when to use it)."""
    if not body.strip():
        raise SkillError("a candidate needs a body")
    front = {
        "name": active_skill.name,
        "description": (description or active_skill.description).strip(),
        "tools": list(active_skill.tools),
    }
    head = yaml.safe_dump(front, allow_unicode=True, sort_keys=False, width=10_000).strip()
    return f"---\n{head}\n---\n{body.strip()}\n"


def write_candidate(
    name: str, *, body: str, description: str = "", reason: str, author: str
) -> tuple[Skill, str]:
    """Write (or rewrite) the candidate beside the active version. Returns it and the commit."""
    current = _require_skill(name)
    text = candidate_text(current, body=body, description=description)
    return _write(name, text, reason=reason, author=author, what="candidate")


def new_skill_name(label: str) -> str:
    """A new skill's folder name, through the one check every name the memory makes passes
    (``memory.shape.names.check``: the allowed letters, Cyrillic by a fixed scheme, no reserved
    word, no length over the limit), hyphens for its underscores. A name that folds into an
    existing skill's (or the instruction's) is not new: it is refused."""
    existing = []
    for taken in [*active(), *proposed(), INSTRUCTION_NAME]:
        try:
            existing.append(names.check(taken))
        except names.NameRefused:  # a released name the check would not make: still taken
            existing.append(names.Name(label=taken, name=taken.replace("-", "_"), key=taken))
    try:
        checked = names.check(label, existing=existing)
    except names.NameRefused as refused:
        raise SkillError(f"{label!r} is not a skill name: {refused.message}") from refused
    if checked.reused:
        raise SkillError(
            f"{label!r} is the existing {checked.name.replace('_', '-')!r}: write a candidate "
            "for it instead of a new skill"
        )
    return checked.name.replace("_", "-")


def write_new_skill(
    label: str, *, beside: str, description: str, body: str, reason: str, author: str
) -> tuple[Skill, str]:
    """A skill that does not exist yet, proposed as a candidate: it joins the calls of the
    existing skill ``beside`` and gets no tools of its own (a proposal never widens what the
    model may touch). Promoted, it becomes ``<name>/SKILL.md``."""
    name = new_skill_name(label)
    if beside not in active():
        raise SkillError(f"no skill {beside!r} to go beside: a new skill joins an existing one")
    if not description.strip() or not body.strip():
        raise SkillError("a new skill needs a description (when to use it) and a body")
    front = {"name": name, "description": description.strip(), "tools": [], "beside": beside}
    head = yaml.safe_dump(front, allow_unicode=True, sort_keys=False, width=10_000).strip()
    text = f"---\n{head}\n---\n{body.strip()}\n"
    return _write(name, text, reason=reason, author=author, what="new skill proposed, candidate")


def write_instruction_candidate(lines: str, *, reason: str, author: str) -> tuple[Skill, str]:
    """New lines for the instruction, as a candidate: the live instruction with the lines added
    at its end, measured like a skill's candidate under ``INSTRUCTION_NAME``."""
    added = [line.strip() for line in lines.splitlines() if line.strip()]
    if not added:
        raise SkillError("instruction lines are needed")
    added = [line if line.startswith("- ") else f"- {line.lstrip('-* ')}" for line in added]
    live = instruction_path().read_text(encoding="utf-8").rstrip()
    front = {"name": INSTRUCTION_NAME, "description": "MEMORY-AGENT.md", "tools": []}
    head = yaml.safe_dump(front, allow_unicode=True, sort_keys=False, width=10_000).strip()
    text = f"---\n{head}\n---\n{live}\n" + "\n".join(added) + "\n"
    return _write(
        INSTRUCTION_NAME, text, reason=reason, author=author, what="instruction candidate"
    )


def _write(name: str, text: str, *, reason: str, author: str, what: str) -> tuple[Skill, str]:
    if not reason.strip():
        raise SkillError("every edit of a skill says why")
    path = ensure()
    with _locked(path):
        file = path / name / CANDIDATE
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")
        written = parse_skill(file)
        sha = _commit(
            path,
            f"{name}: {what} {version(text)} — {reason.strip()}",
            author,
            add=[f"{name}/{CANDIDATE}"],
        )
    return written, sha


def remove_candidate(name: str, *, reason: str, author: str) -> str | None:
    """Delete the candidate (killed by staff, or dead by its figures). None if there was none."""
    path = ensure()
    with _locked(path):
        file = path / name / CANDIDATE
        if not file.exists():
            return None
        gone = version(file.read_text(encoding="utf-8"))
        return _commit(
            path,
            f"{name}: candidate {gone} deleted — {reason.strip()}",
            author,
            remove=[f"{name}/{CANDIDATE}"],
        )


def promote(name: str, *, reason: str, author: str) -> str:
    """The candidate replaces the active version (a proposed skill becomes active; the
    instruction's candidate becomes the live MEMORY-AGENT.md): one commit."""
    path = ensure()
    with _locked(path):
        file = path / name / CANDIDATE
        if not file.exists():
            raise SkillError(f"skill {name!r} has no candidate to promote")
        text = file.read_text(encoding="utf-8")
        target = f"{name}/{ACTIVE}"
        if name == INSTRUCTION_NAME:
            target = INSTRUCTION
            (path / INSTRUCTION).write_text(parse_skill(file).body + "\n", encoding="utf-8")
        else:
            (path / target).write_text(text, encoding="utf-8")
        return _commit(
            path,
            f"{name}: candidate {version(text)} promoted to active — {reason.strip()}",
            author,
            add=[target],
            remove=[f"{name}/{CANDIDATE}"],
        )


def write_instruction(text: str, *, reason: str, author: str) -> str | None:
    """The live instruction rewritten (the reset button). None when nothing changed."""
    path = ensure()
    with _locked(path):
        file = path / INSTRUCTION
        if file.read_text(encoding="utf-8") == text:
            return None
        file.write_text(text, encoding="utf-8")
        return _commit(path, f"instruction: {reason.strip()}", author, add=[INSTRUCTION])


@dataclass(frozen=True)
class Change:
    sha: str
    at: datetime
    author: str
    message: str


def history(name: str | None = None, limit: int = 100) -> list[Change]:
    """The commits, newest first; with a name, only those touching that skill's folder."""
    path = ensure()
    with Repo(str(path)) as repo:
        walker = repo.get_walker(paths=[name.encode()] if name else None, max_entries=limit)
        return [
            Change(
                sha=entry.commit.id.decode()[:12],
                at=datetime.fromtimestamp(entry.commit.commit_time, tz=UTC),
                author=entry.commit.author.decode("utf-8", "replace").split(" <")[0],
                message=entry.commit.message.decode("utf-8", "replace").strip(),
            )
            for entry in walker
        ]


def forget_cache() -> None:
    """Tests give each case its own repository folder."""
    _ready.clear()
