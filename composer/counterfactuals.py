"""Near misses and shortcuts a kept task must fail: each is a plan replayed on a fresh episode of the task.

Near misses follow the scenario: acting on a trap record instead of the target, and ignoring the rule
in the data (the default action a careless agent takes). Shortcuts are what a lazy agent does
whatever the task:

- ``empty-report``: every message goes to the right place and says "Thanks, this is handled.";
- ``list-answer``: the answer (or a message whose step names what it must not state) lists every candidate, the
  right one among them;
- ``first-match``: a search's first match instead of the record the request points at (only where
  that changes what the plan does next);
- ``claims-without-acting``: the last act a report tells of is skipped, the report is sent as written: the report's
  criterion must fail (it holds the checks of the acts it reports: ``composer.content.reported_acts``);
- ``wrong-outcome``: a report that states a decision states the other one: the report's criterion must fail.

``natural_report`` is the near miss a kept task must pass: every message names its records by another identifying
form than the reference's (the title for the number, the customer for the order).

Each near miss names the kind of criterion that must catch it (``target``): the trap's, the policy's,
the answer's; a shortcut must fail the task, whichever criterion catches it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcp_services.kernel.diff import StateDiff

from composer.catalog import Catalog
from mcp_services.tasks.spec import PlanStep
from mcp_services.tasks.surface import states

from composer.content import EMPTY_TEXT, facts_of, identifying_forms, other_figures, reported_acts, text_param
from composer.derive import slug
from composer.kinds import MESSAGE_INTENTS
from composer.plan import Composed, Lit, Ref, StepSpec, resolve, step_refs, text_of
from composer.runner import Run, Runner, StepRun, result_items
from composer.scenario import Scenario


class Unreachable(Exception):
    """A trap the step that should tell it apart never shows: the scenario cannot test it."""


@dataclass(frozen=True)
class NearMiss:
    id: str
    description: str
    run: Run
    diff: Mapping[str, StateDiff]
    answer: str | None
    target: str = ""  # the criterion that must catch it ("trap-1", "policy", "answer"); "": the task as a whole


def stated_answer(s: Scenario) -> str | None:
    """What an agent that followed a run would answer (the value the scenario's question asks for)."""
    if s.answer is None:
        return None
    return f"The answer is {s.answer.value}."


def _replay(runner: Runner, s: Scenario, reference: Run, reference_diff: Mapping[str, StateDiff], specs: Sequence[StepSpec],
            overrides: Mapping[int, object] | None = None) -> tuple[Run, dict[str, StateDiff]]:
    runner.fresh(s.setup)
    return runner.replay(s.specs, reference, reference_diff, specs, overrides)


def without(specs: Sequence[StepSpec], dropped: int) -> list[StepSpec]:
    """The plan without one step and the steps that need its result, later references renumbered."""
    from composer.plan import renumber_step

    gone = {dropped}
    for j, spec in enumerate(specs):
        if j > dropped and any(r.step in gone for r in step_refs(spec)):
            gone.add(j)
    mapping = {}
    kept: list[StepSpec] = []
    for j, spec in enumerate(specs):
        if j in gone:
            continue
        mapping[j] = len(kept)
        kept.append(renumber_step(spec, mapping))
    return kept


def near_misses(
    s: Scenario, runner: Runner, catalog: Catalog, reference: Run, reference_diff: Mapping[str, StateDiff]
) -> list[NearMiss]:
    found: list[NearMiss] = []
    answer = stated_answer(s)
    for n, trap in enumerate(s.traps, 1):
        if trap.step is None:
            continue
        run, diff = _replay(runner, s, reference, reference_diff, s.specs, {trap.step: trap.rec.key})
        if len(run.steps) <= trap.step or not run.steps[trap.step].ok:
            raise Unreachable(f"{trap.description}: the step that should tell it apart never shows it")
        found.append(NearMiss(f"trap-{n}", f"acts on {trap.description} instead", run, diff, answer, f"trap-{n}"))
    policy = s.policy
    if policy is not None:
        if policy.required:
            ignored = without(s.specs, policy.step)
        elif policy.violation:
            ignored = list(policy.violation)
        else:
            assert policy.param is not None and policy.violating is not None
            ignored = list(s.specs)
            ignored[policy.step] = ignored[policy.step].with_arg(policy.param, policy.violating)
        run, diff = _replay(runner, s, reference, reference_diff, ignored)
        found.append(NearMiss("ignores-policy", f"ignores the rule: {policy.rule}", run, diff, answer, "policy"))
    found += shortcuts(s, runner, catalog, reference, reference_diff)
    found += false_reports(s, runner, catalog, reference, reference_diff)
    return found


def report_steps(s: Scenario, catalog: Catalog) -> list[int]:
    """The message steps of the report stage that tell of acts (their criteria hold those acts' checks)."""
    found = []
    for j, spec in enumerate(s.specs):
        tool = catalog.tool(spec.service, spec.tool)
        message = tool.is_write and tool.intent in MESSAGE_INTENTS and text_param(spec) is not None
        if message and s.notes[j].told is None and reported_acts(s.notes, j, True):
            found.append(j)
    return found


def criterion_of(spec: StepSpec, j: int) -> str:
    """The rubric criterion of a write step (as ``composer.compose`` names it)."""
    return f"step-{j + 1}-{slug(spec.tool)}"


def false_reports(
    s: Scenario, runner: Runner, catalog: Catalog, reference: Run, reference_diff: Mapping[str, StateDiff]
) -> list[NearMiss]:
    """Reports that claim what is not true: the last act skipped with the report sent as written, and a report stating
    the other outcome of the decision. Each must fail the report's own criterion."""
    found: list[NearMiss] = []
    answer = stated_answer(s)
    reports = report_steps(s, catalog)
    if reports:
        last = reports[-1]
        acts = [k for k in reported_acts(s.notes, last, True) if catalog.tool(s.specs[k].service, s.specs[k].tool).is_write]
        if acts:
            skipped = acts[-1]
            calls = [c for k, c in enumerate(reference.calls) if k != skipped]
            run, diff = _replay_calls(runner, s, calls)
            found.append(NearMiss("claims-without-acting", f"skips step {skipped + 1} ({s.specs[skipped].tool}) and still sends the "
                                  "report as written", run, diff, answer, criterion_of(s.specs[last], last)))
    for j in reports:
        decided = next((f for f in s.notes[j].facts if f.kind == "decision" and isinstance(f.value, Lit)), None)
        param = text_param(s.specs[j])
        if decided is None or param is None:
            continue
        text = reference.calls[j].arguments.get(param)
        flipped = other_outcome(text, str(decided.value.value)) if isinstance(text, str) else None  # type: ignore[union-attr]
        if flipped is None:
            continue
        specs = list(s.specs)
        specs[j] = specs[j].with_arg(param, Lit(flipped))
        run, diff = _replay(runner, s, reference, reference_diff, specs)
        found.append(NearMiss("wrong-outcome", f"the report of step {j + 1} states the other decision", run, diff, answer,
                              criterion_of(s.specs[j], j)))
        break
    return found


#: How a report says each decision, and the words that say the other one instead.
_FLIPS: dict[str, tuple[tuple[str, str], ...]] = {
    "approve": ((r"\bapproved\b", "declined"), (r"\bapprove\b", "decline"), (r"\bgranted\b", "refused"),
                (r"\baccepted\b", "declined"), (r"\bGood news\b", "Sorry"), (r"\bgo ahead\b", "not go ahead")),
    "deny": ((r"\b(?:had|have) to (?:deny|reject|decline)\b", "approved"), (r",? ?(?:and )?sen[dt] (?:it|this) back to you", ""),
             (r"\b(?:not|n't) (?:be |been )?approved\b", "approved"), (r"\b(?:can ?not|can't|cannot|won't|will not|couldn't|could not|"
             r"unable to|not able to) approve\b", "can approve"), (r"\bdeclined\b", "approved"), (r"\bdenied\b", "approved"),
             (r"\brejected\b", "approved"), (r"\bdecline\b", "approve"), (r"\bdeny\b", "approve"), (r"\brefused\b", "granted")),
    "pending": ((r"\b(?:under review|pending|awaiting (?:\w+ )?(?:approval|review))\b", "approved"),
                (r"\bpassed (?:it |this )?on\b", "approved it"), (r"\bfor (?:\w+ )?approval\b", "approved")),
}
_OTHER = {"approve": "deny", "deny": "approve", "pending": "approve"}


def other_outcome(text: str, decision: str) -> str | None:
    """The report ``text`` stating the other decision ("approved" -> "declined"), or None where its words cannot be
    turned into a text that states the other decision and not this one."""
    flipped = text
    for pattern, words in _FLIPS.get(decision, ()):
        flipped = re.sub(pattern, words, flipped, flags=re.IGNORECASE)
    other = _OTHER.get(decision)
    if other is None or flipped == text or states(flipped, "decision", decision) or not states(flipped, "decision", other):
        return None
    return flipped


def natural_report(
    s: Scenario, runner: Runner, catalog: Catalog, reference: Run, reference_diff: Mapping[str, StateDiff]
) -> NearMiss | None:
    """The reference with every message naming its records by another identifying form than the reference's (the
    room's name for its id, the customer for their only order), or None where no message names a record that has one.
    A kept task must pass it: a correct report in other words is a correct report."""
    services = [spec.service for spec in s.specs]
    specs = list(s.specs)
    for j, (spec, note) in enumerate(zip(s.specs, s.notes, strict=True)):
        tool = catalog.tool(spec.service, spec.tool)
        param = text_param(spec)
        text = spec.arg(param) if param else None
        if not (tool.is_write and tool.intent in MESSAGE_INTENTS) or not isinstance(text, Composed) or param is None:
            continue
        other: dict[Ref, str] = {}
        for fact in facts_of(spec, note):
            made = isinstance(fact.value, Ref) and catalog.tool(s.specs[fact.value.step].service, s.specs[fact.value.step].tool).is_write
            # A record the plan made is named by what the agent's act gave it (the new ticket's id): that form stays.
            forms = identifying_forms(fact, reference.items, services) if isinstance(fact.value, Ref) and not made else []
            human = [f for f in forms if not _ID.match(f)]
            if forms and fact.kind in (None, "text"):
                other[fact.value] = (human or forms)[0]  # type: ignore[index]
        if not other:
            continue
        words = "".join(other[p] if isinstance(p, Ref) and p in other else p if isinstance(p, str) else text_of(resolve(p, reference.items))
                        for p in text.parts)
        specs[j] = spec.with_arg(param, Lit(words))
    if specs == list(s.specs):
        return None
    run, diff = _replay(runner, s, reference, reference_diff, specs)
    return NearMiss("natural-report", "every message names its records by another identifying form", run, diff, stated_answer(s))


#: An id as a service makes it (room_0003, evt_0071): a form people seldom say when the record has a name.
_ID = re.compile(r"^[a-z]+_\d+$")


def _replay_calls(runner: Runner, s: Scenario, calls: Sequence[PlanStep]) -> tuple[Run, dict[str, StateDiff]]:
    """Concrete calls run as written on a fresh episode (a failed one is skipped, as an agent would move on)."""
    runner.fresh(s.setup)
    steps = []
    for call in calls:
        result = runner.call(call.service, call.tool, dict(call.arguments))
        steps.append(StepRun(call, result.success, None if result.success else result.error_message))
    return Run(steps=steps), runner.diff()


def shortcuts(
    s: Scenario, runner: Runner, catalog: Catalog, reference: Run, reference_diff: Mapping[str, StateDiff]
) -> list[NearMiss]:
    found: list[NearMiss] = []
    answer = stated_answer(s)
    # A report with no content: every message in the right place, none of the facts.
    lazy = list(s.specs)
    changed = False
    for j, spec in enumerate(s.specs):
        tool = catalog.tool(spec.service, spec.tool)
        param = text_param(spec)
        if tool.is_write and tool.intent in MESSAGE_INTENTS and param is not None:
            lazy[j] = spec.with_arg(param, Lit(EMPTY_TEXT))
            changed = True
    if changed:
        run, diff = _replay(runner, s, reference, reference_diff, lazy)
        found.append(NearMiss("empty-report", "every message says only \"Thanks, this is handled.\"", run, diff, answer))
    # An answer that lists every candidate, the right one among them.
    others = list(dict.fromkeys([*s.answer.forbidden, *read_figures(s, catalog, reference)])) if s.answer is not None else []
    if s.answer is not None and others:
        values = [s.answer.value, *others]
        listing = "It is one of these: " + ", ".join(str(v) for v in values) + "."
        # The same work as the reference, only the answer differs: no replay needed.
        found.append(NearMiss("list-answer", "the answer lists every candidate", reference, reference_diff, listing, "answer"))
    # A message that lists every candidate (the right one among them) where the step names what it must not state.
    listed = list(s.specs)
    for j, (spec, note) in enumerate(zip(s.specs, s.notes, strict=True)):
        param = text_param(spec)
        text = spec.arg(param) if param else None
        others = [text_of(resolve(f.value, reference.items)) for f in note.unsaid]
        if note.unsaid and text is not None:
            parts = text.parts if isinstance(text, Composed) else (text_of(resolve(text, reference.items)),)
            listed[j] = spec.with_arg(param or "", Composed((*parts, " Other options: " + ", ".join(others) + ".")))
    if listed != list(s.specs):
        run, diff = _replay(runner, s, reference, reference_diff, listed)
        found.append(NearMiss("list-answer" if s.answer is None else "list-report", "a message lists every candidate",
                              run, diff, answer))
    # The first search match instead of the record the request points at, where that changes what the plan writes.
    needed = feeds_a_write(s.specs, catalog)
    for j, (spec, step) in enumerate(zip(s.specs, reference.steps, strict=True)):
        if spec.select_key is None or j not in needed:
            continue
        tool = catalog.tool(spec.service, spec.tool)
        items = result_items(tool, step.data)
        if len(items) < 2:
            continue
        first = items[0].get(spec.select_key)
        if first is None or first == spec.select_value:
            continue
        run, diff = _replay(runner, s, reference, reference_diff, s.specs, {j: first})
        if _writes(run, catalog) == _writes(reference, catalog):
            continue  # the first match leads to the same work: taking it is no shortcut
        found.append(NearMiss(f"first-match-{j + 1}", f"takes the first match of step {j + 1} ({spec.tool})", run, diff, answer))
    return found


def read_figures(s: Scenario, catalog: Catalog, reference: Run) -> list[Any]:
    """The other figures the reference run's reads showed, of the answer's kind (``content.other_figures``: each invoice's
    total, each ticket's count, each other date): an answer that states one of them beside the right figure lists
    figures instead of answering."""
    if s.answer is None:
        return []
    items = [item for spec, step in zip(s.specs, reference.steps, strict=False)
             if step.ok and not (tool := catalog.tool(spec.service, spec.tool)).is_write for item in result_items(tool, step.data)]
    return other_figures(s.answer.value, items)


def feeds_a_write(specs: Sequence[StepSpec], catalog: Catalog) -> set[int]:
    """The steps whose results a write needs, directly or through the reads between them."""
    needed: set[int] = set()
    for j in range(len(specs) - 1, -1, -1):
        if catalog.tool(specs[j].service, specs[j].tool).is_write or j in needed:
            needed |= {r.step for r in step_refs(specs[j])}
    return needed


def _writes(run: Run, catalog: Catalog) -> list[dict[str, object]]:
    return [c.model_dump() for c in run.calls if catalog.tool(c.service, c.tool).is_write]


__all__ = ["NearMiss", "Unreachable", "criterion_of", "false_reports", "natural_report", "near_misses", "other_outcome", "read_figures", "report_steps", "shortcuts",
           "stated_answer", "without"]
