"""Requests reach the tools a set would otherwise miss: the less used tool first, records with no name of their
own, values a tool's phrase has no place for."""

from __future__ import annotations

from collections import Counter

from composer.catalog import load_catalog
from composer.compose import ComposeSettings, Dropped, compose_task
from composer.generate import GenerateConfig, generate
from composer.runner import Runner
from composer.scenario import ARCHETYPES
from composer.verify import verify_task
from mcp_services.tasks.spec import TaskSpec


def _writes(task: TaskSpec) -> set[str]:
    catalog = load_catalog(task.services)
    return {f"{s.service}.{s.tool}" for s in task.plan if catalog.tool(s.service, s.tool).is_write}


def test_a_candidate_takes_a_less_used_tool_when_the_set_already_has_its_first_choice() -> None:
    catalog = load_catalog(("crm", "helpdesk", "chat", "mailbox"))
    runner = Runner(catalog, 0)
    archetype = ARCHETYPES["request-update"]
    # The first candidate kept both ways (one in which nothing in the data decides is dropped: no-decision).
    for key in (f"reach:{i}" for i in range(40)):
        try:
            first = compose_task(ComposeSettings(catalog=catalog), runner, archetype, "goal", key)
            (tool,) = _writes(first) - {"chat.reply_in_thread", "chat.add_reaction", "mailbox.reply_to_message"}
            worn = ComposeSettings(catalog=catalog, usage=Counter({tool: 50}))
            second = compose_task(worn, runner, archetype, "goal", key)
            break
        except Dropped:
            continue
    else:
        raise AssertionError("no request-update candidate in which the data decides something")
    assert tool not in _writes(second)
    assert verify_task(second, runner) == []


def test_a_scheduled_text_is_named_by_its_state_and_whom_it_goes_to() -> None:
    tasks, _ = generate(GenerateConfig(n=6, seed=0, services=("sms", "chat"), archetypes=("request-cancel",)))
    cancelled = [t for t in tasks if "sms.cancel_message" in _writes(t)]
    assert cancelled
    for task in cancelled:
        words = task.instruction + " ".join(str(r.row) for r in task.setup)  # goal phrasing: the words are the trigger's
        assert "the scheduled message to +" in words, task.id


def test_a_value_the_tool_s_phrase_has_no_place_for_is_stated_by_its_field() -> None:
    tasks, _ = generate(GenerateConfig(n=6, seed=0, services=("commerce", "chat"), archetypes=("request-cancel",)))
    orders = [t for t in tasks if "commerce.cancel_order" in _writes(t)]
    assert orders
    catalog = load_catalog(("commerce", "chat"))
    runner = Runner(catalog, orders[0].world_seed)
    for task in orders:
        reason = next(s.arguments["reason"] for s in task.plan if s.tool == "cancel_order")
        words = task.instruction + " ".join(str(r.row) for r in task.setup)  # goal phrasing: the words are the trigger's
        assert f"its reason set to {reason}" in words, task.id
        assert verify_task(task, runner) == []


def test_guided_steps_start_with_the_verb_as_english_spells_its_ing_form() -> None:
    from composer.phrasing import gerund

    spelled = {v: gerund(v) for v in ("submit", "ship", "get", "open", "edit", "share", "email", "cancel", "tag")}
    assert spelled == {"submit": "submitting", "ship": "shipping", "get": "getting", "open": "opening", "edit": "editing",
                       "share": "sharing", "email": "emailing", "cancel": "canceling", "tag": "tagging"}


def test_a_new_contact_s_address_is_stated_once() -> None:
    tasks, _ = generate(GenerateConfig(n=8, seed=0, services=("recruiting", "chat", "mailbox"), archetypes=("request-create",)))
    added = [t for t in tasks if "recruiting.add_candidate" in _writes(t)]
    assert added
    for task in added:
        email = next(s.arguments["email"] for s in task.plan if s.tool == "add_candidate")
        texts = [task.instruction, *(str(r.row) for r in task.setup)]  # the request, and the message it arrived in
        assert any(email in text for text in texts) and all(text.count(email) <= 1 for text in texts), task.id


def test_stages_never_write_through_a_simulated_tool_and_read_only_where_it_answers_from_state() -> None:
    from composer.kinds import kinds_of
    from mcp_services.registry import catalog_names

    names = tuple(n for n in ("stripe", "slack", "jira", "box", "gitlab") if n in catalog_names())
    catalog = load_catalog(names)
    simulated = [t for t in catalog.tools.values() if t.simulated]
    assert any(t.is_write for t in simulated) and any(not t.is_write and not t.state_backed for t in simulated)
    kinds = kinds_of(catalog)
    writers = {t.key for k in kinds for t in k.writers} | {t.key for k in kinds for t in kinds.creators(k.service, k.entity)}
    readers = {t.key for k in kinds for t in k.readers}
    assert not any(t.key in writers for t in simulated if t.is_write)
    assert not any(t.key in readers for t in simulated if not t.state_backed)
    assert any(t.key in readers for t in simulated if t.state_backed)  # a state-backed read is a stage's to use


def test_a_lookup_through_parents_ends_where_a_row_names_itself_as_its_parent() -> None:
    import random

    from composer.scenario import Scenario, Skip
    from composer.stages.lookup import lookup
    from mcp_services.registry import catalog_names

    if "docusign" not in catalog_names():
        return
    catalog = load_catalog(("docusign",))
    runner = Runner(catalog, 0)
    runner.fresh()
    s = Scenario(catalog, runner, random.Random(0), ARCHETYPES["request-update"])
    table = s.runtime("docusign", "recipient").table.name
    store = runner.episode.stores["docusign"]
    with store.transaction() as tx:  # each recipient names itself as its parent
        tx.conn.execute(f"UPDATE {table} SET recipient_id = id")
    recipients = s.records("docusign", "recipient")
    assert recipients and all(r.get("recipient_id") == r.key for r in recipients)
    for rec in recipients[:3]:
        try:
            lookup(s, rec, {"name": str(rec.get("name") or "")}, say="find the recipient")
        except Skip:
            pass  # not findable is a fine answer; recursing without end is not


def test_no_check_names_a_record_the_plan_made_by_the_id_the_reference_run_gave_it() -> None:
    # Played by hand: "invite Wendy to the meeting" was checked on the meeting with id mtg_0044, the id the
    # reference's own booking got; an agent that books a meeting twice (and cancels one) numbers it otherwise.
    from mcp_services.tasks.checks import AnyOf, RowExists

    # (files: the follow-ups that change the ticket come from a procedure written down in the shared drive)
    tasks, _ = generate(GenerateConfig(n=12, seed=0, services=("helpdesk", "mailbox", "crm", "chat", "tasks", "calendar", "files"),
                                       archetypes=("email-to-ticket",)))

    def rows(checks: list[object]) -> list[RowExists]:
        found: list[RowExists] = []
        for check in checks:
            if isinstance(check, RowExists):
                found.append(check)
            elif isinstance(check, AnyOf):
                found += rows([c for option in check.options for c in option])
        return found

    later = [c for t in tasks for c in rows(list(t.checks)) if c.change == "added" and c.id.endswith("-changed")]
    assert later  # a ticket the plan opened that a follow-up changed (tagged, assigned)
    assert not any("id" in c.match for c in later)


def test_a_question_names_its_record_once_and_never_comes_from_the_person_it_names() -> None:
    # Seen at seed 3318: Donna Peters asked about the recipient "Donna Peters" of an envelope, whose long name the
    # request then said a second time.
    tasks, _ = generate(GenerateConfig(n=40, seed=3318, archetypes=("request-question",)))
    assert tasks
    for task in tasks:
        asker = task.instruction.split(" asked in ")[0].split(" emailed ")[0].split(" texted ")[0]
        if any(d["kind"] == "figure" for d in task.stats["decisions"]):  # a figure of a person's, company's or parent's records
            about = task.instruction.split(" with a question about ", 1)[1].rsplit(" in ", 1)[0].split(" in ")[0]
            assert about and asker not in about, task.id
            continue
        reference = task.scenario.references[-1].text  # type: ignore[union-attr]
        assert task.instruction.count(reference) == 1, task.id
        assert asker not in reference, task.id


def test_a_question_that_finds_nothing_in_a_kind_tries_other_kinds_next_time(monkeypatch: object) -> None:
    import random

    import pytest

    from composer.archetypes import questions
    from composer.scenario import Scenario, Skip

    catalog = load_catalog(("crm", "helpdesk", "chat", "mailbox"))
    runner = Runner(catalog, 0)
    usage: Counter[str] = Counter()
    tried: list[str] = []

    def never(s: Scenario, group: questions._Group, fig: object, known: object) -> None:
        tried.append(group.kind.key)
        return None

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    monkeypatch.setattr(questions, "_read_covering", never)
    first_tries: list[list[str]] = []
    for i in range(2):
        tried.clear()
        s = Scenario(catalog, runner, random.Random(f"q:{i}"), ARCHETYPES["request-question"], used=usage)
        with pytest.raises(Skip):
            questions._figure_question(s)
        first_tries.append(list(dict.fromkeys(tried)))
    # Every kind the first question tried in vain counts as used: the second one starts with the others.
    again = [kind in first_tries[0] for kind in first_tries[1]]
    assert first_tries[0] and not again[0] and again == sorted(again)  # the untried kinds first, then the others


def test_a_phrase_with_an_article_before_its_record_takes_the_referring_expression_without_it() -> None:
    from dataclasses import replace

    from composer.phrases import phrase

    catalog = load_catalog(("marketing",))
    tool = next(t for t in catalog.tools.values() if t.intent == "send")
    param = next(p.name for p in tool.params if p.required)
    sending = replace(tool, phrases=(f"send a {{{param}}}",))
    assert phrase(sending, {param: 'the campaign "Spring launch"'}) == 'send the campaign "Spring launch"'
    assert phrase(replace(tool, phrases=(f"schedule an {{{param}}} now",)), {param: "Ana's campaign"}) == "schedule Ana's campaign now"


def test_a_phrase_drops_a_three_word_noun_before_a_referring_expression() -> None:
    from dataclasses import replace

    from composer.phrases import phrase

    tool = next(t for t in load_catalog(("marketing",)).tools.values() if t.intent == "send")
    param = next(p.name for p in tool.params if p.required)
    denying = replace(tool, phrases=(f"deny the workspace invite request {{{param}}}",))
    assert phrase(denying, {param: 'the invite request "Monitors"'}) == 'deny the invite request "Monitors"'


def test_a_requested_time_range_ends_after_it_starts() -> None:
    import random
    from dataclasses import replace

    from composer.archetypes.requests import Choice, _Plan
    from composer.catalog import Param
    from composer.kinds import kinds_of
    from composer.scenario import Scenario

    catalog = load_catalog(("calendar", "chat"))
    runner = Runner(catalog, 0)
    kind = next(k for k in kinds_of(catalog) if k.service == "calendar")
    tool = next(t for t in catalog.tools.values() if t.service == "calendar" and t.is_write)
    ranged = replace(tool, params=(Param("start", True, "datetime", "string"), Param("end_date", True, "date", "string")))
    for seed in range(20):
        s = Scenario(catalog, runner, random.Random(seed), ARCHETYPES["request-create"])
        plan = _Plan(s, Choice(ranged, kind, {}), None, runner.world.team[0], new_name="Planning")
        plan.choose()
        assert plan.concrete()["start"][:10] < plan.concrete()["end_date"], plan.concrete()


def test_a_request_asked_with_would_you_mind_uses_the_ing_form() -> None:
    from composer.archetypes.requests import _OPENERS

    assert "Would you mind {doing}?" in _OPENERS and not any("if you" in o for o in _OPENERS)


def test_a_generated_api_s_camel_case_placeholder_is_filled_or_the_phrase_is_not_used() -> None:
    from dataclasses import replace

    from composer.phrases import phrase

    tool = next(t for t in load_catalog(("marketing",)).tools.values() if t.intent == "send")
    grouped = replace(tool, phrases=("update the group {GroupId}",))
    assert phrase(grouped, {"GroupId": 'the group "Engineering"'}) == 'update the group "Engineering"'
    assert phrase(grouped, {}) is None  # never "update the group {GroupId}" in a request


def test_a_sentence_stored_as_a_label_is_not_a_name_a_colleague_quotes() -> None:
    from composer.archetypes.requests import _reads_as_name

    assert _reads_as_name("Vendor comparison") and _reads_as_name("Refund for order #1083")
    assert not _reads_as_name("Customer asked for an updated quote with volume pricing.")
    assert _reads_as_name("Re: Duplicate charge for invoice INV-0005") and _reads_as_name("All-hands: March")  # subjects
    assert not _reads_as_name("Internal note: confirm the billing address first.")
    assert not _reads_as_name("Renewal approved; send the contract for signature")


def test_a_detail_left_to_the_agent_is_checked_as_given_not_as_the_reference_worded_it() -> None:
    from composer.verify import run_plan

    tasks, report = generate(GenerateConfig(n=3, seed=0, services=("esign", "mailbox", "chat"), archetypes=("request-cancel",)))
    assert tasks, report.summary()
    catalog = load_catalog(tasks[0].services + tasks[0].distractor_services)
    runner = Runner(catalog, tasks[0].world_seed)
    voided = [t for t in tasks if any(s.tool == "void_envelope" for s in t.plan)]  # (a false reason voids nothing)
    assert voided
    for task in voided:
        voiding = next(s for s in task.plan if s.tool == "void_envelope")

        def with_reason(reason: str | None) -> bool:
            plan = [s if s is not voiding else s.model_copy(update={"arguments": {**s.arguments, "reason": reason}}) for s in task.plan]
            if reason is None:  # the envelope left as it was
                plan = [s for s in task.plan if s is not voiding]
            runner.fresh(task.setup)
            run_plan(runner.call, plan, stop=False)
            return task.grade(runner.diff(), None).passed

        assert with_reason(str(voiding.arguments["reason"]))
        assert with_reason("The customer changed their mind, so we will not need it."), task.id  # the agent's own words
        assert not with_reason(None)
