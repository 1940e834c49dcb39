"""Behaviour of esign a user would notice: agreements out for signature for crm's deals, routing order, the
rules for sending, voiding, correcting and reminding, completion certificates, and the signers' events."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest

from mcp_services.kernel import Episode, ToolError
from mcp_services.kernel.plans.commerce import ENVELOPE_EXPIRY_DAYS, commerce_plan
from tests.mcp_services.library.service_calls import ServiceCalls

call = ServiceCalls("esign")
refused = call.refused
every = call.every


@pytest.fixture
def ep() -> Iterator[Episode]:
    with Episode.create(["esign"], world_seed=0) as episode:
        yield episode


def envelopes(ep: Episode, **filters: Any) -> list[dict[str, Any]]:
    return call(ep, "list_envelopes", limit=100, **filters)["items"]


def one(ep: Episode, status: str, recipients: list[str] | None = None) -> dict[str, Any]:
    for envelope in envelopes(ep, status=status):
        if recipients is None or [r["status"] for r in envelope["recipients"]] == recipients:
            return envelope
    raise AssertionError(f"no {status} envelope with recipients {recipients}")


# -- seeded agreements ---------------------------------------------------------------------------------


def test_agreements_in_every_state_belong_to_the_plans_deals(ep: Episode) -> None:
    seeded = envelopes(ep)
    assert Counter(e["status"] for e in seeded).keys() == {
        "created",
        "sent",
        "delivered",
        "completed",
        "declined",
        "voided",
    }
    deals = {d.name: d for d in commerce_plan(ep.world).deals}
    finance = ep.world.team_member("finance lead")
    for envelope in seeded:
        deal = deals[envelope["deal_name"]]
        assert envelope["company_name"] == deal.company_name and envelope["sender_email"] == deal.owner_email
        customer, ours = envelope["recipients"]
        countersigner = deal.owner_email if envelope["contract_number"] else finance.email
        assert customer["email"] == deal.contact_email and ours["email"] == countersigner
        assert (customer["routing_order"], ours["routing_order"]) == (1, 2)
    superseded = [e for e in seeded if e["status"] == "voided" and "replaced" in (e["void_reason"] or "")]
    assert len(superseded) == 1
    twins = [e for e in seeded if e["deal_name"] == superseded[0]["deal_name"]]
    assert sorted(e["status"] for e in twins) == ["sent", "voided"]


def test_the_countersigner_gets_it_only_after_the_customer_signed(ep: Episode) -> None:
    waiting = one(ep, "sent")
    assert [r["status"] for r in waiting["recipients"]] == ["sent", "created"]
    countersign = one(ep, "delivered", ["completed", "sent"])
    recipients = call(ep, "list_recipients", envelope_id=countersign["id"])
    assert recipients[0]["signed_at"] and recipients[1]["signed_at"] is None
    history = call(ep, "list_envelope_history", envelope_id=countersign["id"])
    assert [h["action"] for h in history] == ["delivered", "signed"]


def test_a_completed_envelope_has_a_certificate_and_cannot_be_voided(ep: Episode) -> None:
    done = one(ep, "completed")
    certificate = call(ep, "get_certificate", envelope_id=done["id"])
    assert certificate["completed_at"] == done["completed_at"] == max(s["signed_at"] for s in certificate["signatures"])
    assert [s["email"] for s in certificate["signatures"]] == [r["email"] for r in done["recipients"]]
    assert certificate["documents"] == [d["name"] for d in call(ep, "list_documents", envelope_id=done["id"])]
    result = refused(ep, "void_envelope", "invalid_state", envelope_id=done["id"], reason="Changed our mind")
    assert "completed" in (result.error_message or "")
    refused(ep, "get_certificate", "invalid_state", envelope_id=one(ep, "sent")["id"])


def test_a_declined_envelope_shows_why_and_cannot_be_voided_or_reminded(ep: Episode) -> None:
    declined = one(ep, "declined")
    assert declined["declined_reason"] and declined["recipients"][0]["status"] == "declined"
    refused(ep, "void_envelope", "invalid_state", envelope_id=declined["id"], reason="x")
    refused(ep, "resend_envelope", "invalid_state", envelope_id=declined["id"])
    refused(
        ep,
        "correct_recipient",
        "invalid_state",
        envelope_id=declined["id"],
        recipient_id=declined["recipients"][0]["id"],
        email="someone.else@example.com",
    )


def test_an_envelope_out_for_signature_is_voided_with_a_reason(ep: Episode) -> None:
    sent = one(ep, "sent")
    voided = call(ep, "void_envelope", envelope_id=sent["id"], reason="Fees changed after the call")
    assert (voided["status"], voided["void_reason"], voided["voided_at"]) == (
        "voided",
        "Fees changed after the call",
        ep.world.now,
    )
    refused(ep, "void_envelope", "invalid_state", envelope_id=sent["id"], reason="again")
    draft = one(ep, "created")
    result = refused(ep, "void_envelope", "invalid_state", envelope_id=draft["id"], reason="x")
    assert "discard_draft" in (result.error_message or "")


# -- drafts and sending -------------------------------------------------------------------------------------


def test_a_draft_is_edited_and_sent_and_then_expires_after_the_expiry_period(ep: Episode) -> None:
    draft = one(ep, "created")
    call(ep, "update_envelope", envelope_id=draft["id"], email_subject="Please DocuSign: revised terms")
    document = call(ep, "add_document", envelope_id=draft["id"], name="Pricing schedule.pdf", pages=2)
    assert document["document_order"] == len(call(ep, "list_documents", envelope_id=draft["id"]))
    refused(ep, "add_document", "conflict", envelope_id=draft["id"], name="pricing schedule.pdf")
    sent = call(ep, "send_envelope", envelope_id=draft["id"])
    assert sent["status"] == "sent" and sent["email_subject"] == "Please DocuSign: revised terms"
    expires = datetime.strptime(sent["expires_at"], "%Y-%m-%dT%H:%M:%SZ")
    assert expires - datetime.strptime(sent["sent_at"], "%Y-%m-%dT%H:%M:%SZ") == timedelta(days=ENVELOPE_EXPIRY_DAYS)
    assert [r["status"] for r in sent["recipients"]] == ["sent", "created"]
    refused(ep, "send_envelope", "invalid_state", envelope_id=draft["id"])
    refused(ep, "add_document", "invalid_state", envelope_id=draft["id"], name="Another.pdf")
    refused(ep, "update_envelope", "invalid_state", envelope_id=draft["id"], email_subject="Too late")


def test_an_envelope_from_a_template_is_named_for_the_company_and_found_by_its_filters(ep: Episode) -> None:
    template = call(ep, "list_templates", query="order form")["items"][0]
    created = call(
        ep,
        "create_envelope",
        email_subject="Please DocuSign: Order Form - Acme",
        template_id=template["id"],
        company_name="Acme",
        deal_name="Order Form - Acme",
        signers=[
            {"name": "Ana Ruiz", "email": "Ana.Ruiz@acme.example"},
            {"name": "Danny Cross", "email": "danny.cross@changfisher.example"},
        ],
        cc=[{"name": "Lee Park", "email": "lee.park@acme.example"}],
    )
    assert created["status"] == "created" and created["sender_email"] == ep.world.user.email
    assert [d["name"] for d in call(ep, "list_documents", envelope_id=created["id"])] == ["Order Form - Acme.pdf"]
    assert [(r["email"], r["kind"]) for r in created["recipients"]] == [
        ("ana.ruiz@acme.example", "signer"),
        ("danny.cross@changfisher.example", "signer"),
        ("lee.park@acme.example", "carbon_copy"),
    ]
    assert [e["id"] for e in envelopes(ep, company_name="acme")] == [created["id"]]
    assert [e["id"] for e in envelopes(ep, recipient_email="ana.ruiz@acme.example")] == [created["id"]]
    assert created["id"] in {e["id"] for e in envelopes(ep, status="created")}
    assert created["id"] not in {e["id"] for e in envelopes(ep, status="sent")}
    empty = call(
        ep, "create_envelope", email_subject="Notes", signers=[{"name": "Ana Ruiz", "email": "ana@acme.example"}]
    )
    refused(ep, "send_envelope", "invalid_state", envelope_id=empty["id"])
    gone = call(ep, "discard_draft", envelope_id=empty["id"])
    assert gone["deleted"] and ep.call("esign", "get_envelope", {"envelope_id": empty["id"]}).error_code == "not_found"
    refused(
        ep,
        "create_envelope",
        "invalid_argument",
        email_subject="Twice",
        signers=[{"name": "Ana Ruiz", "email": "ana@acme.example"}, {"name": "Ana R", "email": "ANA@acme.example"}],
    )


# -- recipients ----------------------------------------------------------------------------------------------


def test_a_signer_is_corrected_before_signing_and_gets_the_envelope_again(ep: Episode) -> None:
    opened = one(ep, "delivered", ["delivered", "created"])
    signer = opened["recipients"][0]
    corrected = call(
        ep,
        "correct_recipient",
        envelope_id=opened["id"],
        recipient_id=signer["id"],
        email="new.signatory@example.com",
        name="Jordan Lee",
    )
    assert (corrected["email"], corrected["name"], corrected["status"]) == (
        "new.signatory@example.com",
        "Jordan Lee",
        "sent",
    )
    assert call(ep, "get_envelope", envelope_id=opened["id"])["status"] == "sent"
    signed = one(ep, "delivered", ["completed", "sent"])
    refused(
        ep,
        "correct_recipient",
        "invalid_state",
        envelope_id=signed["id"],
        recipient_id=signed["recipients"][0]["id"],
        email="someone.else@example.com",
    )
    refused(
        ep,
        "correct_recipient",
        "invalid_argument",
        envelope_id=signed["id"],
        recipient_id=opened["recipients"][1]["id"],
        email="x@example.com",
    )


def test_recipients_are_added_after_who_signed_and_removed_until_they_act(ep: Episode) -> None:
    signed = one(ep, "delivered", ["completed", "sent"])
    refused(
        ep,
        "add_recipient",
        "invalid_argument",
        envelope_id=signed["id"],
        name="Sam Vale",
        email="sam@example.com",
        routing_order=1,
    )
    added = call(ep, "add_recipient", envelope_id=signed["id"], name="Sam Vale", email="sam@example.com")
    assert added["routing_order"] == 3 and added["status"] == "created"
    refused(ep, "add_recipient", "conflict", envelope_id=signed["id"], name="Sam Vale", email="SAM@example.com")
    refused(
        ep, "remove_recipient", "invalid_state", envelope_id=signed["id"], recipient_id=signed["recipients"][0]["id"]
    )
    assert call(ep, "remove_recipient", envelope_id=signed["id"], recipient_id=added["id"])["deleted"]
    draft = one(ep, "created")
    call(ep, "remove_recipient", envelope_id=draft["id"], recipient_id=draft["recipients"][1]["id"])
    refused(ep, "remove_recipient", "invalid_state", envelope_id=draft["id"], recipient_id=draft["recipients"][0]["id"])


def test_a_reminder_goes_out_only_while_someone_has_to_sign(ep: Episode) -> None:
    sent = one(ep, "sent")
    reminded = call(ep, "resend_envelope", envelope_id=sent["id"])
    again = call(ep, "resend_envelope", envelope_id=sent["id"])
    assert (reminded["reminders_sent"], again["reminders_sent"], again["last_reminded_at"]) == (1, 2, ep.world.now)
    refused(ep, "resend_envelope", "invalid_state", envelope_id=one(ep, "completed")["id"])
    refused(ep, "resend_envelope", "invalid_state", envelope_id=one(ep, "created")["id"])


# -- world events ----------------------------------------------------------------------------------------------


def test_a_signer_declining_arrives_as_a_new_event_with_their_reason(ep: Episode) -> None:
    opened = one(ep, "delivered", ["delivered", "created"])
    event_id = ep.run_event(
        "esign",
        "envelope_declined",
        envelope_id=opened["id"],
        reason="Please raise the liability cap first.",
        hours_ago=2,
    )
    diff = ep.diff()["esign"]
    assert {n for n, t in diff.tables.items() if t} == {"recipient_events"}
    after = call(ep, "get_envelope", envelope_id=opened["id"])
    assert (after["status"], after["declined_reason"]) == ("declined", "Please raise the liability cap first.")
    assert call(ep, "list_envelope_history", envelope_id=opened["id"])[-1]["id"] == event_id
    with pytest.raises(ToolError, match="is declined"):
        ep.run_event("esign", "envelope_completed", envelope_id=opened["id"])
    with pytest.raises(ToolError, match="whose turn it is"):
        ep.run_event(
            "esign",
            "envelope_declined",
            envelope_id=one(ep, "sent")["id"],
            reason="No",
            signer_email=ep.world.team_member("finance lead").email,
        )


def test_the_last_signatures_complete_the_envelope(ep: Episode) -> None:
    sent = one(ep, "sent")
    ep.run_event("esign", "envelope_completed", envelope_id=sent["id"], hours_ago=1)
    done = call(ep, "get_envelope", envelope_id=sent["id"])
    assert done["status"] == "completed" and [r["status"] for r in done["recipients"]] == ["completed", "completed"]
    certificate = call(ep, "get_certificate", envelope_id=sent["id"])
    signed = [s["signed_at"] for s in certificate["signatures"]]
    assert signed == sorted(signed) and certificate["completed_at"] == signed[-1] < ep.world.now
    with pytest.raises(ToolError, match="completed"):
        ep.run_event("esign", "envelope_completed", envelope_id=sent["id"])


# -- crm and files ----------------------------------------------------------------------------------------


def test_each_customers_master_services_agreement_is_its_contract_on_file() -> None:
    with Episode.create(["esign", "files"], world_seed=0) as ep:
        msas = {e["contract_number"]: e for e in envelopes(ep) if e["contract_number"]}
        assert len(msas) == len(ep.world.plan.contracts)
        for contract in ep.world.plan.contracts:
            envelope = msas[contract.number]
            assert (envelope["status"] == "completed") == (contract.signed_on is not None)
            if contract.signed_on is not None:
                assert envelope["completed_at"] > contract.signed_on
            assert [e["id"] for e in envelopes(ep, query=contract.number)] == [envelope["id"]]
            document = call(ep, "list_documents", envelope_id=envelope["id"])[0]["name"]
            found = ep.call("files", "search_files", {"name": document}).data["items"]
            assert [f["name"] for f in found] == [document], document


def test_each_envelopes_company_and_signer_are_in_the_crm() -> None:
    with Episode.create(["crm", "esign"], world_seed=0) as ep:
        for envelope in envelopes(ep):
            company = ep.call("crm", "search_companies", {"query": envelope["company_name"]}).data["items"]
            assert envelope["company_name"] in {c["name"] for c in company}
            contact = ep.call("crm", "find_contact_by_email", {"email": envelope["recipients"][0]["email"]}).data
            assert contact["company_name"] == envelope["company_name"]


def test_each_envelopes_deal_is_a_crm_deal() -> None:
    with Episode.create(["crm", "esign"], world_seed=0) as ep:
        names = {d["name"] for d in ep.call("crm", "list_deals", {"limit": 100}).data["items"]}
        assert {e["deal_name"] for e in envelopes(ep)} <= names
