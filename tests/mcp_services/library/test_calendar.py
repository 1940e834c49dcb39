"""Behaviour of the calendar service a user would notice: seeded data, rules, rooms, free slots."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from mcp_services.kernel import Episode, ToolResult


@pytest.fixture
def ep() -> Iterator[Episode]:
    with Episode.create(["calendar"], world_seed=0) as episode:
        yield episode


def call(ep: Episode, tool: str, **args: Any) -> Any:
    result = ep.call("calendar", tool, args)
    assert result.success, result.envelope()
    return result.data


def refused(ep: Episode, tool: str, code: str, **args: Any) -> ToolResult:
    """Call a tool that must fail with ``code`` and leave the state exactly as it was."""
    before = ep.dump()
    result = ep.call("calendar", tool, args)
    assert not result.success, result.envelope()
    assert result.error_code == code, result.envelope()
    assert ep.dump() == before
    return result


def later(ep: Episode, days: int, hour: int, minute: int = 0) -> str:
    """An ISO time ``days`` after the frozen clock, at a fixed time of day (UTC)."""
    day = ep.world.now_dt + timedelta(days=days)
    return day.replace(hour=hour, minute=minute, second=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def all_events(ep: Episode, **filters: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = call(ep, "list_events", limit=100, cursor=cursor, **filters)
        items += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            return items


def new_event(ep: Episode, **overrides: Any) -> dict[str, Any]:
    args: dict[str, Any] = {
        "title": "Renewal call",
        "start": later(ep, 3, 7),
        "end": later(ep, 3, 8),
        "attendee_emails": [ep.world.team[1].email, ep.world.customers[0].email],
    }
    args.update(overrides)
    return call(ep, "create_event", **args)


# -- seeded data ---------------------------------------------------------------------------------


def test_every_team_member_has_a_primary_calendar_named_after_them(ep: Episode) -> None:
    calendars = call(ep, "list_calendars", limit=100)["items"]
    primary = {c["owner_email"]: c for c in calendars if c["is_primary"]}
    assert set(primary) == {p.email for p in ep.world.team}
    assert all(primary[p.email]["owner_name"] == p.name for p in ep.world.team)
    assert any(not c["is_primary"] for c in calendars)  # the shared Company events calendar


def test_seeded_calendar_is_rich_and_spans_past_and_future(ep: Episode) -> None:
    tables = ep.dump()["calendar"]
    assert 100 <= len(tables["events"]) and 300 <= len(tables["attendees"])
    starts = [e["start"] for e in tables["events"].values()]
    assert min(starts) < ep.world.now < max(starts)
    assert {e["status"] for e in tables["events"].values()} == {"confirmed", "cancelled"}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_seeded_meetings_fit_their_kind_demos_of_plans_and_the_close_at_the_turn_of_the_month(seed: int) -> None:
    with Episode.create(["calendar"], seed) as episode:
        events = list(episode.dump()["calendar"]["events"].values())
        plans = {p.name for p in episode.world.products if p.category == "subscriptions"}
    demos = [e["title"].split(" demo with ")[0] for e in events if " demo with " in e["title"]]
    assert demos and set(demos) <= plans  # nobody demos a USB-C cable
    closes = [int(e["start"][8:10]) for e in events if e["title"] == "Month-end close"]
    assert all(day <= 3 or day >= 25 for day in closes), closes


def test_customer_guests_are_the_crm_contacts_with_the_same_names() -> None:
    with Episode.create(["crm", "calendar"], world_seed=0) as episode:
        contacts = {c["email"]: c for c in episode.dump()["crm"]["contacts"].values()}
        team = {p.email for p in episode.world.team}
        guests = [a for a in episode.dump()["calendar"]["attendees"].values() if a["email"] not in team]
        assert len(guests) > 30
        for guest in guests:
            contact = contacts[guest["email"]]
            assert guest["name"] == f"{contact['first_name']} {contact['last_name']}"


def test_rooms_are_the_worlds_meeting_rooms_and_conference_venues(ep: Episode) -> None:
    rooms = call(ep, "list_rooms")
    places = {p.name: p for p in ep.world.places if p.kind in ("meeting room", "conference venue")}
    assert {r["name"] for r in rooms} == set(places)
    for room in rooms:
        assert room["address"] == places[room["name"]].address
        assert room["capacity"] > 0


def test_seeded_room_bookings_never_overlap(ep: Episode) -> None:
    events = [e for e in ep.dump()["calendar"]["events"].values() if e["room_id"] and e["status"] != "cancelled"]
    assert events
    for a in events:
        for b in events:
            if a["id"] < b["id"] and a["room_id"] == b["room_id"]:
                assert a["end"] <= b["start"] or b["end"] <= a["start"], (a, b)


# -- listing and searching -----------------------------------------------------------------------


def test_list_events_pages_through_every_live_event_once(ep: Episode) -> None:
    first = call(ep, "list_events", limit=7)
    assert len(first["items"]) == 7 and first["next_cursor"] == "7"
    items = all_events(ep)
    live = [e for e in ep.dump()["calendar"]["events"].values() if e["status"] == "confirmed"]
    assert len(items) == len({e["id"] for e in items}) == len(live) == first["total"]
    assert [e["start"] for e in items] == sorted(e["start"] for e in items)


def test_list_events_filters_by_attendee_and_time_range(ep: Episode) -> None:
    team = {p.email for p in ep.world.team}
    customer = next(a["email"] for a in ep.dump()["calendar"]["attendees"].values() if a["email"] not in team)
    mine = all_events(ep, attendee_email=customer)
    assert mine and all(customer in {a["email"] for a in e["attendees"]} for e in mine)
    lo, hi = later(ep, 0, 0), later(ep, 7, 0)
    week = all_events(ep, time_min=lo, time_max=hi)
    assert week and all(e["end"] > lo and e["start"] < hi for e in week)


def test_a_calendar_shows_the_events_its_owner_is_invited_to(ep: Episode) -> None:
    colleague = ep.world.team[3]
    cal = call(ep, "list_calendars", owner_email=colleague.email)["items"][0]
    shown = all_events(ep, calendar_id=cal["id"])
    assert any(e["calendar_id"] != cal["id"] for e in shown)
    assert all(e["calendar_id"] == cal["id"] or colleague.email in {a["email"] for a in e["attendees"]} for e in shown)


def test_cancelled_events_are_hidden_unless_asked_for(ep: Episode) -> None:
    assert all(e["status"] == "confirmed" for e in all_events(ep))
    assert any(e["status"] == "cancelled" for e in all_events(ep, include_cancelled=True))


# -- create / get / update -----------------------------------------------------------------------


def test_created_event_round_trips_through_get_event(ep: Episode) -> None:
    customer = ep.world.customers[4]
    created = new_event(ep, title="Demo for Acme", attendee_emails=[customer.email], description="Agenda")
    got = call(ep, "get_event", event_id=created["id"])
    assert got == created
    assert got["organizer_email"] == ep.world.user.email
    assert got["meeting_url"].startswith("https://")
    by_email = {a["email"]: a for a in got["attendees"]}
    assert by_email[ep.world.user.email]["response_status"] == "accepted"
    assert by_email[customer.email] == {
        "email": customer.email, "name": customer.name, "response_status": "needs_action",
        "organizer": False, "optional": False, "comment": None,
    }


def test_event_on_a_colleagues_calendar_is_organised_by_that_colleague(ep: Episode) -> None:
    colleague = ep.world.team[2]
    cal = call(ep, "list_calendars", owner_email=colleague.email)["items"][0]
    event = new_event(ep, calendar_id=cal["id"])
    assert event["organizer_email"] == colleague.email and event["calendar_id"] == cal["id"]


def test_an_event_must_end_after_it_starts(ep: Episode) -> None:
    refused(ep, "create_event", "invalid_argument", title="Backwards", start=later(ep, 2, 10), end=later(ep, 2, 9))


def test_an_event_cannot_start_in_the_past(ep: Episode) -> None:
    result = refused(
        ep, "create_event", "invalid_argument", title="Too late", start=later(ep, -1, 10), end=later(ep, -1, 11)
    )
    assert ep.world.now in (result.error_message or "")


def test_update_event_changes_only_the_fields_given(ep: Episode) -> None:
    event = new_event(ep, description="Old agenda")
    updated = call(ep, "update_event", event_id=event["id"], title="New title")
    assert updated["title"] == "New title" and updated["description"] == "Old agenda"
    refused(ep, "update_event", "invalid_argument", event_id=event["id"])


# -- cancellation --------------------------------------------------------------------------------


def test_a_cancelled_event_cannot_be_cancelled_again(ep: Episode) -> None:
    event = new_event(ep)
    cancelled = call(ep, "cancel_event", event_id=event["id"], reason="Customer asked to postpone")
    assert cancelled["status"] == "cancelled" and cancelled["cancellation_reason"] == "Customer asked to postpone"
    refused(ep, "cancel_event", "invalid_state", event_id=event["id"])


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("update_event", {"title": "Renamed"}),
        ("move_event", {"new_start": "2030-01-07T10:00:00Z"}),
        ("add_attendees", {"emails": ["someone.new@example.com"]}),
        ("remove_attendee", {"email": "PLACEHOLDER"}),
        ("respond_to_event", {"response": "accepted"}),
        ("book_room", {"room_id": "room_0001"}),
    ],
)
def test_a_cancelled_event_cannot_be_edited(ep: Episode, tool: str, args: dict[str, Any]) -> None:
    event = new_event(ep)
    call(ep, "cancel_event", event_id=event["id"])
    if args.get("email") == "PLACEHOLDER":
        args = {"email": ep.world.team[1].email}
    result = refused(ep, tool, "invalid_state", event_id=event["id"], **args)
    assert "cancelled" in (result.error_message or "")


def test_cancelling_an_event_frees_its_room(ep: Episode) -> None:
    first = new_event(ep, room_id="room_0002")
    refused(ep, "create_event", "conflict", title="Clash", start=first["start"], end=first["end"], room_id="room_0002")
    call(ep, "cancel_event", event_id=first["id"])
    again = call(ep, "create_event", title="Now free", start=first["start"], end=first["end"], room_id="room_0002")
    assert again["room_id"] == "room_0002"


# -- rooms ---------------------------------------------------------------------------------------


def test_a_room_cannot_be_double_booked(ep: Episode) -> None:
    booked = new_event(ep, room_id="room_0001", attendee_emails=[])
    assert booked["location"].startswith(booked["room_name"])
    result = refused(
        ep, "create_event", "conflict", title="Overlap", start=later(ep, 3, 7, 30), end=later(ep, 3, 8, 30),
        room_id="room_0001",
    )
    assert booked["id"] in (result.error_message or "")
    other = new_event(ep, start=later(ep, 3, 8), end=later(ep, 3, 9), attendee_emails=[])  # back-to-back is fine
    assert call(ep, "book_room", event_id=other["id"], room_id="room_0001")["room_id"] == "room_0001"


def test_a_room_cannot_hold_more_people_than_its_capacity(ep: Episode) -> None:
    rooms = call(ep, "list_rooms")
    small = rooms[0]
    crowd = [p.email for p in ep.world.people[: small["capacity"] + 1] if p.email != ep.world.user.email]
    refused(
        ep, "create_event", "conflict", title="Crowded", start=later(ep, 4, 7), end=later(ep, 4, 8),
        attendee_emails=crowd, room_id=small["id"],
    )
    fits = new_event(ep, attendee_emails=crowd[: small["capacity"] - 1], room_id=small["id"])
    refused(ep, "add_attendees", "conflict", event_id=fits["id"], emails=[crowd[-1]])


def test_list_rooms_reports_availability_for_a_time_range(ep: Episode) -> None:
    event = new_event(ep, room_id="room_0001", attendee_emails=[])
    rooms = {r["id"]: r for r in call(ep, "list_rooms", start=event["start"], end=event["end"])}
    assert rooms["room_0001"]["available"] is False
    free = call(ep, "list_rooms", start=event["start"], end=event["end"], only_available=True)
    assert "room_0001" not in {r["id"] for r in free} and free
    assert all(r["capacity"] >= 50 for r in call(ep, "list_rooms", min_capacity=50))


def test_a_room_can_be_released_and_switched(ep: Episode) -> None:
    event = new_event(ep, room_id="room_0001", attendee_emails=[])
    refused(ep, "book_room", "invalid_state", event_id=event["id"], room_id="room_0002")
    released = call(ep, "release_room", event_id=event["id"])
    assert released["room_id"] is None and released["location"] is None
    refused(ep, "release_room", "invalid_state", event_id=event["id"])
    assert call(ep, "book_room", event_id=event["id"], room_id="room_0002")["room_id"] == "room_0002"


# -- moving --------------------------------------------------------------------------------------


def test_moving_an_event_keeps_its_duration_and_asks_guests_again(ep: Episode) -> None:
    event = new_event(ep)
    guest = ep.world.team[1].email
    call(ep, "respond_to_event", event_id=event["id"], response="accepted", attendee_email=guest)
    moved = call(ep, "move_event", event_id=event["id"], new_start=later(ep, 5, 14))
    assert (moved["start"], moved["end"]) == (later(ep, 5, 14), later(ep, 5, 15))
    by_email = {a["email"]: a["response_status"] for a in moved["attendees"]}
    assert by_email[guest] == "needs_action" and by_email[ep.world.user.email] == "accepted"


def test_moving_into_a_slot_where_the_room_is_taken_is_refused(ep: Episode) -> None:
    new_event(ep, room_id="room_0001", attendee_emails=[])
    other = new_event(ep, start=later(ep, 6, 7), end=later(ep, 6, 8), room_id="room_0001", attendee_emails=[])
    refused(ep, "move_event", "conflict", event_id=other["id"], new_start=later(ep, 3, 7, 30))
    refused(ep, "move_event", "invalid_argument", event_id=other["id"], new_start=later(ep, -2, 9))


# -- responses and guests ------------------------------------------------------------------------


def test_a_colleague_can_accept_an_invitation_with_a_comment(ep: Episode) -> None:
    event = new_event(ep)
    colleague = ep.world.team[1].email
    answered = call(
        ep, "respond_to_event", event_id=event["id"], response="tentative", attendee_email=colleague,
        comment="May be late",
    )
    entry = next(a for a in answered["attendees"] if a["email"] == colleague)
    assert entry["response_status"] == "tentative" and entry["comment"] == "May be late"


def test_a_customers_response_cannot_be_set_for_them(ep: Episode) -> None:
    event = new_event(ep)
    refused(ep, "respond_to_event", "permission_denied", event_id=event["id"], response="accepted",
            attendee_email=ep.world.customers[0].email)


def test_the_organiser_cannot_decline_their_own_event(ep: Episode) -> None:
    event = new_event(ep)
    refused(ep, "respond_to_event", "invalid_state", event_id=event["id"], response="declined")


def test_responding_needs_an_invitation(ep: Episode) -> None:
    event = new_event(ep, attendee_emails=[])
    refused(ep, "respond_to_event", "not_found", event_id=event["id"], response="accepted",
            attendee_email=ep.world.team[5].email)


def test_inviting_someone_already_invited_invites_nobody(ep: Episode) -> None:
    event = new_event(ep)
    refused(ep, "add_attendees", "conflict", event_id=event["id"],
            emails=["fresh.person@example.com", ep.world.team[1].email])
    added = call(ep, "add_attendees", event_id=event["id"], emails=["fresh.person@example.com"], optional=True)
    entry = next(a for a in added["attendees"] if a["email"] == "fresh.person@example.com")
    assert entry["optional"] and entry["response_status"] == "needs_action" and entry["name"] is None


def test_the_organiser_cannot_be_removed_but_a_guest_can(ep: Episode) -> None:
    event = new_event(ep)
    refused(ep, "remove_attendee", "invalid_state", event_id=event["id"], email=ep.world.user.email)
    removed = call(ep, "remove_attendee", event_id=event["id"], email=ep.world.team[1].email)
    assert ep.world.team[1].email not in {a["email"] for a in removed["attendees"]}
    refused(ep, "remove_attendee", "not_found", event_id=event["id"], email=ep.world.team[1].email)


# -- availability --------------------------------------------------------------------------------


def test_free_slots_avoid_everyones_busy_time(ep: Episode) -> None:
    people = [ep.world.user.email, ep.world.team[3].email]
    date = later(ep, 1, 0)[:10]
    slots = call(ep, "find_free_slots", attendee_emails=people, date=date, duration_minutes=30)["slots"]
    busy = call(ep, "query_free_busy", emails=people, time_min=f"{date}T00:00:00Z", time_max=f"{date}T23:59:00Z")
    intervals = [(b["start"], b["end"]) for c in busy["calendars"] for b in c["busy"]]
    assert slots
    for slot in slots:
        assert f"{date}T09:00:00Z" <= slot["start"] < slot["end"] <= f"{date}T17:00:00Z"
        assert slot["duration_minutes"] >= 30
        assert all(slot["end"] <= s or e <= slot["start"] for s, e in intervals)


def test_a_new_meeting_removes_its_time_from_the_free_slots(ep: Episode) -> None:
    people = [ep.world.user.email, ep.world.team[4].email]
    date = later(ep, 2, 0)[:10]
    slot = call(ep, "find_free_slots", attendee_emails=people, date=date, duration_minutes=30)["slots"][0]
    start = datetime.strptime(slot["start"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    end = (start + timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    call(ep, "create_event", title="Sync", start=slot["start"], end=end, attendee_emails=people[1:])
    after = call(ep, "find_free_slots", attendee_emails=people, date=date, duration_minutes=30)["slots"]
    assert all(s["end"] <= slot["start"] or s["start"] >= end for s in after)


def test_declined_invitations_do_not_make_anyone_busy(ep: Episode) -> None:
    colleague = ep.world.team[1].email
    event = new_event(ep, attendee_emails=[colleague])
    window = {"emails": [colleague], "time_min": event["start"], "time_max": event["end"]}
    assert call(ep, "query_free_busy", **window)["calendars"][0]["busy"]
    call(ep, "respond_to_event", event_id=event["id"], response="declined", attendee_email=colleague)
    assert call(ep, "query_free_busy", **window)["calendars"][0]["busy"] == []


def test_free_slots_cannot_be_searched_in_the_past(ep: Episode) -> None:
    past = later(ep, -3, 0)[:10]
    refused(ep, "find_free_slots", "invalid_argument", attendee_emails=[ep.world.user.email], date=past)


def test_reads_change_nothing(ep: Episode) -> None:
    before = ep.dump()
    call(ep, "list_events", limit=50)
    call(ep, "find_free_slots", attendee_emails=[ep.world.user.email], date=later(ep, 1, 0)[:10])
    call(ep, "list_rooms", start=later(ep, 1, 9), end=later(ep, 1, 10))
    assert ep.dump() == before


def test_an_event_declares_its_organiser_guests_and_a_final_cancelled_state() -> None:
    from mcp_services.library import calendar

    event = calendar.service.entities["event"].definition
    assert {f.name: f.role for f in event.fields if f.role} == {"organizer_email": "organizer"}
    assert event.state is not None and event.state.terminal == ["cancelled"]
    attendee = calendar.service.entities["attendee"].definition
    assert {f.name for f in attendee.fields if f.role == "attendee"} == {"email", "name"}


def test_search_needs_every_word_but_not_side_by_side(ep: Episode) -> None:
    new_event(ep, title="Renewal call", description="Bring the pricing sheet", location="Harbour office")
    found = all_events(ep, query="renewal harbour")
    assert [e["title"] for e in found] == ["Renewal call"]
    assert all_events(ep, query="renewal nosuchword") == []
