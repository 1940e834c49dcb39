"""The commerce, shipping and esign archetypes: kept, solvable by their reference, failed by wrong solutions, fair to right ones."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from composer.archetypes import commerce as commerce_archetypes
from composer.catalog import Catalog, load_catalog
from composer.generate import GenerateConfig, GenerateReport, generate
from composer.runner import Runner
from composer.scenario import ARCHETYPES
from mcp_services.tasks.spec import PlanStep, TaskSpec
from tests.composer.archetype_checks import (
    assert_every_archetype_kept,
    assert_every_write_is_needed,
    assert_reference_passes_and_counterfactuals_fail,
    changed,
    passes,
    step_of,
    tasks_of,
)

SERVICES = ("commerce", "shipping", "esign", "mailbox", "chat", "files")
IDS = tuple(a.id for a in ARCHETYPES.values() if a.build.__module__ == commerce_archetypes.__name__)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(SERVICES)


@pytest.fixture(scope="module")
def generated(catalog: Catalog) -> tuple[list[TaskSpec], GenerateReport]:
    return generate(GenerateConfig(n=2 * len(IDS), seed=0, services=SERVICES, archetypes=IDS), catalog)


def _of(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport], archetype: str
) -> tuple[Runner, list[TaskSpec]]:
    """A runner for the set's world and the tasks of one archetype (at least one)."""
    tasks = [t for t in generated[0] if t.scenario is not None and t.scenario.archetype == archetype]
    assert tasks, archetype
    return Runner(catalog, tasks[0].world_seed), tasks




def test_each_service_serves_at_least_two_archetypes() -> None:
    assert len(IDS) >= 6
    uses = Counter(s for a in IDS for s in ARCHETYPES[a].services)
    assert all(uses[s] >= 2 for s in ("commerce", "shipping")) and uses["esign"] >= 3, uses


def test_generation_keeps_the_candidates_of_every_archetype(generated: tuple[list[TaskSpec], GenerateReport]) -> None:
    assert_every_archetype_kept(generated, IDS)
    tasks = generated[0]
    assert any(t.traps for t in tasks)
    assert any(t.scenario is not None and t.scenario.policy_in_data for t in tasks)
    assert all(t.scenario is not None and t.scenario.trigger is not None for t in tasks)


def test_every_reference_solution_passes_and_every_counterfactual_fails(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    assert_reference_passes_and_counterfactuals_fail(catalog, generated[0])


def test_leaving_out_any_write_fails(catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]) -> None:
    assert_every_write_is_needed(catalog, generated[0])


def test_a_refund_where_the_delivery_policy_says_escalate_fails(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    runner, parcels = _of(catalog, generated, "parcel-exception")
    for task in parcels:
        if any(s.tool == "refund_order" for s in task.plan):
            # Passing it to the manager instead of refunding a small order leaves the customer without their money.
            assert not passes(task, runner, [s for s in task.plan if s.tool != "refund_order"]), task.id
        else:
            cf = next(c for c in task.counterfactuals if c.id == "ignores-policy")
            refund = [s for s in cf.plan if s.tool == "refund_order"]
            assert refund and not passes(task, runner, [*task.plan, *refund]), task.id


def test_a_goodwill_code_of_the_wrong_size_fails(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    runner, goodwill = _of(catalog, generated, "goodwill-discount")
    for task in goodwill:
        value = step_of(task, "create_discount_code").arguments["value"]
        assert not passes(task, runner, changed(task, "create_discount_code", value=value + 5)), task.id


def test_a_goodwill_code_the_agent_names_itself_passes_when_the_reply_gives_that_code(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    """Regression: the reply was checked for the reference's literal code (SORRY1027), so ROLLINS-GOODWILL20 scored 0.6."""
    runner, goodwill = _of(catalog, generated, "goodwill-discount")
    for task in goodwill:
        code = step_of(task, "create_discount_code").arguments["code"]
        assert code not in json.dumps([c.model_dump() for c in task.checks]), task.id
        own = [PlanStep.model_validate(json.loads(json.dumps(s.model_dump()).replace(code, "ROLLINS-GOODWILL20"))) for s in task.plan]
        assert passes(task, runner, own), task.id
        # The agent's own code in the reply, not another one: a reply naming the reference's code for a different code fails.
        mixed = [s if s.tool != "create_discount_code" else own[i] for i, s in enumerate(task.plan)]
        assert not passes(task, runner, mixed), task.id


def test_the_address_fix_must_reach_the_shipment_too(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    runner, fixes = _of(catalog, generated, "order-address-fix")
    for task in fixes:
        address = step_of(task, "update_order").arguments["shipping_address"]
        assert address in json.dumps([r.row for r in task.setup])  # the new address is in the customer's message
        assert address not in task.instruction or task.scenario is not None and task.scenario.phrasing == "guided"
        assert not passes(task, runner, [s for s in task.plan if s.tool != "update_shipment"]), task.id


def _signers(step: PlanStep) -> list[str]:
    return [s["email"] for s in step.arguments["signers"]]


def test_a_declined_agreement_re_sent_with_or_without_our_countersigner_passes_but_not_to_the_decliner(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    """Regression: the faithful re-send, which keeps the original's countersigner, failed on "no collateral"."""
    runner, redirects = _of(catalog, generated, "declined-envelope-redirect")
    internal = {p.email for p in runner.world.team}
    countersigned = 0
    for task in redirects:
        resent = step_of(task, "create_envelope")
        signers = _signers(resent)
        ours = [e for e in signers if e in internal]
        countersigned += bool(ours)
        assert passes(task, runner, task.plan), task.id  # the reference keeps the original routing
        only = [s for s in resent.arguments["signers"] if s["email"] not in internal]
        assert passes(task, runner, changed(task, "create_envelope", signers=only)), task.id
        decliner = next(r.row for r in task.setup if r.table == "recipient_events")
        envelope = runner.call("esign", "list_recipients", {"envelope_id": decliner["envelope_id"]}).data
        declined = next(r for r in envelope if r["id"] == decliner["recipient_id"])
        back = [{"name": declined["name"], "email": declined["email"]}, *[s for s in resent.arguments["signers"] if s["email"] in internal]]
        assert not passes(task, runner, changed(task, "create_envelope", signers=back)), task.id
    assert countersigned, "no re-sent agreement had our countersigner: the regression is not exercised"


def test_a_renewal_sent_to_someone_else_than_the_msa_signatory_fails(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    runner, renewals = _of(catalog, generated, "contract-renewal-signature")
    for task in renewals:
        step = step_of(task, "create_envelope")
        wrong = [{"name": "Someone Else", "email": "someone.else@example.com"}]
        assert not passes(task, runner, changed(task, "create_envelope", signers=wrong)), task.id
        assert step.arguments["cc"], task.id  # the account owner is copied (asked for, or the rule's)


def test_a_return_reply_that_says_it_is_declined_fails(
    catalog: Catalog, generated: tuple[list[TaskSpec], GenerateReport]
) -> None:
    runner, returns = _of(catalog, generated, "store-return-refund")
    for task in returns:
        reply = next(s for s in task.plan if s.tool in ("reply_to_message", "reply_in_thread", "send_email", "send_message",
                                                       "add_ticket_reply"))
        key = next(k for k in ("body", "text") if k in reply.arguments)
        denied = reply.arguments[key].replace("is approved", "is declined")
        assert denied != reply.arguments[key], task.id
        plan = [s.model_copy(update={"arguments": {**s.arguments, key: denied}}) if s is reply else s for s in task.plan]
        assert not passes(task, runner, plan), task.id
