"""One candidate task, from walk to verified ``TaskSpec``: instantiate, run, derive, verbalise, verify.

A candidate that fails any stage is dropped with a short reason (``Dropped``), which the generator
counts; nothing half-built is ever returned.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Table

from composer.capabilities import capabilities_of, dependency_depth
from composer.catalog import Catalog
from composer.derive import Describe, derive
from composer.describe import Describer
from composer.distractors import Distractor, make_distractor
from composer.plan import Lit, Ref, field_value, step_refs
from composer.paraphrase import Complete, paraphrase
from composer.policy import Policy, add_signature, add_threshold
from composer.runner import Run, Runner
from composer.verbalise import Verbaliser
from composer.verify import judge
from composer.walk import Walk, WalkConfig, WalkFailed, Walker, WalkIndex
from mcp_services.tasks.spec import SCHEMA_VERSION, Counterfactual, SetupRecord, TaskSpec


@dataclass(frozen=True, slots=True)
class Shape:
    """What a candidate is asked to be (the walk and instantiation may not manage all of it)."""

    kind: str  # "act" or "ask"
    distractor: bool
    policy: bool
    target_len: int


class Dropped(Exception):
    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


@dataclass(slots=True)
class BuildContext:
    catalog: Catalog
    index: WalkIndex
    min_services: int
    max_calls: int
    distractor_services: int
    walk_attempts: int = 6
    paraphrase: Complete | None = None  # an LLM to rewrite instructions (None: templates only)


def _tables(catalog: Catalog, runner: Runner) -> dict[str, dict[str, Table]]:
    return {
        name: {t.name: t for t in store.metadata.sorted_tables if not t.name.startswith("_")}
        for name, store in runner.episode.stores.items()
    }


def walk_for(ctx: BuildContext, runner: Runner, shape: Shape, seed_key: str, failures: dict[str, int]) -> Walk:
    for attempt in range(ctx.walk_attempts):
        rng = random.Random(f"{seed_key}:walk:{attempt}")
        config = WalkConfig(
            kind=shape.kind,  # type: ignore[arg-type]
            target_len=shape.target_len,
            max_calls=ctx.max_calls,
            min_services=ctx.min_services,
        )
        try:
            return Walker(ctx.index, runner, rng, config).run()
        except WalkFailed as exc:
            failures[exc.reason] = failures.get(exc.reason, 0) + 1
    raise Dropped("walk-failed", f"no walk met the constraints in {ctx.walk_attempts} attempts")


def _distractor_steps(walk: Walk, catalog: Catalog) -> list[int]:
    """Steps worth imitating: items a later write acts on or the answer comes from, then the anchor."""
    targets: list[int] = []
    for j, spec in enumerate(walk.specs):
        tool = catalog.tool(spec.service, spec.tool)
        if not tool.is_write:
            continue
        for ref in step_refs(spec):
            source = catalog.tool(walk.specs[ref.step].service, walk.specs[ref.step].tool)
            if ref.field == source.key_field and not source.is_write and ref.step not in targets:
                targets.append(ref.step)
    if walk.answer is not None and walk.answer.step not in targets:
        targets.append(walk.answer.step)
    if 0 not in targets:
        targets.append(0)
    return [s for s in targets if catalog.tool(walk.specs[s].service, walk.specs[s].tool).result_kind != "object"]


def build_task(
    ctx: BuildContext,
    runner: Runner,
    shape: Shape,
    seed_key: str,
    walk_failures: dict[str, int],
) -> TaskSpec:
    catalog = ctx.catalog
    walk = walk_for(ctx, runner, shape, seed_key, walk_failures)
    rng = random.Random(f"{seed_key}:instantiate")
    base_descriptors = [list(n.descriptors) for n in walk.notes]

    # Near-miss distractors are inserted first: every later run sees them.
    runner.fresh()
    setup: list[SetupRecord] = []
    distractors: list[Distractor] = []
    if shape.distractor:
        for step in _distractor_steps(walk, catalog):
            made = make_distractor(catalog, runner, walk, step, rng, setup)
            if made is not None:
                distractors.append(made)
                note = walk.notes[step]
                if made.differs[0] not in [p for p, _ in note.descriptors]:
                    note.descriptors.append(made.differs)
                break

    specs = list(walk.specs)
    policy: Policy | None = None
    if shape.policy:
        made_policy = add_threshold(catalog, walk, rng) if rng.random() < 0.6 else None
        if made_policy is None:
            user = runner.world.user
            made_policy = add_signature(catalog, walk, rng, user.name, runner.world.home.name)
        if made_policy is not None:
            specs, policy = made_policy

    try:
        return _assemble(ctx, runner, walk, specs, setup, distractors, policy, seed_key, rng)
    except _DistractorUseless:
        # A near miss the checks cannot tell from the target (or the text cannot name) is no
        # distractor: build the task without it.
        for note, saved in zip(walk.notes, base_descriptors, strict=True):
            note.descriptors[:] = saved
        return _assemble(ctx, runner, walk, specs, [], [], policy, seed_key, rng)


class _DistractorUseless(Exception):
    pass


def _assemble(
    ctx: BuildContext,
    runner: Runner,
    walk: Walk,
    specs: list[Any],
    setup: list[SetupRecord],
    distractors: list[Distractor],
    policy: Policy | None,
    seed_key: str,
    rng: random.Random,
) -> TaskSpec:
    catalog = ctx.catalog
    runner.fresh(setup)
    run = runner.execute(specs)
    if not run.complete and policy is not None:
        specs, policy = list(walk.specs), None  # the rule's value is not one this write accepts
        runner.fresh(setup)
        run = runner.execute(specs)
    if not run.complete:
        if distractors:
            raise _DistractorUseless()
        raise Dropped("reference-failed", run.failure or "")
    diff = runner.diff()
    answer_value = field_value(run.items[walk.answer.step], walk.answer.field) if walk.answer else None

    counterfactuals: list[Counterfactual] = []
    cf_diffs = []
    for n, d in enumerate(distractors, 1):
        runner.fresh(setup)
        cf_run = runner.execute(specs, overrides={d.step: d.select_value})
        counterfactuals.append(
            Counterfactual(
                id=f"distractor-{n}",
                description=f"follows the near-miss {d.record.table} row {d.key} instead of the target",
                plan=cf_run.calls,
                answer=_answer_text(cf_run, walk.answer),
            )
        )
        cf_diffs.append(runner.diff())
    if policy is not None:
        runner.fresh(setup)
        ignored = list(specs)
        ignored[policy.step] = ignored[policy.step].with_arg(policy.param, policy.violating)
        cf_run = runner.execute(ignored)
        counterfactuals.append(
            Counterfactual(
                id="ignores-policy",
                description="does the same but ignores the house rule",
                plan=cf_run.calls,
                answer=_answer_text(cf_run, walk.answer),
            )
        )
        cf_diffs.append(runner.diff())

    describer = Describer(catalog, specs, walk.notes, run.items, walk.anchor, runner.world.currency)
    verbaliser = Verbaliser(catalog, describer, specs, random.Random(f"{seed_key}:words"), now=runner.world.now)
    stated = {" ".join(str(v).lower().split()) for v in describer.stated_values()}
    stated |= {" ".join(str(e.value).lower().split()) for spec in specs for _, e in spec.args if isinstance(e, Lit) and e.stated}
    world = runner.world
    stated |= {" ".join(v.lower().split()) for v in (world.home.name, world.user.name, world.user.email)}  # known to the user
    derived = derive(
        catalog,
        specs,
        run,
        diff,
        _tables(catalog, runner),
        Describe(
            step=verbaliser.step_summary,
            value=describer.value,
            distractor=verbaliser.distractor_summary,
            policy=verbaliser.policy_summary,
            answer=verbaliser.answer_summary,
        ),
        answer=walk.answer,
        answer_value=answer_value,
        distractors=distractors,
        policy=policy,
        stated_values=stated,
    )
    if walk.kind == "act" and not any(r.id.startswith("step-") for r in derived.rubric):
        raise Dropped("no-state-checks", "the writes left nothing a check can name")
    if derived.unchecked_writes:
        # Every requested change needs a check of its own, or leaving it out would still pass.
        raise Dropped("unchecked-write", f"step {derived.unchecked_writes[0] + 1} changes nothing a check can name")
    instruction = verbaliser.instruction(answer=walk.answer, policy=policy, distractors=distractors)
    missing = [s for s in instruction.stated if s.lower() not in instruction.text.lower()]
    if missing and distractors:
        raise _DistractorUseless()
    if missing:
        raise Dropped("anchor-lost", f"the instruction does not state {missing[0]!r}")
    text = instruction.text
    paraphrased: bool | None = None
    if ctx.paraphrase is not None:
        forbid = [str(f.value) for f in derived.flows if len(str(f.value)) >= 4]
        if answer_value is not None:
            forbid.append(str(answer_value))
        rewritten = paraphrase(text, instruction.stated, forbid, ctx.paraphrase)
        paraphrased = rewritten is not None
        text = rewritten or text

    services = sorted({s.service for s in specs})
    others = sorted(set(catalog.names) - set(services))
    distractor_services = sorted(rng.sample(others, min(ctx.distractor_services, len(others))))
    n_writes = sum(1 for s in specs if catalog.tool(s.service, s.tool).is_write)
    task = TaskSpec.build(
        schema_version=SCHEMA_VERSION,
        instruction=text,
        services=services,
        distractor_services=distractor_services,
        world_seed=runner.world_seed,
        setup=setup,
        plan=run.calls,
        checks=derived.checks,
        rubric=derived.rubric,
        answer=answer_value,
        capabilities=capabilities_of(catalog, specs, run, policy=policy, distractors=distractors, answer=walk.answer, stated=stated),
        stats={
            "kind": walk.kind,
            "n_calls": len(specs),
            "n_services": len(services),
            "n_writes": n_writes,
            "n_reads": len(specs) - n_writes,
            "n_setup": len(setup),
            "n_checks": len(derived.checks),
            "n_criteria": len(derived.rubric),
            "dependency_depth": dependency_depth(specs),
            "explored_calls": walk.explored,
            "policy": policy.kind if policy else None,
            **({"paraphrased": paraphrased} if paraphrased is not None else {}),
        },
        counterfactuals=counterfactuals,
    )
    problems = judge(task, (diff, []), cf_diffs)
    if problems and distractors and any(p.startswith("counterfactual distractor") for p in problems):
        raise _DistractorUseless()
    if problems:
        raise Dropped(_reason(problems[0]), problems[0])
    return task


def _answer_text(run: Run, answer: Ref | None) -> str | None:
    if answer is None or answer.step >= len(run.steps) or not run.steps[answer.step].ok:
        return None
    value = field_value(run.steps[answer.step].item, answer.field)
    if value is None:
        return None
    return f"The answer is {value:.2f}." if isinstance(value, float) else f"The answer is {value}."


def _reason(problem: str) -> str:
    if problem.startswith("counterfactual distractor"):
        return "distractor-not-detected"
    if problem.startswith("counterfactual ignores-policy"):
        return "policy-not-detected"
    if problem.startswith("criteria pass when nothing"):
        return "vacuous-criterion"
    if problem.startswith("the instruction gives away"):
        return "leak"
    if problem.startswith("reference plan fails"):
        return "reference-fails-checks"
    return "verification-failed"
