"""Near misses and shortcuts a kept task must fail: each is a plan replayed on a fresh episode of the task.

Near misses follow the scenario: acting on a trap record instead of the target, and ignoring the rule
in the data (the default action a careless agent takes). Shortcuts are what a lazy agent does
whatever the task:

- ``empty-report``: every message goes to the right place and says "Thanks, this is handled.";
- ``list-answer``: the answer (or a message whose step names what it must not state) lists every candidate, the
  right one among them;
- ``first-match``: a search's first match instead of the record the request points at (only where
  that changes what the plan does next).

Each near miss names the kind of criterion that must catch it (``target``): the trap's, the policy's,
the answer's; a shortcut must fail the task, whichever criterion catches it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mcp_services.kernel.diff import StateDiff

from composer.catalog import Catalog
from composer.content import EMPTY_TEXT, text_param
from composer.kinds import MESSAGE_INTENTS
from composer.plan import Composed, Lit, StepSpec, resolve, step_refs, text_of
from composer.runner import Run, Runner, result_items
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
    return found


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
    if s.answer is not None and s.answer.forbidden:
        values = [s.answer.value, *s.answer.forbidden]
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


def feeds_a_write(specs: Sequence[StepSpec], catalog: Catalog) -> set[int]:
    """The steps whose results a write needs, directly or through the reads between them."""
    needed: set[int] = set()
    for j in range(len(specs) - 1, -1, -1):
        if catalog.tool(specs[j].service, specs[j].tool).is_write or j in needed:
            needed |= {r.step for r in step_refs(specs[j])}
    return needed


def _writes(run: Run, catalog: Catalog) -> list[dict[str, object]]:
    return [c.model_dump() for c in run.calls if catalog.tool(c.service, c.tool).is_write]


__all__ = ["NearMiss", "Unreachable", "near_misses", "shortcuts", "stated_answer", "without"]
