"""Facts in what people write: one amount, date, time or decision in every usual surface form, and no other."""

from __future__ import annotations

import pytest

from mcp_services.kernel.diff import StateDiff, TableDiff
from mcp_services.tasks.checks import AnswerCheck, CarriedValue, RowExists, value_matches
from mcp_services.tasks.surface import states


@pytest.mark.parametrize("text", ["We refunded 2,774.00 USD.", "That is $2,774", "2774 was refunded", "USD 2774.00 back"])
def test_an_amount_reads_in_every_usual_form(text: str) -> None:
    assert states(text, "money", 2774.0)


@pytest.mark.parametrize("text", ["We refunded 2,775.00 USD.", "27,740", "INV-2774 is open", "Thanks, this is handled."])
def test_another_amount_or_an_id_holding_the_digits_is_not_the_amount(text: str) -> None:
    assert not states(text, "money", 2774.0)


@pytest.mark.parametrize("text", ["on 13 October", "Oct 13", "2025-10-13", "the 13th of October", "October 13th", "13/10/2025"])
def test_a_date_reads_in_every_usual_form(text: str) -> None:
    assert states(text, "date", "2025-10-13")


@pytest.mark.parametrize("text", ["on 14 October", "Oct 3", "October 2025", "2025-10-31"])
def test_another_date_is_not_the_date(text: str) -> None:
    assert not states(text, "date", "2025-10-13")


@pytest.mark.parametrize("text", ["Monday 13 October at 14:00", "13 Oct, 2pm", "2025-10-13 2:00 PM", "October 13 at 2 p.m."])
def test_a_time_on_its_day_reads_in_every_usual_form(text: str) -> None:
    assert states(text, "datetime", "2025-10-13T14:00:00Z")


def test_a_time_on_another_day_or_at_another_hour_is_not_the_time() -> None:
    assert not states("14 October at 14:00", "datetime", "2025-10-13T14:00:00Z")
    assert not states("13 October at 15:00", "datetime", "2025-10-13T14:00:00Z")
    assert not states("13 October", "datetime", "2025-10-13T14:00:00Z")


def test_an_id_must_stand_on_its_own() -> None:
    assert states("Refund re_0007 is on its way", "text", "re_0007")
    assert states("Ticket #1042.", "text", "1042")
    assert not states("Refund re_00071 is on its way", "text", "re_0007")
    assert not states("INV-10270", "text", "INV-1027")


@pytest.mark.parametrize(
    ("text", "decision"),
    [
        ("Your request is approved, enjoy!", "approve"),
        ("I've approved it.", "approve"),
        ("Sorry, I had to deny it: it goes beyond your balance.", "deny"),
        ("I'm afraid it is not approved this time.", "deny"),
        ("Unfortunately we can't approve the request.", "deny"),
        ("Your request was declined.", "deny"),
    ],
)
def test_a_decision_is_read_as_people_write_it(text: str, decision: str) -> None:
    assert states(text, "decision", decision)
    assert not states(text, "decision", "deny" if decision == "approve" else "approve")


def test_a_reply_saying_both_or_neither_states_no_decision() -> None:
    assert not states("Approved. Actually, denied.", "decision", "deny")
    assert not states("Thanks, this is handled.", "decision", "approve")
    assert not states("Thanks, this is handled.", "decision", "deny")


def _diff(service: str, table: str, *rows: dict[str, object]) -> dict[str, StateDiff]:
    return {service: StateDiff({table: TableDiff(added={str(r["id"]): dict(r) for r in rows})})}


def test_a_row_check_can_demand_facts_in_a_message_body() -> None:
    check = RowExists(id="reply", service="mailbox", table="messages",
                      match={"thread_id": "th_1", "body": {"$states": [{"kind": "money", "value": 120.5}, {"kind": "decision", "value": "deny"}]}})
    good = _diff("mailbox", "messages", {"id": "m1", "thread_id": "th_1", "body": "We can't approve a refund of $120.50, sorry."})
    empty = _diff("mailbox", "messages", {"id": "m1", "thread_id": "th_1", "body": "Thanks, this is handled."})
    wrong = _diff("mailbox", "messages", {"id": "m1", "thread_id": "th_1", "body": "Your refund of 120.50 is approved."})
    assert check.holds(good, None)
    assert not check.holds(empty, None)
    assert not check.holds(wrong, None)
    assert not value_matches({"$states": []}, "anything")


def test_a_carried_value_follows_the_agents_own_record_not_the_references_literal() -> None:
    check = CarriedValue(id="code-in-reply", source_service="commerce", source_table="discount_codes",
                         source_match={"value": 20}, source_column="code", service="mailbox", table="messages",
                         match={"thread_id": "th_1"}, column="body")
    agent_code = {
        "commerce": StateDiff({"discount_codes": TableDiff(added={"dc_9": {"id": "dc_9", "code": "ROLLINS-GOODWILL20", "value": 20}})}),
        "mailbox": StateDiff({"messages": TableDiff(added={"m1": {"id": "m1", "thread_id": "th_1", "body": "Use ROLLINS-GOODWILL20 at checkout."}})}),
    }
    assert check.holds(agent_code, None)
    other_code = {**agent_code, "mailbox": StateDiff({"messages": TableDiff(added={"m1": {"id": "m1", "thread_id": "th_1", "body": "Use SORRY1027."}})})}
    assert not check.holds(other_code, None)
    assert not check.holds({"mailbox": agent_code["mailbox"]}, None)  # no code was created at all


def test_an_answer_reads_an_amount_or_a_date_in_any_usual_form() -> None:
    assert AnswerCheck(id="a", expected=2774.0, match="money").holds({}, "They owe $2,774.")
    assert AnswerCheck(id="a", expected="2025-10-13", match="date").holds({}, "It is due on Oct 13.")
    assert not AnswerCheck(id="a", expected="2025-10-13", match="date").holds({}, "It is due on Oct 14.")


def test_a_fact_the_reply_only_quotes_is_not_stated_by_it() -> None:
    reply = "Thanks, this is handled.\n\nOn 2025-03-13T10:12:00Z, Ana Ruiz <ana@x.example> wrote:\n> Invoice INV-1027 was charged twice."
    assert not states(reply, "text", "INV-1027")
    assert states("Refunded INV-1027.\n\nOn 2025-03-13T10:12:00Z, Ana wrote:\n> Invoice INV-1027 was charged twice.", "text", "INV-1027")


def test_a_request_passed_on_for_approval_is_pending_neither_approved_nor_denied() -> None:
    for text in ("Your request is with our finance lead for approval.", "It needs approval, so I've passed it on to Danny.",
                 "We'll review it and get back to you."):
        assert states(text, "decision", "pending"), text
        assert not states(text, "decision", "approve"), text
    assert not states("Approved - enjoy!", "decision", "pending")


def test_a_forward_states_only_what_is_written_above_the_forwarded_message() -> None:
    forward = "Please handle.\n\n---------- Forwarded message ---------\nFrom: Ana\nInvoice INV-1027 was charged twice."
    assert not states(forward, "text", "INV-1027")
    assert states("Tier: gold.\n\n---------- Forwarded message ---------\nFrom: Ana", "text", "gold")


def test_a_reply_states_a_fact_in_its_own_words_not_in_the_message_it_quotes() -> None:
    quoted = "\n\nOn 2025-03-13T10:58:48Z, Ana Ruiz <ana@acme.example> wrote:\n> Could we move our meeting to Monday 7 April at 10:30 UTC?"
    assert not states("Thanks, this is handled." + quoted, "datetime", "2025-04-07T10:30:00Z")
    assert states("Done: it's moved to Monday 7 April, 10:30 UTC." + quoted, "datetime", "2025-04-07T10:30:00Z")
    assert states("On Monday 7 April at 10:30 we meet.", "datetime", "2025-04-07T10:30:00Z")  # no quote below: its own words


def test_a_state_reads_in_either_spelling_and_not_after_a_negation() -> None:
    # Played by hand: "cancelled - it is no longer pending" failed a check that wanted "canceled" and forbade "pending".
    reply = "Done: the scheduled text is cancelled - it is no longer pending."
    assert states(reply, "text", "canceled") and states("It was canceled.", "text", "cancelled")
    assert not states(reply, "text", "pending") and not states("It is not scheduled any more.", "text", "scheduled")
    assert states("It is still pending.", "text", "pending")


@pytest.mark.parametrize("text", [
    "Unfortunately we will not move you on to the phone screen.",
    "We won't be inviting you to a phone screen this time.",
    "Sadly there will be no phone screen.",
])
def test_a_negated_outcome_does_not_state_it(text: str) -> None:
    # The screening email that declined the candidate passed the invitation check because it held "phone screen".
    assert not states(text, "text", "phone screen")


@pytest.mark.parametrize("text", [
    "Good news: we would like to move you on to the phone screen.",
    "No problem, I've booked your phone screen for Monday.",
    "We could not be sure at first, but the phone screen is yours.",
])
def test_an_outcome_negated_only_in_another_clause_is_stated(text: str) -> None:
    assert states(text, "text", "phone screen")


@pytest.mark.parametrize("text", ["It is no longer pending.", "The request is not pending any more."])
def test_no_longer_pending_is_not_pending(text: str) -> None:
    assert not states(text, "text", "pending")
    assert not states(text, "decision", "pending")


@pytest.mark.parametrize("text", ["I'm afraid we will not be able to approve it.", "We will not approve this one."])
def test_a_refusal_in_the_future_tense_is_a_denial(text: str) -> None:
    assert states(text, "decision", "deny")
    assert not states(text, "decision", "approve")


@pytest.mark.parametrize("text", ["The report 'Q3 Travel' is filed.", "the report q3 travel is filed", 'Report "Q3-Travel" filed.'])
def test_a_title_reads_case_quote_and_punctuation_insensitive(text: str) -> None:
    assert states(text, "text", "Q3 Travel")
    assert not states(text, "text", "Q3 Travel Plan")


@pytest.mark.parametrize(("text", "value"), [
    ("No receipt for the United Airlines flight.", "United Airlines"),
    ("We will not send any more texts to +17685551729.", "+17685551729"),
    ("Not out yet: it needs Wendy's sign-off first.", "Wendy"),
])
def test_a_negation_never_unsays_a_name_or_a_number(text: str, value: str) -> None:
    assert states(text, "text", value)


@pytest.mark.parametrize("text", ["I've sent your customer-visit report back to you: no receipt.", "I returned it back to you to fix."])
def test_a_report_sent_back_is_a_denial(text: str) -> None:
    assert states(text, "decision", "deny")
    assert not states(text, "decision", "approve")


@pytest.mark.parametrize("text", [
    "The report is already reimbursed.", "That went out on 16 January (it was reimbursed on the 16th).",
    "Your number has been opted out since 12 March.", "It was paid previously, reference ACH-0011.",
])
def test_a_premise_that_the_work_was_done_reads_in_the_askers_words(text: str) -> None:
    assert states(text, "premise", "already")


@pytest.mark.parametrize("text", [
    "There was no attachment on your email.", "The receipt wasn't attached.", "Your email came through without the receipt.",
    "The Alaska Airlines receipt is missing from your message.", "It was not attached.",
])
def test_a_receipt_that_never_came_reads_in_the_askers_words(text: str) -> None:
    assert states(text, "premise", "not attached")


def test_a_reply_that_does_the_work_states_no_false_premise() -> None:
    assert not states("Done: I've approved your report.", "premise", "not attached")
    assert not states("Done: I've reimbursed the report.", "premise", "already")
    with pytest.raises(ValueError, match="a premise is one of"):
        states("anything", "premise", "nonsense")


def test_not_there_reads_the_usual_ways_of_saying_someone_or_something_is_not_on_a_record() -> None:
    for text in ("Ben isn't in the channel, so there was nothing to do.", "Ana is not on the event.",
                 "She was never added to the issue.", "The page doesn't have the q3-review tag.", "Ben is no longer a member."):
        assert states(text, "premise", "not there"), text
    for text in ("Done: I removed Ben from the channel.", "Thanks, this is handled.", "I took the tag off the page."):
        assert not states(text, "premise", "not there"), text


def test_not_done_reads_the_agents_own_words_for_holding_back_and_not_a_negative_reason() -> None:
    for text in ("I have not changed anything: Michelle says one amount does not match.", "I didn't approve INV-0120.",
                 "We held off on it, since Dana flagged a problem.", "I left the report as it is: Wendy still waits on a receipt.",
                 "Nothing changed on the ticket.", "It stays on hold until Dana confirms."):
        assert states(text, "premise", "not done"), text
    # A reply that says the work was done is not saved by a reason that is negative itself.
    for text in ("Done: I approved INV-0120. Michelle says the amounts do not match.", "Closed it. Dana says the problem has not come back.",
                 "Done: I took care of it."):
        assert not states(text, "premise", "not done"), text
