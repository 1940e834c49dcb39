"""Requests over generated services read as requests (issue 32, point 5): a phrase with a seam is repaired where
it has one reading, and a tool none of whose phrases can be made whole is left out of requests and counted."""

from __future__ import annotations

from composer.catalog import load_catalog
from composer.phrases import phrase, phrase_figures, seams, whole, whole_phrases


def _tools() -> dict[str, object]:
    catalog = load_catalog(("drchrono", "ebay_sell_marketing", "slack"))
    return {t.key: t for t in catalog.tools.values()}


def test_the_issue_s_seamed_phrases_are_repaired_or_left_out() -> None:
    tools = _tools()
    consent = tools["drchrono.consent_forms_apply_to_appointment"]
    assert consent.phrases == ("assign the consent form to appointment for the record {id}",  # type: ignore[attr-defined]
                               "assign the record {id}")
    # The seamed phrase is never whole; the tool itself is simulated now (it takes no appointment), so no request asks
    # for it as a write: only its plain phrase is left.
    assert whole_phrases(consent) == ("assign the record {id}",)  # type: ignore[arg-type]
    assert consent.simulated  # type: ignore[attr-defined]
    end = tools["ebay_sell_marketing.end_campaign"]
    assert phrase(end, {"campaign_id": "the ad campaign \"Spring sale\""}) == "end the ad campaign \"Spring sale\""  # type: ignore[arg-type]
    assert whole_phrases(end)[0] == "end the active ad campaign {campaign_id}"  # type: ignore[arg-type]
    unarchive = tools["slack.admin_conversations_unarchive"]
    assert phrase(unarchive, {"channel_id": "#support"}) == "unarchive the public conversation #support"  # type: ignore[arg-type]
    figures = phrase_figures(tools.values())  # type: ignore[arg-type]
    assert figures["tools_left_out"] >= 2 and figures["phrases_repaired"] >= 2
    assert any(e.startswith("drchrono.medications_append_to_pharmacy_note") for e in figures["left_out_examples"])


def test_a_noun_before_a_placeholder_must_be_its_own() -> None:
    nouns = {"charge_id": {"charge"}, "id": {"consent", "form"}, "tenant_id": {"tenant"}}.__getitem__
    assert whole("refund the charge {charge_id}", nouns) == "refund the charge {charge_id}"
    assert whole("refund {charge_id}", nouns) == "refund {charge_id}"
    assert whole("find the contacts by tenant id {tenant_id}", nouns) is not None
    assert whole("assign the consent form to appointment {id}", nouns) is None
    assert whole("close the the charge {charge_id}", nouns) is None
    assert whole("create a to appointment for the consent form {id}", nouns) is None
    assert whole("assign the consent form to appointment for the record {id}", nouns) is None
    assert whole("delete the form from the form {id}", nouns) is None
    assert whole("add an internal note to {charge_id} saying {id}", nouns) is not None  # a value after "saying"
    assert whole("have {tenant_id} call back {charge_id} by {id}", nouns) is not None  # "call" is a verb here
    assert whole("create a event for the charge {charge_id}", nouns) == "create an event for the charge {charge_id}"
    assert whole("create a user for the charge {charge_id}", nouns) == "create a user for the charge {charge_id}"
    assert seams("assign the the form") == ["the the"] and seams("update the group {GroupId}") == ["{GroupId}"]


def test_every_phrase_of_the_hand_written_library_reads_whole() -> None:
    from mcp_services.registry import LIBRARY

    catalog = load_catalog(sorted(LIBRARY))
    refused = [(t.key, p) for t in catalog.tools.values() for p in t.phrases if p not in whole_phrases(t)]
    assert refused == []


def test_a_noun_and_its_article_before_a_referring_expression_both_go() -> None:
    tool = next(t for t in _tools().values() if t.phrases and t.params)  # type: ignore[attr-defined]
    from dataclasses import replace

    param = tool.params[0].name  # type: ignore[attr-defined]
    adding = replace(tool, phrases=(f"add a project to a task {{{param}}}",))  # type: ignore[type-var]
    assert phrase(adding, {param: 'the task "Renew the SSL certificate"'}) == \
        'add a project to the task "Renew the SSL certificate"'
