"""One candidate task from a scenario: build it live, prove its references, run it, derive its checks, phrase it, verify it.

The archetype builds the scenario on the world (``composer.scenario``). Then, on a fresh episode with
the planted setup: every referring expression must pick out its record (``composer.resolve``); the
reference plan runs; a replay that follows each trap and one that ignores the policy give the
counterfactuals; the checks come from what the reference run changed (one criterion per requested
change, the natural information flows the archetype declared, the traps untouched, the policy
applied, nothing else changed); the request is phrased; and ``composer.verify.judge`` keeps the task
only if the reference passes, doing nothing fails and every counterfactual fails.

A candidate that fails any stage raises ``Dropped`` with a short reason that ``composer generate``
counts; nothing half-built is returned.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Table

from mcp_services.kernel.diff import StateDiff
from mcp_services.tasks.checks import (
    AnswerCheck,
    AnyOf,
    AnswerExcludes,
    Check,
    InfoFlow,
    NoCollateral,
    RowAbsent,
    RowExists,
    RowUnchanged,
)
from mcp_services.tasks.grading import RubricItem, grade
from mcp_services.tasks.spec import (
    CAPABILITIES,
    SCHEMA_VERSION,
    Counterfactual,
    RecordRef,
    Reference,
    ScenarioInfo,
    TaskSpec,
    TrapInfo,
)

from composer.catalog import Catalog
from composer.content import content_checks, facts_of, guessable, identifying_forms, reported_acts, text_param
from composer.counterfactuals import Unreachable, natural_report, near_misses, read_figures, stated_answer
from composer.kinds import MESSAGE_INTENTS
from composer.literal import literal_fails
from composer.derive import deleted_checks, met_by_other_steps, row_checks, slug
from composer.paraphrase import Complete, paraphrase
from composer.phrasing import instruction
from composer.plan import Composed, ListOf, Lit, StepSpec, field_value, refs_of, resolve, step_refs, text_of
from composer.resolve import relation_of, unresolved
from composer.runner import Run, Runner, StepRun
from composer.scenario import Archetype, Phrasing, Scenario, Skip
from composer.stages.acts import told_options
from composer.verify import judge
from composer.walk import extend


class Dropped(Exception):
    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


@dataclass(slots=True)
class ComposeSettings:
    catalog: Catalog
    distractor_services: int = 5
    paraphrase: Complete | None = None
    #: How many kept plans of this set call each tool so far (``service.tool``): a choice among equally good
    #: tools takes the less used first, so a set reaches every tool it can instead of the likeliest ones.
    usage: Counter[str] = field(default_factory=Counter)


def _norm(value: Any) -> str:
    return " ".join(str(value).lower().split())


def compose_task(
    settings: ComposeSettings, runner: Runner, archetype: Archetype, phrasing: Phrasing, seed_key: str
) -> TaskSpec:
    rng = random.Random(f"{seed_key}:scenario")
    runner.fresh()
    s = Scenario(settings.catalog, runner, rng, archetype, used=settings.usage)
    try:
        return _compose(settings, runner, archetype, phrasing, seed_key, s)
    except Dropped:
        for tool in s.intended:  # a tool whose tasks are dropped is not tried first again and again
            s.tried_in_vain(tool)
        raise


def _compose(
    settings: ComposeSettings, runner: Runner, archetype: Archetype, phrasing: Phrasing, seed_key: str, s: Scenario
) -> TaskSpec:
    catalog = settings.catalog
    try:
        archetype.build(s)
    except Skip as exc:
        raise Dropped("no-fit", f"{archetype.id}: {exc.reason}") from None
    if not s.specs:
        raise Dropped("no-fit", f"{archetype.id}: the scenario made no calls")
    walked = extend(s, random.Random(f"{seed_key}:walk"))
    decisions = s.decided()
    if not decisions:  # a task only the request decides teaches step-following
        raise Dropped("no-decision", f"{archetype.id}: nothing in the data decides any of the work")

    runner.fresh(s.setup)
    problems = unresolved(s)
    if problems:
        raise Dropped("ambiguous-reference", problems[0])
    references = [
        Reference(
            service=r.rec.service, table=r.rec.table, key=r.rec.key, text=r.text, relation=relation_of(s.view, r),
            where=dict(r.where), latest=r.latest,
        )
        for r in s.references
    ]

    run = runner.execute(s.specs)
    if not run.complete:
        raise Dropped("reference-failed", run.failure or "")
    diff = runner.diff()

    try:
        misses = near_misses(s, runner, catalog, run, diff)
    except Unreachable as exc:
        raise Dropped("trap-unreachable", str(exc)) from None

    natural = natural_report(s, runner, catalog, run, diff)
    checks, rubric, checked_messages = _derive(s, catalog, run, diff, runner.tables)
    if natural is not None:
        failing = [c for c, ok in grade(checks, rubric, natural.diff, natural.answer).criteria.items() if not ok]
        if failing:
            raise Dropped("near-miss-natural-report", f"a report naming its records in other forms fails {', '.join(failing)}")
    criteria = {item.id for item in rubric}
    counterfactuals = [
        Counterfactual(id=m.id, description=m.description, plan=m.run.calls, answer=m.answer,
                       criteria=[m.target] if m.target in criteria and m.id in _OWN_CRITERION else [])
        for m in misses
    ]
    cf_diffs = [m.diff for m in misses]
    stated = {_norm(a) for a in s.brief.anchors}
    text = instruction(
        s.brief, s.notes, phrasing, random.Random(f"{seed_key}:words"), now=s.world.now,
        question=s.answer.question if s.answer is not None else None,
    )
    asked = [*(resolve(f.value, run.items) for note in s.notes for f in note.facts if f.exact),
             *([s.answer.value] if s.answer is not None else [])]
    given = next((a for a in asked if guessable(a, [text])), None)
    if given is not None:
        raise Dropped("guessable-answer", f"the answer {given!r} is words of the request")
    missing = [a for a in s.brief.anchors if _norm(a) not in _norm(text)]
    if missing:
        raise Dropped("anchor-lost", f"the request does not state {missing[0]!r}")
    paraphrased: bool | None = None
    if settings.paraphrase is not None:
        forbid = [str(c.value) for c in checks if isinstance(c, InfoFlow) and len(str(c.value)) >= 4]
        if s.answer is not None:
            forbid.append(str(s.answer.value))
        rewritten = paraphrase(text, s.brief.anchors, forbid, settings.paraphrase)
        paraphrased = rewritten is not None
        text = rewritten or text

    services = sorted({spec.service for spec in s.specs} | {r.service for r in s.setup})
    others = sorted(set(catalog.names) - set(services))
    distractor_services = sorted(s.rng.sample(others, min(settings.distractor_services, len(others))))
    writes = [j for j, spec in enumerate(s.specs) if catalog.tool(spec.service, spec.tool).is_write]
    needed = [j for j, note in enumerate(s.notes) if note.needed]
    trigger = s.trigger
    fields = dict(
        schema_version=SCHEMA_VERSION,
        instruction=text,
        services=services,
        distractor_services=distractor_services,
        world_seed=runner.world_seed,
        world_shape=runner.shape,
        setup=s.setup,
        plan=run.calls,
        checks=checks,
        rubric=rubric,
        answer=s.answer.value if s.answer is not None else None,
        capabilities=_capabilities(s, catalog, run, stated),
        stats={
            "kind": "ask" if s.answer is not None else "act",
            "n_calls": len(needed),
            "n_services": len(services),
            "n_writes": len(writes),
            "n_reads": len([j for j in needed if j not in writes]),
            "n_setup": len(s.setup),
            "n_checks": len(checks),
            "n_criteria": len(rubric),
            "dependency_depth": dependency_depth(s.specs),
            "message_steps": sum(1 for spec in s.specs if catalog.tool(spec.service, spec.tool).intent in MESSAGE_INTENTS
                                 and catalog.tool(spec.service, spec.tool).is_write),
            "message_steps_checked": checked_messages,
            **({"natural_report": "passed"} if natural is not None else {}),
            "difficulty": _difficulty(s, catalog),
            "decisions": [d.as_stats() for d in decisions],
            **({"reasons": list(s.reasons)} if s.reasons else {}),
            **({"paraphrased": paraphrased} if paraphrased is not None else {}),
        },
        counterfactuals=counterfactuals,
        scenario=ScenarioInfo(
            archetype=archetype.id,
            family=archetype.family,
            phrasing=phrasing,
            trigger=RecordRef(service=trigger.service, table=trigger.table, key=trigger.key) if trigger else None,
            policy_in_data=bool(s.policy_documents),
            references=references,
            channel=s.arrival.channel if s.arrival is not None else None,
            stages=[note.stage for note in s.notes],
            walk=walked,
        ),
        traps=[TrapInfo(service=t.rec.service, table=t.rec.table, key=t.rec.key, kind=t.kind, description=t.description) for t in s.traps],
    )
    task = TaskSpec.build(**fields)
    problems = judge(task, (diff, []), cf_diffs)
    if problems:
        raise Dropped(_reason(problems[0]), problems[0])
    # The literal agent is measured, never required: its outcome is recorded for `composer stats`.
    fields["stats"] = {**task.stats, "literal_fails": literal_fails(s, runner, task, run, diff)}
    return TaskSpec.build(**fields)


#: Near misses that must fail the very criterion they aim at (not only the task as a whole).
_OWN_CRITERION = ("list-answer", "claims-without-acting", "wrong-outcome")


def _quoted(s: Scenario) -> str:
    return " ".join([s.brief.intro, s.brief.goal, *s.brief.constraints, *(n.say for n in s.notes)])


def _touched(step_changes: StateDiff, final: StateDiff) -> list[tuple[str, dict[str, Any]]]:
    rows: list[tuple[str, dict[str, Any]]] = []
    for table, t in sorted(step_changes.tables.items()):
        for key in sorted(t.added):
            if key in final.table(table).added:
                rows.append((table, final.table(table).added[key]))
        for key in sorted(t.changed):
            if key in final.table(table).changed:
                rows.append((table, final.table(table).changed[key].after))
    return rows


def _holds(value: Any, cell: Any) -> bool:
    if isinstance(cell, list):
        return any(_holds(value, c) for c in cell)
    if isinstance(value, str) and isinstance(cell, str):
        return value.lower() in cell.lower()
    if isinstance(value, (int, float)) and isinstance(cell, (int, float)) and not isinstance(cell, bool):
        return abs(float(value) - float(cell)) <= 0.005
    return False


class _Checks:
    def __init__(self) -> None:
        self.checks: list[Check] = []
        self.rubric: list[RubricItem] = []

    def add(self, check: Check) -> str:
        existing = {c.id for c in self.checks}
        base, n = check.id, 2
        while check.id in existing:
            check = check.model_copy(update={"id": f"{base}-{n}"})
            n += 1
        self.checks.append(check)
        return check.id

    def criterion(self, id: str, description: str, checks: Sequence[str]) -> None:  # noqa: A002
        self.rubric.append(RubricItem(id=id, description=description, checks=list(checks)))


def _difficulty(s: Scenario, catalog: Catalog) -> dict[str, int]:
    """How hard the task is to get right: records whose values the plan combines, the longest chain of lookups, the
    traps, the branches a rule decides, and the candidates an agent could confuse with the right one."""
    fed = {r.step for spec in s.specs for r in step_refs(spec)}
    reads = {j for j in fed if not catalog.tool(s.specs[j].service, s.specs[j].tool).is_write}
    return {
        "records_combined": len(reads),
        "hops": dependency_depth(s.specs),
        "traps": len(s.traps),
        "rule_branches": 1 if s.policy is not None else 0,
        "distractor_candidates": len(s.traps) + (len(s.answer.forbidden) if s.answer is not None else 0),
    }


def _derive(
    s: Scenario, catalog: Catalog, run: Run, diff: Mapping[str, StateDiff], tables: Mapping[str, Mapping[str, Table]]
) -> tuple[list[Check], list[RubricItem], int]:
    """The checks and rubric of a scenario's reference run, and how many of its message steps have content checks."""
    out = _Checks()
    checked_messages = 0
    incidental = s.kinds.incidental
    items = run.items
    created = {(table, key) for state in diff.values() for table, t in state.tables.items() for key in t.added}
    step_checks: dict[int, list[str]] = {}
    created_by: dict[tuple[int, str], tuple[RowExists, str]] = {}
    feeds = {r.step for spec in s.specs for r in step_refs(spec)}
    services = [spec.service for spec in s.specs]
    for j, (spec, step, note) in enumerate(zip(s.specs, run.steps, s.notes, strict=True)):
        if step.changes is None:
            continue
        # Details the request leaves to the agent (a refund reason, a note's wording) are not checked.
        optional = {
            name for name, expr in spec.args
            if (isinstance(expr, Lit) and not expr.stated) or (isinstance(expr, Composed) and not list(refs_of(expr)))
        }
        checked = StepSpec(spec.service, spec.tool, tuple((n, e) for n, e in spec.args if n not in optional))
        arguments = {n: v for n, v in step.call.arguments.items() if n not in optional}
        unstated = [v for n, v in step.call.arguments.items() if n in optional and isinstance(v, str)]
        found = row_checks(
            catalog, spec.service, checked, arguments, items, step.changes, diff[spec.service], tables[spec.service], created,
            unstated,
        )
        found = [c for c in found if c.table not in note.incidental]  # a tool default: allowed (no collateral), not demanded
        tool = catalog.tool(spec.service, spec.tool)
        if note.told is not None and tool.intent not in MESSAGE_INTENTS:
            continue  # opening a direct message to post in: the word itself is checked, by whichever channel it goes
        if note.facts or tool.intent in MESSAGE_INTENTS:
            found, carried, problems = content_checks(
                spec, note, step.call.arguments, items, found, _touched(step.changes, diff[spec.service]), created_by, services,
            )
            if problems:
                raise Dropped("report-misses-fact", problems[0])
            # A message tool that takes no text (a reminder the service words itself) has no content to check.
            if tool.intent in MESSAGE_INTENTS and text_param(spec) is not None and not carried and not any(
                _says_something(c) for c in found
            ):
                raise Dropped("message-unchecked", f"step {j + 1} ({spec.service}.{spec.tool}) writes a message no check reads")
            checked_messages += tool.intent in MESSAGE_INTENTS
        else:
            carried = []
        # Judged with what the message must state: two messages to one person differ by their facts.
        if found and met_by_other_steps(found, spec.service, step.changes, diff):
            raise Dropped("unchecked-write", f"step {j + 1} ({spec.service}.{spec.tool}) leaves rows other steps' rows already match")
        found = [_by_what_changed(check, tables[spec.service]) for check in found]
        if note.told is not None and found:
            # A word to a colleague: by email or in a chat with them, whichever the agent uses.
            ids = [out.add(AnyOf(id=f"{spec.service}-told-{slug(note.told.split('@')[0])}",
                                 description=f"{note.told} is told, by email or in chat",
                                 options=[[*found, *carried], *told_options(s, note.told, found, carried)]))]
        else:
            ids = [out.add(check) for check in found] + [out.add(check) for check in carried]
        ids += [out.add(check) for check in deleted_checks(spec.service, step.changes)
                if check.key in diff[spec.service].table(check.table).deleted]
        _remember_created(created_by, j, step, found)
        if note.accept:
            _accept_alternatives(out, ids, note.accept, arguments)
        ids += _member_checks(out, spec, arguments, step.changes, diff[spec.service], optional)
        if not ids and j in feeds:
            continue  # a means to a later step (opening a direct message to post in it): checked through that step
        if not ids:
            raise Dropped("unchecked-write", f"step {j + 1} ({spec.service}.{spec.tool}) changes nothing a check can name")
        step_checks[j] = ids
        # A report is credited only for what is true: its criterion holds the checks of the acts it reports.
        told = [c for k in reported_acts(s.notes, j, tool.intent in MESSAGE_INTENTS) for c in step_checks.get(k, ())]
        out.criterion(f"step-{j + 1}-{slug(spec.tool)}", _cap(note.say), list(dict.fromkeys([*ids, *told])))
        # A record a message names has other forms than this literal: its content check reads it in any of them.
        named = {f.value for f in facts_of(spec, note) if tool.intent in MESSAGE_INTENTS and identifying_forms(f, items, services)}
        for ref, noun in (note.mentions if note.told is None else ()):  # a word to a colleague: its any-of check holds it
            value = field_value(items[ref.step], ref.field)
            if value is None or (carried and (ref.step, ref.field) in created_by) or ref in named:
                continue  # a value of a record the plan made is checked through the agent's own record, never this literal
            for table, row in _touched(step.changes, diff[spec.service]):
                column = next((c for c, cell in row.items() if _holds(value, cell)), None)
                if column is None:
                    continue
                source = s.specs[ref.step]
                fid = out.add(
                    InfoFlow(
                        id=f"flow-{slug(ref.field)}-to-{spec.service}",
                        description=f"{source.service}.{source.tool} -> {spec.service}.{table}.{column}",
                        value=value if isinstance(value, (str, int, float)) else str(value),
                        source_service=source.service,
                        source_tool=source.tool,
                        service=spec.service,
                        table=table,
                        column=column,
                    )
                )
                out.criterion(f"flow-{len(out.rubric) + 1}", f"{_cap(noun)} goes where it is needed ({spec.service} {table})", [fid])
                break
    positives = [ids[0] for ids in step_checks.values()]
    anchor = positives[0] if positives else None

    if s.answer is not None:
        value = s.answer.value
        aid = out.add(
            AnswerCheck(
                id="answer",
                description="The final answer states the value asked for",
                expected=value,
                match="number" if isinstance(value, (int, float)) and not isinstance(value, bool) else "contains",
            )
        )
        ids = [aid]
        # Beside the right figure, no other: not a candidate, nor any amount of the records the reference run read.
        others = list(dict.fromkeys([*s.answer.forbidden, *read_figures(s, catalog, run)]))
        if others:
            ids.append(out.add(AnswerExcludes(id="answer-only", description="The answer names no other candidate", values=others)))
        out.criterion("answer", f"Answers: {s.answer.question}", ids)
        anchor = anchor or aid

    for n, trap in enumerate(s.traps, 1):
        tid = out.add(
            RowUnchanged(id=f"trap-{n}-untouched", description=f"{trap.description} stays as it was", service=trap.rec.service,
                         table=trap.rec.table, key=trap.rec.key, incidental=incidental.get(trap.rec.service, {}).get(trap.rec.table, []))
        )
        positive = _positive_after(s, trap.step, step_checks) or anchor
        if positive is not None:
            out.criterion(f"trap-{n}", f"Leaves {trap.description} alone", [tid, positive])

    if s.policy is not None:
        if s.policy.required:
            pids = step_checks.get(s.policy.step, [])
            if not pids:
                raise Dropped("policy-unchecked", f"the step the rule {s.policy.rule!r} asks for has no check")
        elif s.policy.absent is not None:
            service, table, match = s.policy.absent
            positive = step_checks.get(s.policy.step, [None])[0]
            if positive is None:
                raise Dropped("policy-unchecked", f"the step the rule {s.policy.rule!r} asks for has no check")
            pids = [out.add(RowAbsent(id="policy-forbids", description=s.policy.description, service=service, table=table, match=match)), positive]
        else:
            pid = _policy_check(s, run, diff, out)
            if pid is None:
                raise Dropped("policy-unchecked", f"the rule {s.policy.rule!r} left nothing a check can name")
            pids = [pid]
        out.criterion("policy", f"Follows the rule in the data: {s.policy.rule}", pids)

    people = correspondents(s)
    recipients = {service: tables for service, tables in s.kinds.recipients.items() if s.has(service)} if people else {}
    collateral = NoCollateral(
        id="no-collateral",
        description="Nothing changed beyond what the task needs",
        incidental={service: tables for service, tables in incidental.items() if service in diff},
        changed_keys={
            service: {table: sorted(set(t.changed) | set(t.deleted)) for table, t in state.tables.items() if t.changed or t.deleted}
            for service, state in diff.items()
            if any(t.changed or t.deleted for t in state.tables.values())
        },
        added_counts={},
        correspondents=people if recipients else [],
        recipients=recipients,
    )
    # The reference's own messages to them are implied writes too: the budget counts only the rest.
    collateral = collateral.model_copy(update={"added_counts": _budget(diff, sum(1 for note in s.notes if note.told is not None),
                                                                       collateral)})
    cid = out.add(collateral)
    if anchor is not None:
        out.criterion("no-collateral", "Changes nothing the task does not ask for", [cid, anchor])
    return out.checks, out.rubric, checked_messages


#: The rows a word to a colleague may add by the channel the reference did not use (a new direct message, its two
#: members and the post): an agent that picks the other channel adds those instead. (An email to them is a message to
#: a correspondent: never collateral.)
_TOLD_ROWS = {"chat": {"messages": 1, "channels": 1, "channel_members": 2}}


def correspondents(s: Scenario) -> list[str]:
    """The people the work is for, by address and number: whoever asked (and the colleague who passed it on), and
    whoever the plan tells. A message to one of them is a write the request implies (docs/composer.md, "Collateral")."""
    found: list[str] = []
    trigger = s.arrival
    if trigger is not None:
        for person in {trigger.person.email: trigger.person, trigger.sender.email: trigger.sender}.values():
            found += [person.email, person.phone]
    found += [note.told for note in s.notes if note.told is not None]
    return sorted({p for p in found if p})


def _budget(diff: Mapping[str, StateDiff], told: int, collateral: NoCollateral) -> dict[str, dict[str, int]]:
    """How many rows each table may gain beyond the messages to the people the work is for: what else the reference
    added, plus room for each word to a colleague sent by the other channel."""
    free = {service: collateral.implied(service, state) for service, state in diff.items()}
    out = {service: {table: n for table, t in state.tables.items() if (n := len([k for k in t.added if (table, k) not in free[service]]))}
           for service, state in diff.items()}
    for _ in range(told):
        for service, tables in _TOLD_ROWS.items():
            if service in diff:
                for table, rows in tables.items():
                    out.setdefault(service, {})[table] = out.get(service, {}).get(table, 0) + rows
    return {service: tables for service, tables in out.items() if tables}


def _says_something(check: RowExists) -> bool:
    """Whether a row check reads a message's text (a fact it states, or a looked-up value inside it)."""
    return any(isinstance(want, dict) and next(iter(want), "") in ("$states", "$icontains", "$names") for want in check.match.values())


def _by_what_changed(check: RowExists, tables: Mapping[str, Any]) -> RowExists:
    """A check on a row the plan made and a later step changed (the meeting it booked, then invited Wendy to),
    matched by what changed and never by the id the reference run gave the row: the agent's run may number
    its records otherwise (a first meeting booked by mistake and deleted)."""
    if check.change != "added" or not check.id.endswith("-changed"):
        return check
    keys = {column.name for column in tables[check.table].primary_key.columns}
    match = {column: value for column, value in check.match.items() if column not in keys}
    return check.model_copy(update={"match": match}) if match else check


def _remember_created(created_by: dict[tuple[int, str], tuple[RowExists, str]], j: int, step: StepRun, found: Sequence[RowExists]) -> None:
    """The record a write step created: later messages that state its values are checked through it."""
    item = step.item or {}
    added = [c for c in found if c.change == "added"]
    if not added or step.changes is None:
        return
    key = str(item.get("id", ""))
    for check in added:
        row = step.changes.table(check.table).added.get(key) if key else None
        if row is None:
            continue
        for name, value in item.items():
            # A value the record stores (not one derived for results: that one the check cannot follow).
            column = name if name in row and row[name] == value else None
            if column is not None and value not in (None, "", [], {}):
                created_by.setdefault((j, name), (check, column))
        return


def _accept_alternatives(out: _Checks, ids: Sequence[str], accept: Mapping[str, list[Any]], arguments: Mapping[str, Any]) -> None:
    """Where the request allows several right values (any free room), the step's checks accept each of them."""
    for n, check in enumerate(out.checks):
        if check.id not in ids or not isinstance(check, RowExists):
            continue
        match = dict(check.match)
        for param, options in accept.items():
            chosen = arguments.get(param)
            for column, want in match.items():
                if want == chosen or (isinstance(want, dict) and chosen in (want.get("$icontains"), want.get("$names"))):
                    match[column] = {"$in": list(options)}
        out.checks[n] = check.model_copy(update={"match": match})


def _member_checks(
    out: _Checks, spec: StepSpec, arguments: Mapping[str, Any], changes: StateDiff, final: StateDiff, optional: set[str]
) -> list[str]:
    """One check per person of a list argument (attendees, invitees, signers) that lands in a row of their own.

    A list written into one cell is checked as a set by the row checks; a list that becomes one row per
    member (an attendee each) needs each member checked, or inviting the wrong people would pass. A member
    given as a person (``{"name", "email"}``) is checked by their email, even alone in the list; a member the
    request leaves to the agent (a ``Lit`` not stated, inside a ``ListOf``: a countersigner kept from the
    original routing) is allowed, never demanded.
    """
    ids: list[str] = []
    rows = _touched(changes, final)
    for name, value in arguments.items():
        if name in optional or not isinstance(value, list):
            continue
        expr = spec.arg(name)
        parts: Sequence[Any] = expr.items if isinstance(expr, ListOf) and len(expr.items) == len(value) else [None] * len(value)
        for member, part in zip(value, parts, strict=True):
            if isinstance(part, Lit) and not part.stated:
                continue
            wanted = member.get("email") if isinstance(member, dict) else member
            if not isinstance(wanted, str) or (isinstance(member, str) and len(value) < 2):
                continue  # a single address is matched by the row checks already
            for table, row in rows:
                column = next((c for c, cell in row.items() if isinstance(cell, str) and cell.casefold() == wanted.casefold()), None)
                if column is not None:
                    ids.append(out.add(RowExists(id=f"{spec.service}-{slug(table)}-{slug(name)}", service=spec.service,
                                                 table=table, change="added_or_changed", match={column: wanted})))
                    break
    return ids


def _positive_after(s: Scenario, step: int | None, step_checks: Mapping[int, list[str]]) -> str | None:
    """A check on a write that acts on the item picked at ``step`` (or on anything after it)."""
    if step is None:
        return None
    for j in sorted(step_checks):
        if any(r.step == step for _, e in s.specs[j].args for r in refs_of(e)):
            return step_checks[j][0]
    return None


def _policy_check(s: Scenario, run: Run, diff: Mapping[str, StateDiff], out: _Checks) -> str | None:
    policy = s.policy
    assert policy is not None and policy.param is not None
    step = run.steps[policy.step]
    spec = s.specs[policy.step]
    if step.changes is None:
        return None
    compliant = step.call.arguments.get(policy.param)
    wanted: Any
    if isinstance(compliant, list):
        wanted = {"$includes": compliant} if compliant else None
    elif isinstance(compliant, str) and not _is_choice(s, spec, policy.param):
        wanted = {"$icontains": compliant}  # text the rule puts in (a note, a label): it may sit in more words
    else:
        wanted = compliant
    if wanted is None:
        return None
    for table, row in _touched(step.changes, diff[spec.service]):
        for column, cell in row.items():
            if (isinstance(compliant, list) and isinstance(cell, list) and all(_holds(c, cell) for c in compliant)) or (
                not isinstance(compliant, list) and compliant is not None and _holds(compliant, cell)
            ):
                return out.add(
                    RowExists(id="policy-rule", description=policy.description, service=spec.service, table=table, match={column: wanted})
                )
    return None


def _is_choice(s: Scenario, spec: StepSpec, param: str) -> bool:
    """Whether ``param`` takes one of fixed values (a priority, a status): the rule's value must be the value, not inside
    another ("high" is not "highest")."""
    tool = s.catalog.tool(spec.service, spec.tool)
    return any(p.name == param and bool(p.enum) for p in tool.params)


def _capabilities(s: Scenario, catalog: Catalog, run: Run, stated: set[str]) -> list[str]:
    found = set()
    if dependency_depth(s.specs) >= 3:
        found.add("sequential-dependency")
    for spec in s.specs:
        if not catalog.tool(spec.service, spec.tool).is_write:
            continue
        for _, expr in spec.args:
            for ref in refs_of(expr):
                if s.specs[ref.step].service != spec.service:
                    value = field_value(run.items[ref.step], ref.field)
                    if _norm(text_of(value)) not in stated:
                        found.add("cross-service-constraint")
    if s.traps:
        found.add("distractor-avoidance")
    if s.answer is not None:
        found.add("information-question")
    if s.policy is not None:
        found.add("policy")
    return [c for c in CAPABILITIES if c in found]


def dependency_depth(specs: Sequence[StepSpec]) -> int:
    """Calls in the longest chain where each one needs a value the previous one found."""
    depth: list[int] = []
    for spec in specs:
        parents = [depth[r.step] for r in step_refs(spec) if r.step < len(depth)]
        depth.append(1 + max(parents, default=0))
    return max(depth, default=0)


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _reason(problem: str) -> str:
    if problem.startswith("counterfactual trap"):
        return "trap-not-detected"
    if problem.startswith("counterfactual ignores-policy"):
        return "policy-not-detected"
    for near in ("claims-without-acting", "wrong-outcome"):
        if problem.startswith(f"counterfactual {near}"):
            return f"near-miss-{near}"
    for shortcut in ("empty-report", "list-answer", "list-report", "first-match"):
        if problem.startswith(f"counterfactual {shortcut}"):
            return f"shortcut-{shortcut}"
    if problem.startswith("criteria pass when nothing"):
        return "vacuous-criterion"
    if problem.startswith("the instruction gives away"):
        return "leak"
    if problem.startswith("reference plan fails"):
        return "reference-fails-checks"
    return "verification-failed"


__all__ = ["ComposeSettings", "Dropped", "compose_task"]
