"""A colleague's request gives a reason that lives in the data (a message from whoever knows, or the records a new one
would duplicate), never a stock sentence; where the data contradicts it, the right work is to change nothing and say
why; a request to set up something new always has a premise the data decides."""

from __future__ import annotations

import pytest

from composer.catalog import Catalog, load_catalog
from composer.generate import GenerateConfig, GenerateReport, generate
from composer.runner import Runner
from composer.scenario import ARCHETYPES
from composer.stats import format_stats, task_stats
from composer.verify import reference_answer, run_plan
from mcp_services.tasks.spec import TaskSpec

#: The generic requests (the questions are another workflow's).
REQUESTS = tuple(sorted(a for a in ARCHETYPES if a.startswith("request-") and a != "request-question"))
#: The stock reasons requests used to give, which nothing in the data bore out.
STOCK = (
    "They are about the same thing", "We agreed on a change this morning", "It was signed off in the team meeting",
    "Finance confirmed", "It is out of date now", "Nobody uses it any more.", "We are pulling these together",
    "It helps the team find these later", "Things have moved on since it was last updated", "This is done now",
    "It needs another look, unfortunately", "They have the context on this one", "I am out for the rest of the week",
    "They should be in the loop on this", "They moved to another team.", "They need it for the meeting tomorrow",
    "It is not going ahead any more.", "We need a little more time", "Everyone has signed it off",
    "Everything on it has been checked", "So the next person has the context", "Just so it is written down somewhere",
    "I have been through it and it is fine", "It does not meet what we agreed", "The payment came in this morning.",
    "It is packed and ready to go.", "The customer is waiting on it.", "It is easier to follow them together",
)


@pytest.fixture(scope="module")
def library() -> Catalog:
    return load_catalog()


@pytest.fixture(scope="module")
def requested(library: Catalog) -> tuple[list[TaskSpec], GenerateReport]:
    return generate(GenerateConfig(n=100, seed=4, archetypes=REQUESTS), library)


def _ask(task: TaskSpec) -> str:
    """The text of the message that asks (the trigger the task's setup plants)."""
    trigger = task.scenario.trigger if task.scenario is not None else None
    assert trigger is not None
    row = next(r.row for r in task.setup if r.service == trigger.service and str(r.row.get("id")) == trigger.key)
    return str(row.get("body") or row.get("text") or "")


def _false_reason(task: TaskSpec) -> bool:
    return any(d["kind"] == "premise" and d["default"] is False and "still needs" not in d["what"]
               for d in task.stats["decisions"])


def test_no_request_gives_a_stock_reason_and_every_reason_lives_in_the_data(
    requested: tuple[list[TaskSpec], GenerateReport]
) -> None:
    tasks, _ = requested
    assert len(tasks) >= 60
    for task in tasks:
        ask = _ask(task)
        assert not [s for s in STOCK if s in ask], (task.id, ask)  # as sentences of their own, capitalised
        assert task.stats.get("reasons"), (task.id, ask)  # where each reason lives: a message, or records of a kind
    stats = task_stats(tasks)
    assert stats["requests"]["grounded_reason"] == 1.0
    assert "generic requests       " in format_stats(stats) and "reason in the data 100%" in format_stats(stats)


def test_a_reason_cited_from_a_message_names_the_record_in_that_message(requested: tuple[list[TaskSpec], GenerateReport]) -> None:
    tasks, _ = requested
    cited = [t for t in tasks if any(r in ("mailbox.message", "chat.message") for r in t.stats.get("reasons", []))]
    assert cited
    for task in cited:
        messages = [str(r.row.get("body") or r.row.get("text") or "") for r in task.setup
                    if (r.service, r.table) in (("mailbox", "messages"), ("chat", "messages"))]
        refs = [ref.where for ref in (task.scenario.references if task.scenario else [])]
        labels = [str(v) for where in refs for k, v in where.items()
                  if isinstance(v, str) and len(v) > 3 and k not in ("from_email", "user_id.email", "channel_id")]
        ask = _ask(task)
        assert any(label in m for label in labels for m in messages if m != ask), task.id


def test_a_false_reason_is_a_premise_graded_by_nothing_changed_and_a_reply_that_says_why() -> None:
    # Claims the data bears out or not (reviewed, checks out, paid out, complete), on a few services: a tool is false
    # only once kept plans call it (breadth), which a small set of services reaches quickly.
    library = load_catalog(("kb", "expenses", "accounting", "mailbox", "chat", "files"))
    tasks, _ = generate(GenerateConfig(n=40, seed=0, services=library.names, archetypes=(
        "request-publish", "request-approve", "request-pay", "request-submit", "request-send")), library)
    false = [t for t in tasks if _false_reason(t)]
    assert len(false) >= 2
    runner = Runner(library, false[0].world_seed)
    for task in false:
        assert task.stats["literal_fails"], task.id  # doing as asked without reading the message fails
        writes = [s for s in task.plan if library.tool(s.service, s.tool).is_write]
        assert all(library.tool(s.service, s.tool).intent in ("reply", "send", "tag", "post") for s in writes), \
            (task.id, [s.tool for s in writes])
        runner.fresh(task.setup)
        run_plan(runner.call, task.plan, stop=False)
        assert task.grade(runner.diff(), reference_answer(task)).passed, task.id
        # Changing nothing but not saying why fails: the reply must give the reason the data gives.
        reply = writes[-1] if not task.scenario or not task.scenario.walk else next(
            s for s in task.plan if "I have not changed anything" in str(s.arguments))
        silent = reply.model_copy(update={"arguments": {k: ("I have not changed anything." if "not changed" in str(v) else v)
                                                        for k, v in reply.arguments.items()}})
        runner.fresh(task.setup)
        run_plan(runner.call, [silent if s is reply else s for s in task.plan], stop=False)
        assert not task.grade(runner.diff(), reference_answer(task)).passed, task.id
        # Changing nothing but saying it was done fails, however well it names the record and who said otherwise.
        claimed = reply.model_copy(update={"arguments": {k: _claimed(v) for k, v in reply.arguments.items()}})
        runner.fresh(task.setup)
        run_plan(runner.call, [claimed if s is reply else s for s in task.plan], stop=False)
        assert not task.grade(runner.diff(), reference_answer(task)).passed, (task.id, claimed.arguments)


def _claimed(value: object) -> object:
    """The reference's reply made to claim the work done (its names kept): "Done: I took care of it. I saw to X: ..."."""
    if not isinstance(value, str) or "I have not changed anything" not in value:
        return value
    return value.replace("I have not changed anything.", "Done: I took care of it.").replace(" I left ", " I saw to ").replace(
        " as it is:", ", as you asked. Note:")


def test_every_request_to_set_up_something_new_has_a_premise_and_a_duplicate_is_not_made() -> None:
    library = load_catalog(("files", "forms", "tasks", "mailbox", "chat"))
    tasks, report = generate(GenerateConfig(n=30, seed=0, services=library.names, archetypes=("request-create",)), library)
    assert len(tasks) >= 20, report.summary()
    for task in tasks:
        assert any(d["kind"] == "premise" for d in task.stats["decisions"]), task.id
    duplicates = [t for t in tasks if _false_reason(t)]
    assert duplicates
    runner = Runner(library, duplicates[0].world_seed)
    for task in duplicates:
        assert "exists already" in task.instruction or "yet" in _ask(task)
        creates = [s for s in task.plan if library.tool(s.service, s.tool).intent in ("create", "schedule", "draft")]
        assert not creates, task.id
        assert task.stats["literal_fails"], task.id
        runner.fresh(task.setup)
        run_plan(runner.call, task.plan, stop=False)
        assert task.grade(runner.diff(), reference_answer(task)).passed, task.id


def test_a_document_added_to_a_record_is_a_file_that_exists(library: Catalog) -> None:
    tasks, _ = generate(GenerateConfig(n=12, seed=1, archetypes=("request-link",)), library)
    added = [(t, s) for t in tasks for s in t.plan if s.tool == "add_document"]
    assert added
    for task, step in added:
        envelope = next(p.arguments for p in task.plan if p.tool == "list_envelopes" and "query" in p.arguments
                        and p.arguments.get("query") in task.instruction)
        assert step.arguments["name"].split(" - ")[0] in str(envelope["query"]), (step.arguments, envelope)
        files = Runner(library, task.world_seed)
        files.fresh(task.setup)
        found = files.call("files", "search_files", {"name": step.arguments["name"]})
        assert found.success and any(i["name"] == step.arguments["name"] for i in found.data["items"]), step.arguments


def test_the_goal_says_the_outcome_and_the_reason_not_a_change_in_a_system(
    requested: tuple[list[TaskSpec], GenerateReport]
) -> None:
    tasks, _ = requested
    goals = [t for t in tasks if t.scenario is not None and t.scenario.phrasing == "goal"]
    assert goals
    for task in goals:
        assert " wants you to " in task.instruction and ", since " in task.instruction, task.instruction
        assert "Do what" not in task.instruction and "a change in" not in task.instruction
