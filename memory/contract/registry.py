"""The contract's one parameter registry.

Every parameter of both verbs is described here once: its name, the verbs that take it, its
shape, whether the memory can act on it now (``accepted``) or only takes its form
(``not_supported``, with the reason), and its label and help in Russian and English.
Validation and the ``params`` fates (``memory.contract.params``), the OpenAPI schema
(``memory.api.serializers``) and the playground's controls are all generated from it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from memory import ladder, model
from memory.contract import shapes
from memory.contract.shapes import Shape
from memory.contract.version import CONTRACT_VERSION
from memory.i18n import LANGS, Text
from memory.model.base import NOT_CONFIGURED

Verb = Literal["remember", "recall"]
VERBS: tuple[Verb, ...] = ("remember", "recall")
Status = Literal["accepted", "not_supported"]

__all__ = ["CONTRACT_VERSION", "PARAMS", "Capability", "Param", "param", "params_for"]


@dataclass(frozen=True)
class Capability:
    status: Status
    reason: Text | None = None


ACCEPTED = Capability("accepted")


def _always(capability: Capability) -> Callable[[Verb], Capability]:
    return lambda verb: capability


_NO_MODEL = Capability(
    "not_supported",
    Text(
        ru=NOT_CONFIGURED.ru + ", поэтому нити нет и продолжать нечего.",
        en=NOT_CONFIGURED.en + ", so there is no thread to continue.",
    ),
)


def _with_model(verb: Verb) -> Capability:
    return ACCEPTED if model.configured() else _NO_MODEL


@dataclass(frozen=True)
class Param:
    name: str
    verbs: tuple[Verb, ...]
    shape: Shape
    label: Text
    help: Text
    capability: Callable[[Verb], Capability] = _always(ACCEPTED)
    required: bool = False
    # A bad form of this parameter refuses the whole request (nothing is written) instead of
    # dropping the parameter: dropping it would change what the request means.
    refuses_whole: bool = False

    def status(self, verb: Verb) -> Capability:
        """What the memory can do with this parameter now (evaluated per request)."""
        return self.capability(verb)


PARAMS: tuple[Param, ...] = (
    Param(
        name="text",
        verbs=VERBS,
        shape=shapes.TEXT,
        required=True,
        label=Text(ru="Фраза", en="Phrase"),
        help=Text(
            ru="Что запомнить или что вспомнить — обычным текстом.",
            en="What to remember or what to recall, in plain text.",
        ),
    ),
    Param(
        name="depth",
        verbs=("recall",),
        shape=shapes.choice(ladder.DEPTH_WORDS),
        label=Text(ru="Глубина", en="Depth"),
        help=Text(
            ru="standard — таблицы, модель, граф; deep — ещё и поиск по смыслу; extreme — ещё "
            "и исследование. Ключ памяти несёт свой предел глубины.",
            en="standard — tables, model, graph; deep — adds search by meaning; extreme — adds "
            "research. A memory key carries its own depth limit.",
        ),
    ),
    Param(
        name="trace",
        verbs=VERBS,
        shape=shapes.FLAG,
        label=Text(ru="Цепочка поиска", en="Trace"),
        help=Text(
            ru="Вернуть ход поиска. Решает зовущий: только он знает, сколько места у него осталось.",
            en="Return the search chain. The caller decides: only it knows how much context it has left.",
        ),
    ),
    Param(
        name="thread",
        verbs=("remember",),
        shape=shapes.THREAD,
        label=Text(ru="Нить", en="Thread"),
        help=Text(
            ru="Идентификатор разговора с моделью из прошлого ответа: продолжить ту же нить дешевле.",
            en="The model conversation id from an earlier answer: continuing it is cheaper.",
        ),
        capability=_with_model,
    ),
    Param(
        name="deny",
        verbs=("remember",),
        shape=shapes.TEXT,
        label=Text(ru="Отрицание вывода", en="Denial of a conclusion"),
        help=Text(
            ru="Прогон (run из ответа recall), чей вывод архитектор отвергает, или нить модели "
            "(thread), из которой вывод пришёл; его слова — text («мой друг его на самом деле не "
            "видел»). С нитью слова уходят в тот же разговор с моделью. Вывод отменяется, факт "
            "остаётся, отвергнутая гипотеза хранится, и тот же вопрос её больше не предложит.",
            en="The run (the run of a recall answer) whose conclusion the architect rejects, or "
            "the model conversation (thread) it came from; their words are the text "
            '("my friend never actually met him"). With a thread, the words go into that '
            "conversation. The conclusion is revoked, the fact stays, the rejected hypothesis is "
            "kept, and the same question does not propose it again.",
        ),
    ),
    Param(
        name="said_at",
        verbs=("remember",),
        shape=shapes.MOMENT,
        label=Text(ru="Когда сказано", en="Said at"),
        help=Text(
            ru="Когда это было сказано, если не сейчас: для переноса прошлых разговоров (RFC 3339, "
            "например 2023-05-08T13:56:00Z). По нему заметка встаёт на своё место в разговоре, "
            "и вопрос, называющий день или месяц, находит сказанное тогда.",
            en="When this was said, if not now: for bringing in past conversations (RFC 3339, "
            "e.g. 2023-05-08T13:56:00Z). The note takes its place in its conversation by it, and "
            "a question naming a day or a month finds what was said then.",
        ),
    ),
    Param(
        name="scope",
        verbs=VERBS,
        shape=shapes.SCOPE_LIST,
        # A fact stored without the scope it was said with would be promoted to "unknown where
        # and when"; a question asked without its scope would be answered for everywhere.
        refuses_whole=True,
        label=Text(ru="Охват", en="Scope"),
        help=Text(
            ru="Список записей: календарь (date; start и end; deadline) или место (place). "
            "Пустой охват значит «неизвестно где и когда», а не «везде и всегда». Одна неверная "
            "запись отклоняет весь запрос (400 bad_scope), ничего не записано.",
            en="A list of records: calendar (date; start and end; deadline) or geo (place). "
            "An empty scope means 'unknown where and when', never 'everywhere, always'. One bad "
            "record refuses the whole request (400 bad_scope); nothing is written.",
        ),
    ),
    Param(
        name="create_table",
        verbs=("remember",),
        shape=shapes.SHORT_TEXT,
        label=Text(ru="Создать таблицу", en="Demand a table"),
        help=Text(
            ru="Потребовать таблицу с этим именем для сказанного; имя проходит функцию имён.",
            en="Demand a table with this name for what is said; the name passes the naming function.",
        ),
    ),
    Param(
        name="uploads",
        verbs=("remember",),
        shape=shapes.UPLOAD_LIST,
        label=Text(ru="Загрузки", en="Uploads"),
        help=Text(
            ru="Файлы: text, image, video, audio, document (HTML, PDF).",
            en="Files: text, image, video, audio, document (HTML, PDF).",
        ),
        capability=_always(
            Capability(
                "not_supported",
                Text(
                    ru="договор пока не принимает файлов: хранилище объектов есть, но приём загрузок не построен.",
                    en="the contract does not take files yet: the object store exists, but receiving uploads is not built.",
                ),
            )
        ),
    ),
    Param(
        name="lang",
        verbs=VERBS,
        shape=shapes.choice(LANGS),
        label=Text(ru="Язык ответа", en="Answer language"),
        help=Text(
            ru="Язык, на котором написан ответ; по умолчанию — договорённый.",
            en="The language the answer is written in; the agreed one by default.",
        ),
    ),
    Param(
        name="verdict",
        verbs=VERBS,
        shape=shapes.VERDICT,
        label=Text(ru="Вердикт о прошлом прогоне", en="Verdict on an earlier run"),
        help=Text(
            ru="confirm или reject для прогона run из прошлого ответа; пока вердикта нет, цикл "
            "не завершён.",
            en="confirm or reject for the run id of an earlier answer; until a verdict comes, "
            "that cycle is incomplete.",
        ),
    ),
    Param(
        name="previous_results",
        verbs=("recall",),
        shape=shapes.TEXT_LIST,
        label=Text(ru="Прежние результаты", en="Previous results"),
        help=Text(
            ru="Что зовущий уже получил: прогоны прежних recall (run из ответа) или элементы "
            "(«notes:<id>», «summaries:<id>», «objects:<id>»). Полученное не возвращается снова; "
            "уровни, что уже не нашли ответа на этот же вопрос, пропускаются; исследование, "
            "начатое названным прогоном, отдаёт свой ход или ответ.",
            en="What the caller already got: earlier recalls' runs (the run of an answer) or items "
            "(«notes:<id>», «summaries:<id>», «objects:<id>»). What it got is not returned again; "
            "the levels that already found no answer to the same question are skipped; a research "
            "a named run started gives its progress or its answer.",
        ),
    ),
    Param(
        name="wait",
        verbs=("recall",),
        shape=shapes.FLAG,
        label=Text(ru="Ждать исследования", en="Wait for research"),
        help=Text(
            ru="На глубине extreme ждать конца исследования (уровень 5), но не дольше предела "
            "RESEARCH_WAIT_SECONDS (120 с по умолчанию); без него ответ приходит сразу со "
            "статусом running.",
            en="At depth extreme, wait for the research (level 5) to end, but no longer than the "
            "bound RESEARCH_WAIT_SECONDS (120 s by default); without it the answer comes at once "
            "with the status running.",
        ),
    ),
)

_BY_NAME = {p.name: p for p in PARAMS}


def param(name: str) -> Param | None:
    return _BY_NAME.get(name)


def params_for(verb: Verb) -> tuple[Param, ...]:
    return tuple(p for p in PARAMS if verb in p.verbs)
