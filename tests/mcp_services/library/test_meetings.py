"""Behaviour of meetings a user would notice: scheduling rules, rescheduling keeps the link, registration and
attendance, recordings that open only once shared, and webinars that agree with marketing."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from mcp_services.kernel import Episode
from mcp_services.kernel.plans.marketing import marketing_plan
from tests.mcp_services.library.calls import Calls, assert_added_only


@pytest.fixture
def ep() -> Iterator[Episode]:
    with Episode.create(["meetings", "marketing"], world_seed=0) as episode:
        yield episode


@pytest.fixture
def zoom(ep: Episode) -> Calls:
    return Calls(ep, "meetings")


def at(ep: Episode, days: float, hour: int = 15) -> str:
    return (ep.world.now_dt + timedelta(days=days)).replace(hour=hour, minute=0, second=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def webinar(zoom: Calls, status: str) -> dict[str, Any]:
    return zoom("list_meetings", kind="webinar", status=status)["items"][0]


def test_webinars_are_marketings_with_their_links_registrants_and_attendance(ep: Episode, zoom: Calls) -> None:
    plan = marketing_plan(ep.world)
    for planned, status in ((plan.webinar("past"), "ended"), (plan.webinar("upcoming"), "scheduled")):
        found = webinar(zoom, status)
        assert (found["topic"], found["start_time"], found["join_url"], found["registration_url"], found["meeting_number"]) == (
            planned.topic, planned.start_time, planned.join_url, planned.registration_url, planned.webinar_number)
        registrants = zoom.all("list_registrants", meeting_id=found["id"])
        assert sorted(r["email"] for r in registrants) == sorted(r.email for r in planned.registrations)
        came = {r.email for r in planned.registrations if r.attended}
        assert {r["email"] for r in registrants if r["attended"]} == came
        assert {r["email"] for r in zoom.all("list_registrants", meeting_id=found["id"], attended=False)} == {
            r.email for r in planned.registrations} - came
    members = {m["email_address"] for m in Calls(ep, "marketing").all("search_members", status="subscribed")}
    assert {r.email for w in plan.webinars for r in w.registrations} <= members


def test_a_meeting_is_scheduled_in_the_future_within_the_hosts_licence(ep: Episode, zoom: Calls) -> None:
    guest = ep.world.customers[0].email
    meeting = zoom("create_meeting", topic="Callback: seats question", start_time=at(ep, 1), duration=30, invitees=[guest, guest.upper()])
    assert meeting["status"] == "scheduled" and meeting["invitees"] == [guest]
    assert meeting["join_url"] == f"https://zoom.us/j/{meeting['meeting_number']}" and len(meeting["passcode"]) == 6
    assert meeting["host_email"] == ep.world.user.email and meeting["end_time"] == at(ep, 1).replace("15:00", "15:30")
    zoom.refused("create_meeting", "invalid_argument", topic="Too late", start_time=at(ep, -1))
    basic = ep.world.team_member("office manager").email
    assert "40 minutes" in zoom.refused("create_meeting", "permission_denied", topic="Long", start_time=at(ep, 2), duration=60,
                                        host_email=basic)
    assert "webinar licence" in zoom.refused("create_meeting", "permission_denied", topic="Webinar", start_time=at(ep, 9),
                                             kind="webinar")
    lead = ep.world.team_member("product manager").email
    hosted = zoom("create_meeting", topic="Customer webinar", start_time=at(ep, 9), duration=60, kind="webinar", host_email=lead)
    assert hosted["registration_required"] and hosted["registration_url"].startswith("https://zoom.us/webinar/register/")
    assert zoom("create_meeting", topic="Another", start_time=at(ep, 3))["meeting_number"] != meeting["meeting_number"]


def test_rescheduling_keeps_the_link_and_only_scheduled_meetings_move(ep: Episode, zoom: Calls) -> None:
    upcoming = zoom("list_meetings", kind="meeting", status="scheduled", from_time=at(ep, 1, 0))["items"][0]
    moved = zoom("update_meeting", meeting_id=upcoming["id"], start_time=at(ep, 6, 16))
    assert (moved["start_time"], moved["join_url"], moved["passcode"]) == (at(ep, 6, 16), upcoming["join_url"], upcoming["passcode"])
    zoom.refused("update_meeting", "invalid_argument", meeting_id=upcoming["id"], start_time=at(ep, -2))
    zoom.refused("update_meeting", "invalid_argument", meeting_id=upcoming["id"], start_time=at(ep, 6, 16))
    ended = zoom("list_meetings", status="ended")["items"][0]
    assert "ended" in zoom.refused("update_meeting", "invalid_state", meeting_id=ended["id"], start_time=at(ep, 3))
    cancelled = zoom("cancel_meeting", meeting_id=upcoming["id"], reason="Customer postponed")
    assert (cancelled["status"], cancelled["cancel_reason"]) == ("cancelled", "Customer postponed")
    zoom.refused("cancel_meeting", "invalid_state", meeting_id=upcoming["id"])
    zoom.refused("add_invitees", "invalid_state", meeting_id=upcoming["id"], invitees=["new.guest@example.com"])


def test_finding_a_persons_meetings_covers_invitations_and_registrations(ep: Episode, zoom: Calls) -> None:
    invited = zoom("list_meetings", kind="meeting")["items"][0]["invitees"][0]
    found = zoom.all("list_meetings", invitee_email=invited.upper())
    assert found and all(invited in m["invitees"] for m in found if m["kind"] == "meeting")
    registrant = zoom.all("list_registrants", meeting_id=webinar(zoom, "ended")["id"])[0]["email"]
    assert webinar(zoom, "ended")["id"] in {m["id"] for m in zoom.all("list_meetings", invitee_email=registrant)}


def test_registration_is_for_meetings_that_take_it_once_per_person(ep: Episode, zoom: Calls) -> None:
    coming = webinar(zoom, "scheduled")
    person = next(p for p in ep.world.customers if p.email not in {r["email"] for r in zoom.all("list_registrants", meeting_id=coming["id"])})
    registrant = zoom("add_registrant", meeting_id=coming["id"], email=person.email, first_name=person.first_name, last_name=person.last_name)
    assert registrant["status"] == "approved" and coming["meeting_number"] in registrant["join_url"]
    zoom.refused("add_registrant", "conflict", meeting_id=coming["id"], email=person.email, first_name="A", last_name="B")
    assert zoom("cancel_registrant", registrant_id=registrant["id"])["status"] == "cancelled"
    again = zoom("add_registrant", meeting_id=coming["id"], email=person.email, first_name=person.first_name, last_name=person.last_name)
    assert (again["id"], again["status"]) == (registrant["id"], "approved")
    plain = zoom("create_meeting", topic="Plain call", start_time=at(ep, 2))
    zoom.refused("add_registrant", "invalid_state", meeting_id=plain["id"], email=person.email, first_name="A", last_name="B")
    zoom.refused("add_registrant", "invalid_state", meeting_id=webinar(zoom, "ended")["id"], email=person.email, first_name="A", last_name="B")
    zoom.refused("approve_registrant", "invalid_state", registrant_id=again["id"])


def test_attendance_exists_once_a_meeting_ended(ep: Episode, zoom: Calls) -> None:
    ended = webinar(zoom, "ended")
    people = zoom.all("list_participants", meeting_id=ended["id"])
    assert people[0]["email"] == ended["host_email"] and all(p["duration"] > 0 for p in people)
    zoom.refused("list_participants", "invalid_state", meeting_id=webinar(zoom, "scheduled")["id"])


def test_a_recording_opens_for_others_only_once_shared_and_a_trashed_one_never(zoom: Calls) -> None:
    recording = zoom("list_recordings", meeting_id=webinar(zoom, "ended")["id"])["items"][0]
    assert recording["sharing"] == "off" and recording["share_url"].startswith("https://zoom.us/rec/share/")
    assert zoom("update_recording_sharing", recording_id=recording["id"], sharing="anyone_with_link")["sharing"] == "anyone_with_link"
    zoom.refused("update_recording_sharing", "invalid_state", recording_id=recording["id"], sharing="anyone_with_link")
    trashed = zoom("delete_recording", recording_id=recording["id"])
    assert (trashed["trashed"], trashed["sharing"]) == (True, "off")
    assert zoom("list_recordings", meeting_id=recording["meeting_id"])["items"] == []
    assert zoom("list_recordings", meeting_id=recording["meeting_id"], include_trashed=True)["total"] == 1
    zoom.refused("update_recording_sharing", "invalid_state", recording_id=recording["id"], sharing="anyone_with_link")


def test_a_registration_from_the_web_page_arrives_as_a_registrant(ep: Episode, zoom: Calls) -> None:
    coming = webinar(zoom, "scheduled")
    key = ep.run_event("meetings", "registration_received", meeting_id=coming["id"], email="sam.lee@outlook.example",
                       first_name="Sam", last_name="Lee", org="Lee Consulting", hours_ago=5)
    assert_added_only(ep, "meetings")
    found = {r["id"]: r for r in zoom.all("list_registrants", meeting_id=coming["id"])}
    assert found[key]["email"] == "sam.lee@outlook.example" and found[key]["registered_at"] < ep.world.now
