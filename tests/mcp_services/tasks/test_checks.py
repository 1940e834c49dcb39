"""Each check says whether it holds for a run's state diff and answer; grading rolls them up."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from mcp_services.kernel.diff import RowChange, StateDiff, TableDiff
from mcp_services.tasks.checks import AnswerCheck, Check, InfoFlow, NoCollateral, RowExists, RowUnchanged, value_matches
from mcp_services.tasks.grading import RubricItem, grade

CONTACT = {"id": "ct_1", "email": "ana@x.example", "stage": "lead", "tags": ["VIP", "emea"], "score": 12.0}


def crm(**tables: TableDiff) -> dict[str, StateDiff]:
    return {"crm": StateDiff(dict(tables))}


def changed(before: dict[str, Any], **after: Any) -> TableDiff:
    return TableDiff(changed={before["id"]: RowChange(before, {**before, **after})})


def test_a_row_exists_check_holds_only_for_a_row_the_run_wrote_that_matches_every_value() -> None:
    check = RowExists(
        id="c", service="crm", table="contacts", change="changed",
        match={"stage": "customer", "email": {"$icontains": "ANA@"}, "tags": {"$includes": ["vip"]},
               "score": {"$approx": 12.005}},
    )
    assert check.holds(crm(contacts=changed(CONTACT, stage="customer")), None)
    assert not check.holds(crm(contacts=changed(CONTACT, stage="churned")), None)
    assert not check.holds(crm(contacts=TableDiff(added={"ct_1": {**CONTACT, "stage": "customer"}})), None)
    assert not check.holds({}, None)


def test_a_row_unchanged_check_fails_once_the_row_is_changed_or_deleted_and_holds_on_inaction() -> None:
    check = RowUnchanged(id="u", service="crm", table="contacts", key="ct_1")
    assert check.negative and check.holds({}, None)
    assert not check.holds(crm(contacts=changed(CONTACT, stage="customer")), None)
    assert not check.holds(crm(contacts=TableDiff(deleted={"ct_1": CONTACT})), None)
    assert check.holds(crm(contacts=TableDiff(deleted={"ct_2": CONTACT})), None)


def test_an_info_flow_check_finds_the_looked_up_value_in_a_written_row_or_list() -> None:
    check = InfoFlow(id="f", value="re_0007", source_service="payments", source_tool="refund_charge",
                     service="crm", table="notes", column="body")
    assert check.holds(crm(notes=TableDiff(added={"n1": {"id": "n1", "body": "Refunded RE_0007 today"}})), None)
    assert check.holds(crm(notes=TableDiff(added={"n1": {"id": "n1", "body": ["x", "re_0007"]}})), None)
    assert not check.holds(crm(notes=TableDiff(added={"n1": {"id": "n1", "body": "Refunded"}})), None)


def test_no_collateral_names_every_change_the_task_did_not_call_for() -> None:
    check = NoCollateral(id="n", changed_keys={"crm": {"contacts": ["ct_1"]}}, added_counts={"crm": {"notes": 1}})
    allowed = crm(contacts=changed(CONTACT, stage="customer"), notes=TableDiff(added={"n1": {"id": "n1"}}))
    assert check.negative and check.holds(allowed, None) and check.collateral(allowed) == []
    other = {**CONTACT, "id": "ct_2"}
    extra = crm(contacts=changed(other, stage="customer"), notes=TableDiff(added={"n1": {}, "n2": {}}))
    assert not check.holds(extra, None)
    assert check.collateral(extra) == [
        "crm.contacts row ct_2 was changed",
        "crm.notes: 2 rows added, at most 1 expected",
    ]


def test_an_answer_check_reads_numbers_text_and_lists_in_the_final_answer() -> None:
    number = AnswerCheck(id="a", expected=21600, match="number")
    assert number.holds({}, "It is worth 21,600 USD.") and not number.holds({}, "About 21,000.")
    assert not number.holds({}, None)
    text = AnswerCheck(id="t", expected="Ana  Ruiz")
    assert text.holds({}, "That was ana ruiz.") and not text.holds({}, "That was Ana.")
    every = AnswerCheck(id="e", expected=["T-1", "T-2"], match="all_of")
    assert every.holds({}, "t-1 and t-2") and not every.holds({}, "only T-1")
    with pytest.raises(ValidationError, match="one number"):
        AnswerCheck(id="bad", expected=["1", "2"], match="number")


def test_a_check_read_from_json_is_its_own_class_and_keeps_its_fields() -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(list[Check])
    raw = [{"kind": "row_unchanged", "id": "u", "service": "crm", "table": "contacts", "key": "ct_1"},
           {"kind": "answer", "id": "a", "expected": 3, "match": "number", "description": ""}]
    checks = adapter.validate_python(raw)
    assert [type(c) for c in checks] == [RowUnchanged, AnswerCheck]
    assert adapter.dump_python(checks, mode="json")[1] == raw[1]
    with pytest.raises(ValidationError):
        adapter.validate_python([{"kind": "row_gone", "id": "x"}])


def test_a_grade_passes_a_criterion_only_when_all_its_checks_hold_and_reports_collateral() -> None:
    checks: list[Check] = [
        RowExists(id="converted", service="crm", table="contacts", change="changed", match={"stage": "customer"}),
        NoCollateral(id="quiet", changed_keys={"crm": {"contacts": ["ct_1"]}}),
    ]
    rubric = [RubricItem(id="customer", description="", checks=["converted"]),
              RubricItem(id="nothing-else", description="", checks=["converted", "quiet"])]
    other = {**CONTACT, "id": "ct_2"}
    noisy = crm(contacts=TableDiff(changed={
        "ct_1": RowChange(CONTACT, {**CONTACT, "stage": "customer"}),
        "ct_2": RowChange(other, {**other, "stage": "customer"}),
    }))
    result = grade(checks, rubric, noisy, None)
    assert result.criteria == {"customer": True, "nothing-else": False}
    assert result.rubric_score == 0.5 and not result.passed
    assert result.collateral == ["crm.contacts row ct_2 was changed"]
    assert grade(checks, rubric, crm(contacts=changed(CONTACT, stage="customer")), None).passed
    with pytest.raises(ValueError, match="unknown checks: missing"):
        grade(checks, [RubricItem(id="r", description="", checks=["missing"])], {}, None)


def test_any_of_several_right_values_matches_and_nothing_else_does() -> None:
    from mcp_services.tasks.checks import value_matches

    assert value_matches({"$in": ["room_0002", "room_0005"]}, "room_0005")
    assert not value_matches({"$in": ["room_0002", "room_0005"]}, "room_0001")
    assert value_matches({"$in": [{"$icontains": "kickoff"}]}, "Kickoff: Brightline")


def test_what_must_not_happen_and_an_answer_naming_every_candidate() -> None:
    from mcp_services.kernel.diff import RowChange, StateDiff, TableDiff
    from mcp_services.tasks.checks import AnswerExcludes, RowAbsent

    refunded = {"payments": StateDiff({"refunds": TableDiff(added={"re_1": {"id": "re_1", "charge_id": "ch_9"}})})}
    untouched = {"payments": StateDiff({})}
    absent = RowAbsent(id="no-refund", service="payments", table="refunds", match={"charge_id": "ch_9"})
    assert absent.holds(untouched, None) and not absent.holds(refunded, None) and absent.negative
    assert RowChange  # the diff types are the ones grading reads
    only = AnswerExcludes(id="only", values=[4373.0, "INV-0008"])
    assert only.holds({}, "They owe 7,054.00 USD.")
    assert not only.holds({}, "Either 7,054.00 or 4,373.00 USD.") and not only.holds({}, "see inv-0008")


@pytest.mark.parametrize(("actual", "filled"), [("Not needed any more.", True), (7, True), (["a"], True), (None, False), ("", False), ([], False)])
def test_a_filled_matcher_takes_any_value_that_is_not_empty(actual: Any, filled: bool) -> None:
    from mcp_services.tasks.checks import value_matches

    assert value_matches({"$filled": True}, actual) is filled


@pytest.mark.parametrize("cell", ["Q3 Travel", "q3 travel", "“Q3 Travel”", "Q3-Travel", "  Q3   TRAVEL "])
def test_a_stated_title_matches_as_people_write_it(cell: str) -> None:
    assert value_matches({"$names": "Q3 Travel"}, cell)


@pytest.mark.parametrize("cell", ["Q3 Travel Plan", "Q4 Travel", "", "Travel"])
def test_another_title_is_not_the_stated_one(cell: str) -> None:
    assert not value_matches({"$names": "Q3 Travel"}, cell)


def test_a_long_stated_title_may_sit_in_more_words() -> None:
    assert value_matches({"$names": "Customer visit: Lake Emily"}, "Re: customer visit - Lake Emily (rescheduled)")


def test_includes_matches_records_inside_a_list_without_crashing() -> None:
    """A column holding a list of records (a return's items) is matched record by record, not hashed."""
    from mcp_services.tasks.checks import value_matches

    items = [{"line_item_id": "li_1", "quantity": 2, "reason": "defective"}, {"line_item_id": "li_2", "quantity": 1, "reason": "color"}]
    assert value_matches({"$includes": [{"line_item_id": "li_1", "quantity": 2, "reason": "defective"}]}, items)
    assert not value_matches({"$includes": [{"line_item_id": "li_1", "quantity": 3, "reason": "defective"}]}, items)
    assert value_matches({"$includes": ["Ana@Example.com"]}, ["ana@example.com"])  # text still compares as people read it
