"""`make run`'s command on its own data folder: gunicorn's threaded worker serves (one process, since
it owns the embedded stores), a Celery worker and a Celery beat run beside it and reach the stores
through the internal door; a dead worker or beat is restarted and logged, SIGTERM stops them all,
and the web server's death ends the command with its exit code."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.core.management import CommandError, call_command

from tests.serving.process import Served, alive, children_of, memory_run

RESTART_WITHIN = 10.0  # seconds: the first restart waits 1 s, a Celery start takes ~3 s


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with memory_run(tmp_path_factory.mktemp("memory-run")) as server:
        yield server


def _environ(pid: int) -> list[bytes]:
    return Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")


def _wait_for(what: str, served: Served, within: float) -> list[int]:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        pids = served.children()[what]
        if pids:
            return pids
        time.sleep(0.2)
    pytest.fail(f"no {what} within {within:.0f} s:\n{served.tail()}")


def _wait_for_line(line: str, served: Served, deadline: float) -> None:
    while line not in served.log():
        if time.monotonic() > deadline:
            pytest.fail(f"not logged: {line!r}\n{served.tail()}")
        time.sleep(0.1)


@pytest.mark.slow
def test_it_serves_through_gunicorn_threads_in_one_process(served: Served) -> None:
    web = served.children()["web"]
    assert len(web) == 1, served.tail()
    assert "Using worker: gthread" in served.log()
    # gunicorn's master forks the process that serves; with the embedded stores there is one.
    assert len(children_of(web[0])) == 1
    schema = httpx.get(f"{served.url}/api/schema/", timeout=30)
    assert schema.headers["server"].startswith("gunicorn")
    css = httpx.get(f"{served.url}/static/memory.css", timeout=30)
    assert css.status_code == 200
    assert css.headers["content-type"].startswith("text/css")  # whitenoise serves it
    answer = httpx.post(
        f"{served.url}/api/v1/remember",
        json={"text": "У меня есть друг Дима"},
        headers={"Authorization": f"Bearer {served.key('alice')}"},
        timeout=60,
    )
    assert answer.status_code == 200, answer.text
    # Capture first: the answer comes once the note is committed; the worker fills the vectors
    # and the graph behind it, through the door of this process (PASSPORT.md «Скорость»).
    assert answer.json()["stores"]["vectors"] == {"status": "queued", "items": 2}
    assert answer.json()["stores"]["graph"] == {"status": "queued", "items": 1}
    count = (
        "from memory.models import OutboxItem as O; print(O.objects.filter(status='done').count())"
    )
    deadline = time.monotonic() + 60
    while served.manage("shell", "-c", count).split()[-1:] != ["3"]:
        if time.monotonic() > deadline:
            pytest.fail(f"the worker did not fill the stores behind the answer:\n{served.tail()}")
        time.sleep(0.5)


@pytest.mark.slow
def test_a_worker_and_a_beat_run_beside_it_through_the_door(served: Served) -> None:
    port = served.url.rsplit(":", 1)[1]
    for role in ("worker", "beat"):
        pids = served.children()[role]
        assert len(pids) == 1, f"{role}: {pids}\n{served.tail()}"
        environ = _environ(pids[0])
        assert b"MEMORY_STORE_ACCESS=door" in environ
        assert f"MEMORY_INTERNAL_URL=http://127.0.0.1:{port}".encode() in environ
        # memory_run checked the project before it started them: they do not check it again
        assert b"CELERY_SKIP_CHECKS=1" in environ
    web_environ = _environ(served.children()["web"][0])
    assert f"MEMORY_INTERNAL_URL=http://127.0.0.1:{port}".encode() in web_environ
    assert b"MEMORY_STORE_ACCESS=door" not in web_environ  # the web owns the stores
    # The beat keeps its schedule under the data folder.
    data_dir = Path(served.env["MEMORY_DATA_DIR"])
    deadline = time.monotonic() + 30
    while not list(data_dir.glob("celerybeat-schedule*")) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert list(data_dir.glob("celerybeat-schedule*")), served.tail()


@pytest.mark.slow
def test_a_research_job_runs_on_the_worker_and_a_later_recall_fetches_it(served: Served) -> None:
    """Level 5 end to end: the recall answers at once, the real Celery worker runs the job
    (reaching the embedded stores through the door), a recall naming the run gets its end."""
    headers = {"Authorization": f"Bearer {served.key('bob', 'extreme')}"}

    def call(verb: str, **body: Any) -> dict[str, Any]:
        answer = httpx.post(f"{served.url}/api/v1/{verb}", json=body, headers=headers, timeout=60)
        assert answer.status_code == 200, answer.text
        return answer.json()

    call("remember", text="Мой друг Денис с 1992 по 1994 год служил в Кремле.")
    question = "Кто из моих друзей мог знать Ельцина?"
    first = call("recall", text=question, depth="extreme")
    assert first["depth_used"] == 5
    assert first["research"]["status"] in ("queued", "running", "done")
    deadline = time.monotonic() + 90
    later = first
    while later["research"]["status"] in ("queued", "running") and time.monotonic() < deadline:
        time.sleep(1)
        later = call("recall", text=question, previous_results=[first["run"]])
    research = later["research"]
    assert research["run"] == first["run"]
    assert research["status"] == "done", f"{research}\n{served.tail()}"
    steps = [s["step"] for s in research["progress"]["steps"]]
    assert steps[:3] == ["tables", "graph", "vectors"]
    assert later["depth_used"] == 5
    assert later["answer"]["text"]  # the finding with its chain, or what was tried
    # Asked to wait, the answer holds until the worker has ended the job (bound: 120 s).
    waited = call("recall", text="Какую музыку слушал Пётр в Антарктиде?", depth="extreme",
                  wait=True)  # fmt: skip
    assert waited["depth_used"] == 5, waited["report"]
    assert waited["research"]["status"] == "done", f"{waited['research']}\n{served.tail()}"
    assert waited["research"]["run"] == waited["run"]


@pytest.mark.slow
@pytest.mark.parametrize(("role", "name"), [("worker", "celery worker"), ("beat", "celery beat")])
def test_a_killed_child_is_restarted_and_logged(served: Served, role: str, name: str) -> None:
    (old,) = _wait_for(role, served, RESTART_WITHIN)
    os.kill(old, signal.SIGKILL)
    killed = time.monotonic()
    deadline = killed + RESTART_WITHIN
    new: list[int] = []
    while time.monotonic() < deadline:
        new = [pid for pid in served.children()[role] if pid != old]
        if new:
            break
        time.sleep(0.1)
    assert new, f"the {name} was not restarted within {RESTART_WITHIN:.0f} s:\n{served.tail()}"
    # The child can show in the process table a moment before the parent's log line is written.
    logged_by = time.monotonic() + 5
    _wait_for_line(f"{name} (pid {old}) was killed by SIGKILL (exit code -9)", served, logged_by)
    _wait_for_line(f"{name} started (pid {new[0]})", served, logged_by)
    assert b"MEMORY_STORE_ACCESS=door" in _environ(new[0])
    time.sleep(2)
    assert alive(new[0]), f"the restarted {name} died:\n{served.tail()}"


@pytest.mark.slow
def test_sigterm_stops_every_child(tmp_path: Path) -> None:
    with memory_run(tmp_path, migrate=False) as served:
        roles = served.children()
        pids = [pid for role in ("web", "worker", "beat") for pid in roles[role]]
        assert len(pids) == 3, roles
        pids += list(children_of(roles["web"][0]))  # gunicorn's serving process
        assert served.stop() == 0, served.tail()
        assert [pid for pid in pids if alive(pid)] == []
        assert "SIGTERM received, stopping" in served.log()


@pytest.mark.slow
def test_the_web_server_dying_ends_the_command_with_its_exit_code(tmp_path: Path) -> None:
    with memory_run(tmp_path, migrate=False) as served:
        roles = served.children()
        os.kill(roles["web"][0], signal.SIGKILL)
        assert served.proc.wait(timeout=60) == 128 + signal.SIGKILL
        assert [pid for pid in roles["worker"] + roles["beat"] if alive(pid)] == []
        assert "web server (gunicorn) was killed by SIGKILL" in served.log()


def test_it_refuses_several_web_processes_on_embedded_stores(monkeypatch: Any) -> None:
    def no_start(self: Any) -> None:
        raise AssertionError(f"{self.name} was started")

    monkeypatch.setattr("memory.management.commands.memory_run.Child.start", no_start)
    with pytest.raises(CommandError, match="WEB_WORKERS=2: with the embedded stores"):
        call_command("memory_run", "--workers", "2")
