"""The world holds together: every invariant holds on seeded worlds of several seeds and sizes, and each check
catches the seams it exists for (a planted seam of each kind is a violation)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from mcp_services.kernel import Episode, World
from mcp_services.kernel.plans.commerce import commerce_plan
from mcp_services.kernel.world import WorldShape
from mcp_services.registry import LIBRARY
from mcp_services.worldcheck.invariants import INVARIANTS, check
from mcp_services.worldcheck.seeded import SeededWorld, episode_state, seeded_world


@pytest.mark.parametrize(("seed", "shape"), [(0, None), (3, WorldShape.sized("small")), (4, WorldShape.varied(4))])
def test_every_invariant_holds_on_seeded_worlds_of_several_seeds_and_sizes(seed: int, shape: WorldShape | None) -> None:
    violations = check(seeded_world(seed, shape))
    assert set(violations) == {inv.name for inv in INVARIANTS}
    broken = {name: [str(v) for v in found[:3]] for name, found in violations.items() if found}
    assert not broken, broken


# -- each check catches its seam -----------------------------------------------------------------------------

#: The services a planted seam touches, mounted together (the rest of the library is not needed to see them).
SERVICES = ("mailbox", "chat", "calendar", "hr", "recruiting", "commerce", "shipping", "accounting", "payments",
            "helpdesk", "files", "crm")


@pytest.fixture
def episode() -> Iterator[Episode]:
    with Episode.create(list(SERVICES), 0) as ep:
        yield ep


def test_these_services_alone_hold_together_too(episode: Episode) -> None:
    found = check(episode_state(episode))
    assert not any(found.values()), {k: [str(v) for v in vs[:2]] for k, vs in found.items() if vs}


def violations_after(episode: Episode, records: list[dict[str, Any]]) -> dict[str, list[str]]:
    """What each invariant finds once ``records`` (setup rows) are in a world that holds: the seam's violations."""
    episode.apply_setup(records)
    return {name: [str(v) for v in found] for name, found in check(episode_state(episode)).items() if found}


def row(ep: Episode, service: str, table: str, **where: Any) -> dict[str, Any]:
    return next(r for r in ep.dump()[service][table].values() if all(r.get(k) == v for k, v in where.items()))


def chat_message(ep: Episode, text: str, hours_ago: float = 2) -> dict[str, Any]:
    channel = row(ep, "chat", "channels", name="finance")
    author = next(iter(ep.dump()["chat"]["users"].values()))
    return {"service": "chat", "table": "messages", "row": {
        "id": "msg_9001", "channel_id": channel["id"], "user_id": author["id"], "text": text, "thread_parent_id": None,
        "broadcast": False, "posted_at": (ep.world.now_dt - timedelta(hours=hours_ago)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "edited_at": None, "deleted": False}}


def email(ep: Episode, sender: str, to: list[str], subject: str, body: str) -> list[dict[str, Any]]:
    """An email that came in three hours ago, in a thread of its own."""
    sent = (ep.world.now_dt - timedelta(hours=3)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return [
        {"service": "mailbox", "table": "threads", "row": {"id": "th_9001", "subject": subject, "updated_at": sent}},
        {"service": "mailbox", "table": "messages", "row": {
            "id": "msg_9001", "thread_id": "th_9001", "from_email": sender, "from_name": None, "to": to, "cc": [],
            "bcc": [], "subject": subject, "body": body, "attachments": [], "label_ids": ["INBOX"], "in_reply_to": None,
            "sent_at": sent}},
    ]


def test_an_alert_stating_an_amount_no_invoice_has_is_a_mention_violation(episode: Episode) -> None:
    # The seam: "#finance alerts say 'Invoice for Rice-Schmidt (392.00 USD) is overdue', but no invoice has that amount."
    org = episode.world.organisations[1].name
    found = violations_after(episode, [chat_message(episode, f"Invoice for {org} (392.17 USD) is overdue by 12 days.")])
    assert any("392.17, an amount no record holds" in v for v in found["mentions"])


def test_an_order_number_the_store_does_not_use_is_a_mention_violation(episode: Episode) -> None:
    # The seam: an email quotes order ORD-22053, but the store numbers its orders #1027.
    customer = episode.world.customers[0]
    found = violations_after(episode, email(episode, customer.email, [episode.world.user.email], "Order ORD-22053",
                                            "Hi, where is order ORD-22053?"))
    assert any("ORD-22053, which no service holds" in v for v in found["mentions"])


def test_a_complaint_that_an_order_on_time_was_late_is_a_complaint_violation(episode: Episode) -> None:
    # The seam: a customer writes that an order "finally turned up, a week later than promised"; it came on time.
    on_time = next(o for o in commerce_plan(episode.world).orders if o.story == "delivered")
    found = violations_after(episode, email(
        episode, on_time.customer.email, [episode.world.user.email], f"Order {on_time.name}",
        f"Order {on_time.name} finally turned up, a week later than promised."))
    assert any(f"says order {on_time.name} was late" in v for v in found["complaints"])


def test_the_seeded_late_deliveries_are_late_and_what_customers_say_of_them_agrees(episode: Episode) -> None:
    late = [f for f in episode.dump()["commerce"]["fulfillments"].values()
            if f["delivered_at"] and f["estimated_delivery_at"] and f["delivered_at"] > f["estimated_delivery_at"]]
    assert len(late) >= 3  # the stories of late deliveries stand on real records
    order = row(episode, "commerce", "orders", id=late[0]["order_id"])
    found = violations_after(episode, email(episode, order["email"], [episode.world.user.email], f"Order {order['name']}",
                                            f"Order {order['name']} finally turned up, a week later than promised."))
    assert "complaints" not in found


def test_a_rule_sent_to_the_team_that_reaches_one_person_is_an_audience_violation(episode: Episode) -> None:
    # The seam: a rule email "to the team" was sent to one person.
    manager = episode.world.team_member("support lead")
    hi_all = "Hi all,\n\nA reminder of our refund rule: refunds above 250.00 USD need the finance lead.\n\nThanks"
    found = violations_after(episode, email(episode, manager.email, [episode.world.user.email], "Refund rule", hi_all))
    assert any("written to the team but goes to 1 people" in v for v in found["audiences"])


def test_the_composers_rule_email_reaches_the_whole_team() -> None:
    """The composer plants a manager's rule as an email to every colleague (the fix of the seam above)."""
    from composer.archetypes.common import policy_email

    class Recorder:
        world = World.from_seed(0)

        def __init__(self) -> None:
            self.rng = __import__("random").Random(0)
            self.calls: list[dict[str, Any]] = []

        def event(self, *args: Any, **kwargs: Any) -> None:
            self.calls.append(kwargs)

    s = Recorder()
    manager = s.world.team_member("support lead")
    policy_email(s, manager, "Refund rule", "Hi all, ...")  # type: ignore[arg-type]
    assert set(s.calls[0]["to"]) == {p.email for p in s.world.team} - {manager.email}


def test_a_request_to_move_a_meeting_from_someone_not_invited_is_an_audience_violation(episode: Episode) -> None:
    # The seam: the person asking to move a meeting is not one of its attendees.
    events = episode.dump()["calendar"]["events"]
    attendees = episode.dump()["calendar"]["attendees"].values()
    title = next(e["title"] for e in events.values() if e["title"].startswith("Quarterly business review"))
    invited = {a["email"] for a in attendees if events[a["event_id"]]["title"] == title}
    stranger = next(p for p in episode.world.customers if p.email not in invited)
    found = violations_after(episode, email(episode, stranger.email, [episode.world.user.email], f"Re: {title}",
                                            "Hi,\n\nCould we move our meeting to Friday?\n\nThanks"))
    assert any(f"asks to move {title!r}, which they do not attend" in v for v in found["audiences"])
    assert any("answers no message" in v for v in found["replies"])  # and its "Re:" has no thread


def test_time_off_decided_in_the_future_and_interviews_created_in_the_future_are_timeline_violations(episode: Episode) -> None:
    # The seams: time off decided five hours from now, interviews created in the future.
    later = (episode.world.now_dt + timedelta(hours=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    request = dict(row(episode, "hr", "time_off_requests", status="approved"), id="tor_9001", decided_at=later)
    interview = dict(next(iter(episode.dump()["recruiting"]["interviews"].values())), id="int_9001", created_at=later)
    found = violations_after(episode, [{"service": "hr", "table": "time_off_requests", "row": request},
                                       {"service": "recruiting", "table": "interviews", "row": interview}])
    assert any("tor_9001: decided_at" in v and "though it already happened" in v for v in found["timeline"])
    assert any("int_9001: created_at" in v and "though it already happened" in v for v in found["timeline"])


def test_a_duplicate_charge_claim_needs_the_duplicate(episode: Episode) -> None:
    twins = {c.email for c in episode.world.plan.duplicates}
    payer = next(p for p in episode.world.customers if p.email not in twins)
    found = violations_after(episode, email(episode, payer.email, [episode.world.user.email], "Charged twice",
                                            "Hi, we were charged twice for our subscription this month."))
    assert any("payments holds no duplicate charge of theirs" in v for v in found["complaints"])


def test_a_linked_value_another_service_does_not_hold_is_a_shared_violation(episode: Episode) -> None:
    shipment = dict(next(iter(episode.dump()["shipping"]["shipments"].values())), id="shp_9001", order_number="#9999")
    found = violations_after(episode, [{"service": "shipping", "table": "shipments", "row": shipment}])
    assert any("order_number '#9999' is no commerce order's name" in v for v in found["shared"])


def test_the_check_reads_every_library_service() -> None:
    seeded: SeededWorld = seeded_world(0)
    assert {t.service for t in seeded} == set(LIBRARY)
