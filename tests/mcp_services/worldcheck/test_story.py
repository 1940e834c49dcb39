"""The story agrees with the data: news of a signed deal is told the day it is won, and a meeting lasts a day at
most. Each check holds on the seeded world and catches the seam it exists for (issue 31's "Joyce-Rowe signed!" on
a deal won in January, a "kickoff" that runs seven weeks)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest

from mcp_services.kernel import Episode
from tests.mcp_services.worldcheck.test_invariants import chat_message, violations_after


@pytest.fixture
def episode() -> Iterator[Episode]:
    with Episode.create(["crm", "chat", "calendar"], 0) as ep:
        yield ep


def hours_before(ep: Episode, moment: datetime) -> float:
    return (ep.world.now_dt - moment).total_seconds() / 3600


def won_deals(ep: Episode) -> list[tuple[str, str]]:
    """(company name, close date) of every won deal in the CRM."""
    companies = ep.dump()["crm"]["companies"]
    return [(companies[d["company_id"]]["name"], d["close_date"]) for d in ep.dump()["crm"]["deals"].values()
            if d["stage"] == "won"]


def test_every_world_has_a_deal_won_this_morning_that_the_days_news_may_announce(episode: Episode) -> None:
    today = episode.world.now[:10]
    (company,) = [c for c, day in won_deals(episode) if day == today]
    found = violations_after(episode, [chat_message(episode, f"{company} signed! Great team effort.", hours_ago=0.5)])
    assert "news" not in found


def test_a_deal_won_weeks_ago_announced_as_signed_today_is_a_news_violation(episode: Episode) -> None:
    # The seam: "Joyce-Rowe signed!" today, on a deal won in January.
    today = episode.world.now[:10]
    wins: dict[str, set[str]] = {}
    for company, day in won_deals(episode):
        wins.setdefault(company, set()).add(day)
    company = next(c for c, days in wins.items() if today not in days and max(days) < today)
    seeded = episode.snapshot()
    found = violations_after(episode, [chat_message(episode, f"{company} signed! The renewal is in.", hours_ago=1)])
    assert any(f"announces {company} signed on {today}" in v for v in found["news"])
    # Said of the day it closed, the same words hold.
    closed = datetime.fromisoformat(f"{max(wins[company])}T17:00:00+00:00")
    episode.reset(seeded)
    found = violations_after(episode, [chat_message(episode, f"We won {company}!", hours_ago=hours_before(episode, closed))])
    assert "news" not in found
    episode.reset(seeded)
    found = violations_after(episode, [chat_message(
        episode, f"{company} signed yesterday!", hours_ago=hours_before(episode, closed + timedelta(days=1)))])
    assert "news" not in found


def test_a_closed_deal_last_changed_before_it_closed_is_a_news_violation(episode: Episode) -> None:
    deal = next(d for d in episode.dump()["crm"]["deals"].values() if d["stage"] == "lost")
    early = dict(deal, id="dl_9001", updated_at=f"{int(deal['close_date'][:4]) - 1}-01-01T10:00:00Z")
    found = violations_after(episode, [{"service": "crm", "table": "deals", "row": early}])
    assert any("dl_9001: closed (lost)" in v and "last changed before" in v for v in found["news"])


def event(ep: Episode, title: str, start: Any, end: Any) -> dict[str, Any]:
    seeded = next(iter(ep.dump()["calendar"]["events"].values()))
    stamp = "%Y-%m-%dT%H:%M:%SZ"
    return {"service": "calendar", "table": "events", "row": dict(
        seeded, id="evt_9001", title=title, room_id=None, start=start.strftime(stamp), end=end.strftime(stamp),
        created_at=(start - timedelta(days=60)).strftime(stamp), updated_at=(start - timedelta(days=1)).strftime(stamp))}


def test_a_kickoff_that_runs_seven_weeks_is_a_durations_violation(episode: Episode) -> None:
    # The seam: a "kickoff" event that runs seven weeks and ended a month ago.
    start = episode.world.now_dt - timedelta(weeks=11)
    found = violations_after(episode, [event(episode, "Onboarding kickoff - Acme", start, start + timedelta(weeks=7))])
    assert any("evt_9001: 'Onboarding kickoff - Acme' runs from" in v and "at most a day" in v for v in found["durations"])


def test_an_event_that_ends_before_it_starts_is_a_durations_violation(episode: Episode) -> None:
    start = episode.world.now_dt - timedelta(days=3)
    found = violations_after(episode, [event(episode, "Budget planning", start, start - timedelta(hours=2))])
    assert any("evt_9001: end" in v and "is before start" in v for v in found["durations"])


def test_an_hour_long_kickoff_holds(episode: Episode) -> None:
    start = episode.world.now_dt - timedelta(days=3)
    found = violations_after(episode, [event(episode, "Onboarding kickoff - Acme", start, start + timedelta(hours=1))])
    assert "durations" not in found


def test_a_kickoff_for_a_customer_that_won_no_recent_deal_is_a_news_violation(episode: Episode) -> None:
    recent = {c for c, day in won_deals(episode) if day >= (episode.world.now_dt - timedelta(days=90)).date().isoformat()}
    company = next(o.name for o in episode.world.organisations[1:] if o.name not in recent)
    start = episode.world.now_dt + timedelta(days=2)
    found = violations_after(episode, [event(episode, f"Onboarding kickoff - {company}", start, start + timedelta(hours=1))])
    assert any(f"'Onboarding kickoff - {company}'" in v and "won no deal" in v for v in found["news"])


def test_the_seeded_kickoffs_follow_a_deal_their_customer_won(episode: Episode) -> None:
    kickoffs = [e for e in episode.dump()["calendar"]["events"].values() if "kickoff" in e["title"].lower()]
    wins = won_deals(episode)
    for kickoff in kickoffs:
        company = kickoff["title"].split(" - ", 1)[1]
        assert any(c == company and day <= kickoff["start"][:10] for c, day in wins), kickoff["title"]


def test_a_task_created_after_it_fell_due_is_a_durations_violation() -> None:
    with Episode.create(["tasks"], 0) as ep:
        seeded = next(t for t in ep.dump()["tasks"]["tasks"].values() if t["due_on"])
        after = datetime.fromisoformat(seeded["due_on"]) + timedelta(days=3)
        late = dict(seeded, id="tsk_9001", created_at=after.strftime("%Y-%m-%dT09:00:00Z"))
        assert not violations_after(ep, [])  # the seeded tasks were all set before they fell due
        found = violations_after(ep, [{"service": "tasks", "table": "tasks", "row": late}])
        assert any("tsk_9001: due_on" in v and "before it was created" in v for v in found["durations"])


@pytest.mark.parametrize("seed", [0, 8])
def test_kickoff_tasks_notes_and_posts_name_customers_who_signed_just_before(seed: int) -> None:
    """The onboarding board, the call notes on the drive and the chat name a kickoff only for a customer that won a
    deal in the weeks before (world 8's latest win is six weeks old: its onboarding board still holds it)."""
    from mcp_services.worldcheck.invariants import check
    from mcp_services.worldcheck.seeded import seeded_world

    found = check(seeded_world(seed, services=["crm", "tasks", "files", "chat", "calendar"]))
    assert not found["news"], [str(v) for v in found["news"][:3]]


def test_a_kickoff_task_for_a_customer_that_signed_nothing_is_a_news_violation() -> None:
    with Episode.create(["crm", "tasks"], 0) as ep:
        task = next(t for t in ep.dump()["tasks"]["tasks"].values() if "kickoff" in t["name"])
        recent = {c for c, day in won_deals(ep) if day >= (ep.world.now_dt - timedelta(days=90)).date().isoformat()}
        company = next(o.name for o in ep.world.organisations[1:] if o.name not in recent)
        found = violations_after(ep, [{"service": "tasks", "table": "tasks",
                                       "row": dict(task, id="tsk_9001", name=f"{company}: kickoff call")}])
        assert any("tsk_9001" in v and "won no deal" in v for v in found["news"])
