"""The stand's own words, in both languages (the parameters' words come from the registry)."""

from memory.i18n import Text

UI = {
    "title": Text(ru="Стенд памяти", en="Memory playground"),
    "lead": Text(
        ru="Прямая линия к памяти: без агента в цепочке, ответ — как есть.",
        en="A direct line to the memory: no agent in between, the answer as it is.",
    ),
    "phrase": Text(ru="Фраза", en="Phrase"),
    "outbox": Text(ru="Очередь записи в хранилища", en="Store write queue"),
    "outbox_state": Text(
        ru="в очереди: {queued} · отложено как безнадёжные: {dead}",
        en="queued: {queued} · set aside as dead: {dead}",
    ),
    "remember": Text(ru="Запомнить", en="Remember"),
    "recall": Text(ru="Вспомнить", en="Recall"),
    "advanced": Text(ru="Расширенные параметры", en="Advanced parameters"),
    "nothing_set": Text(ru="ничего не выставлено", en="nothing set"),
    "set": Text(ru="выставлено", en="set"),
    "add_record": Text(ru="Добавить запись", en="Add record"),
    "remove": Text(ru="Убрать", en="Remove"),
    "card": Text(ru="Карточка", en="Card"),
    "empty_card": Text(
        ru="пустая карточка охватом не является и не отправляется",
        en="an empty card is not a scope and is not sent",
    ),
    "date": Text(ru="день", en="date"),
    "start": Text(ru="с", en="from"),
    "end": Text(ru="по", en="to"),
    "deadline": Text(ru="срок", en="deadline"),
    "place": Text(ru="ключ места", en="place key"),
    "none": Text(ru="—", en="—"),
    "confirm": Text(ru="подтвердить", en="confirm"),
    "reject": Text(ru="отвергнуть", en="reject"),
    "verdict_on": Text(ru="Вердикт о прогоне", en="Verdict on run"),
    "verdict_next": Text(ru="уедет со следующим запросом", en="travels with the next request"),
    "use_thread": Text(ru="взять нить из ответа", en="use the answer's thread"),
    "uploads_inactive": Text(ru="Кнопка неактивна:", en="Inactive:"),
    "answer": Text(ru="Ответ", en="Answer"),
    "raw": Text(ru="Сырой JSON", en="Raw JSON"),
    "copy": Text(ru="Копировать", en="Copy"),
    "kind": Text(ru="Род ответа", en="Kind"),
    "found": Text(ru="Найдено", en="Found"),
    "yes": Text(ru="да", en="yes"),
    "no": Text(ru="нет", en="no"),
    "depth_used": Text(ru="Глубина по факту", en="Depth used"),
    "report": Text(ru="Отчёт по хранилищам", en="Per-store report"),
    "fates": Text(ru="Судьбы параметров", en="Parameter fates"),
    "seconds": Text(ru="Секунды", en="Seconds"),
    "thread": Text(ru="Нить", en="Thread"),
    "run": Text(ru="Прогон", en="Run"),
    "trace": Text(ru="Цепочка поиска", en="Trace"),
    "research": Text(ru="Исследование (уровень 5)", en="Research (level 5)"),
    "research_entities": Text(ru="сущности", en="entities"),
    "research_terms": Text(ru="термины", en="terms"),
    "sent": Text(ru="Отправлено", en="Sent"),
    "left_out": Text(
        ru="Не отправлено с этим глаголом (параметр другого глагола):",
        en="Not sent with this verb (a parameter of the other verb):",
    ),
    "store": Text(ru="хранилище", en="store"),
    "source": Text(ru="источник", en="source"),
    "status": Text(ru="итог", en="status"),
    "returned": Text(ru="вернуло", en="returned"),
    "note": Text(ru="примечание", en="note"),
    "probes": Text(ru="Зонды хранилищ", en="Store probes"),
    "probes_lead": Text(
        ru="Граф и векторы по отдельности, через внутреннюю дверь; секрет машины добавляет сервер.",
        en="The graph and the vectors one by one, through the internal door; the server adds the machine secret.",
    ),
    "probe_graph": Text(ru="Спросить граф", en="Ask the graph"),
    "probe_vectors": Text(ru="Спросить векторы", en="Ask the vectors"),
    "working": Text(ru="Работаю…", en="Working…"),
    "instruction": Text(ru="Инструкция памяти", en="The memory's instruction"),
    "instruction_lead": Text(
        ru="Возврат MEMORY-AGENT.md к эталону. Навыки, данные, таблицы и замеры не трогаются.",
        en="Return MEMORY-AGENT.md to the reference. Skills, data, tables and measurements stay.",
    ),
    "difference": Text(
        ru="Отличие от эталона: +{added} / −{removed} строк, {chars} знаков",
        en="Difference from the reference: +{added} / −{removed} lines, {chars} characters",
    ),
    "same": Text(ru="Инструкция совпадает с эталоном.", en="The instruction equals the reference."),
    "show_diff": Text(ru="Показать различие целиком", en="Show the full difference"),
    "reset": Text(ru="Вернуть к эталону", en="Reset to the reference"),
    "reset_check": Text(ru="Да, вернуть инструкцию к эталону", en="Yes, reset the instruction"),
    "reset_confirm_needed": Text(
        ru="Подтвердите возврат флажком.", en="Confirm the reset with the checkbox."
    ),
    "progress": Text(ru="Ход прогона", en="Run progress"),
    "skills": Text(ru="Навыки", en="Skills"),
    "passport": Text(ru="Паспорт", en="Passport"),
    "deny_conclusion": Text(ru="Отвергнуть этот вывод", en="Deny this conclusion"),
    "deny_words": Text(
        ru="Ваши слова: что в этом выводе неверно (затем «Запомнить»)",
        en="Your words: what is wrong with this conclusion (then Remember)",
    ),
    "passport_lead": Text(
        ru="Как память построена и почему — PASSPORT.md этой сборки, как он лежит в репозитории.",
        en="How the memory is built and why — this build's PASSPORT.md as it is in the "
        "repository (written in Russian, the owner's language).",
    ),
    "skills_lead": Text(
        ru="Навык — гипотеза: действующая версия, кандидат рядом, теневая проверка на настоящих "
        "запросах (доля {rate}, не больше {cap} ходов модели в день; сегодня потрачено {today}). "
        "Кандидат повышается, если на {min} и больше случаях с вердиктом выиграл на {margin} и не "
        "дороже; иначе после {max} случаев удаляется с записью почему. Ответ кандидата не "
        "возвращается никому.",
        en="A skill is a hypothesis: the active version, a candidate beside it, a shadow test on "
        "real requests (share {rate}, at most {cap} model turns a day; {today} spent today). A "
        "candidate is promoted when, over {min} or more judged cases, it wins by {margin} and "
        "costs no more; otherwise it is deleted after {max} cases, with why. A candidate's answer "
        "is returned to no one.",
    ),
    "active_version": Text(ru="Действующая версия", en="Active version"),
    "candidate": Text(ru="Кандидат", en="Candidate"),
    "no_candidate": Text(ru="кандидата нет", en="no candidate"),
    "misses": Text(ru="Промахи по фактам", en="Misses from the facts"),
    "no_misses": Text(ru="повторяющегося промаха нет", en="no repeated miss"),
    "not_replayable": Text(
        ru="этот навык не идёт в отдельный ход модели, который можно повторить в тени",
        en="this skill runs in no model call of its own that a shadow run could replay",
    ),
    "figures": Text(ru="Замеры рядом", en="Figures side by side"),
    "confirmed": Text(ru="подтверждено", en="confirmed"),
    "rejected": Text(ru="отвергнуто", en="rejected"),
    "pending": Text(ru="без вердикта", en="pending"),
    "turns": Text(ru="ходов модели на случай", en="model turns a case"),
    "model_seconds": Text(ru="секунд модели на случай", en="model seconds a case"),
    "cases": Text(
        ru="случаев: {cases} · готово: {done} · с вердиктом: {judged} · не удалось: {failed}",
        en="cases: {cases} · done: {done} · judged: {judged} · failed: {failed}",
    ),
    "history": Text(ru="История", en="History"),
    "proposed": Text(ru="Предложено агентом", en="Proposed by the agent"),
    "proposed_lead": Text(
        ru="Новый навык или новые строки инструкции, которые предложила модель: кандидаты, "
        "проверяемые в тени на настоящих запросах по тем же правилам; становятся действующими "
        "только по вердиктам и цене.",
        en="A new skill or new instruction lines the model proposed: candidates, tested in the "
        "shadow on real requests by the same rules; they become active only by verdicts and cost.",
    ),
    "none_proposed": Text(ru="предложений нет", en="nothing proposed"),
    "new_skill": Text(
        ru="новый навык, читается рядом с {beside}", en="a new skill, read beside {beside}"
    ),
    "instruction_lines": Text(
        ru="новые строки инструкции (MEMORY-AGENT.md)",
        en="new instruction lines (MEMORY-AGENT.md)",
    ),
    "decided": Text(ru="Кандидаты прежде", en="Earlier candidates"),
    "write_candidate": Text(ru="Записать кандидата", en="Write a candidate"),
    "kill_candidate": Text(ru="Снять кандидата", en="Kill the candidate"),
    "reason": Text(ru="почему", en="why"),
    "text": Text(ru="текст", en="text"),
    "staff_only": Text(ru="Править может только персонал.", en="Only staff may edit."),
    "sign_out": Text(ru="Выйти", en="Sign out"),
}

# A skill candidate's status, as the skills page words it.
CANDIDATE_STATUS = {
    "open": Text(ru="измеряется", en="being measured"),
    "promoted": Text(ru="повышен", en="promoted"),
    "deleted": Text(ru="удалён", en="deleted"),
    "killed": Text(ru="снят персоналом", en="killed by staff"),
    "replaced": Text(ru="заменён новым текстом", en="replaced by a new text"),
}
