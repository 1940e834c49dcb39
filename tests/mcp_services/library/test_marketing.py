"""Behaviour of marketing a user would notice: consent is honoured, segments match their tags, campaigns go
from draft to scheduled or sent under Mailchimp's rules, and webinar invitations agree with meetings."""

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
    with Episode.create(["marketing", "meetings"], world_seed=0) as episode:
        yield episode


@pytest.fixture
def mc(ep: Episode) -> Calls:
    return Calls(ep, "marketing")


def newsletter(mc: Calls) -> dict[str, Any]:
    return next(a for a in mc("list_audiences") if a["name"].endswith("Newsletter"))


def later(ep: Episode, days: int, hour: int = 14, minute: int = 0) -> str:
    moment = (ep.world.now_dt + timedelta(days=days)).replace(hour=hour, minute=minute, second=0)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_audiences_hold_the_plan_members_and_count_only_the_subscribed(mc: Calls) -> None:
    plan = marketing_plan(mc.episode.world)
    for audience in mc("list_audiences"):
        key = "newsletter" if audience["name"].endswith("Newsletter") else "product"
        planned = plan.members_of(key)
        members = mc.all("search_members", audience_id=audience["id"])
        assert sorted(m["email_address"] for m in members) == sorted(s.email for s in planned)
        assert audience["member_count"] == sum(s.status == "subscribed" for s in planned)
        assert audience["unsubscribe_count"] == sum(s.status == "unsubscribed" for s in planned)


def test_search_filters_by_tag_status_vip_and_finds_a_person_on_every_audience(mc: Calls) -> None:
    pro = mc.all("search_members", tag="pro PLAN")
    assert pro and all("Pro plan" in m["tags"] for m in pro)
    assert all(m["status"] == "unsubscribed" for m in mc.all("search_members", status="unsubscribed"))
    assert all(m["vip"] for m in mc.all("search_members", vip=True))
    both = next(p for p in mc.episode.world.customers if len(mc.all("search_members", query=p.email)) == 2)
    found = mc.all("search_members", query=both.name)
    assert {m["audience_id"] for m in found if m["email_address"] == both.email} == {a["id"] for a in mc("list_audiences")}


def test_an_unsubscribed_member_stays_and_is_never_subscribed_again_without_confirming(mc: Calls) -> None:
    member = mc("search_members", audience_id=newsletter(mc)["id"], status="subscribed")["items"][0]
    done = mc("unsubscribe_member", member_id=member["id"], reason="I no longer want to receive these emails")
    assert (done["status"], done["unsubscribe_reason"]) == ("unsubscribed", "I no longer want to receive these emails")
    assert "nothing to unsubscribe" in mc.refused("unsubscribe_member", "invalid_state", member_id=member["id"])
    mc("archive_member", member_id=member["id"])
    message = mc.refused("add_member", "permission_denied", audience_id=member["audience_id"], email_address=member["email_address"],
                         first_name=member["first_name"], last_name=member["last_name"], status="subscribed")
    assert "pending" in message
    back = mc("add_member", audience_id=member["audience_id"], email_address=member["email_address"],
              first_name=member["first_name"], last_name=member["last_name"])
    assert (back["id"], back["status"]) == (member["id"], "pending")


def test_resubscribing_asks_for_confirmation_and_bounced_addresses_cannot_come_back(mc: Calls) -> None:
    gone = mc("search_members", status="unsubscribed")["items"][0]
    assert mc("resubscribe_member", member_id=gone["id"])["status"] == "pending"
    cleaned = mc("search_members", status="cleaned")["items"][0]
    assert "working address" in mc.refused("resubscribe_member", "permission_denied", member_id=cleaned["id"])
    existing = mc("search_members", status="subscribed")["items"][0]
    mc.refused("add_member", "conflict", audience_id=existing["audience_id"], email_address=existing["email_address"],
               first_name="Someone", last_name="Else")


def test_tags_are_added_and_removed_case_insensitively(mc: Calls) -> None:
    member = mc("search_members", tag="Customer")["items"][0]
    tagged = mc("update_member_tags", member_id=member["id"], add=["Advisory board"], remove=["customer"])
    assert "Advisory board" in tagged["tags"] and "Customer" not in tagged["tags"]
    assert "no tag" in mc.refused("update_member_tags", "invalid_argument", member_id=member["id"], remove=["Never had it"])


def test_a_segment_reaches_the_subscribed_members_with_its_tags(mc: Calls) -> None:
    news = newsletter(mc)
    segment = mc("create_segment", audience_id=news["id"], name="Pro customers in the beta", tags=["Pro plan", "Beta program"])
    reached = mc.all("list_segment_members", segment_id=segment["id"])
    expected = [m for m in mc.all("search_members", audience_id=news["id"], status="subscribed")
                if "Pro plan" in m["tags"] and "Beta program" in m["tags"]]
    assert sorted(m["id"] for m in reached) == sorted(m["id"] for m in expected) and segment["member_count"] == len(expected)
    either = mc("create_segment", audience_id=news["id"], name="Pro or beta", tags=["Pro plan", "Beta program"], match="any")
    assert either["member_count"] >= segment["member_count"]
    mc.refused("create_segment", "conflict", audience_id=news["id"], name="pro CUSTOMERS in the beta", tags=["Pro plan"])
    assert "No member" in mc.refused("create_segment", "invalid_argument", audience_id=news["id"], name="X", tags=["Nobody has this"])


def test_a_campaign_is_scheduled_on_a_quarter_hour_ahead_and_edited_only_as_a_draft(mc: Calls) -> None:
    ep = mc.episode
    news = newsletter(mc)
    draft = mc("create_campaign", audience_id=news["id"], title="Spring update", subject_line="What's new this spring",
               content="Hi *|FNAME|*, three updates worth five minutes of your time.")
    assert (draft["status"], draft["reply_to"], draft["recipient_count"]) == ("draft", news["from_email"], news["member_count"])
    assert mc("get_campaign_checklist", campaign_id=draft["id"])["is_ready"]
    mc.refused("schedule_campaign", "invalid_argument", campaign_id=draft["id"], schedule_time=later(ep, 2, 14, 10))
    mc.refused("schedule_campaign", "invalid_argument", campaign_id=draft["id"], schedule_time=later(ep, -1))
    scheduled = mc("schedule_campaign", campaign_id=draft["id"], schedule_time=later(ep, 2, 14, 45))
    assert (scheduled["status"], scheduled["schedule_time"]) == ("scheduled", later(ep, 2, 14, 45))
    assert "unschedule" in mc.refused("update_campaign", "invalid_state", campaign_id=draft["id"], subject_line="Changed")
    mc.refused("send_campaign", "invalid_state", campaign_id=draft["id"])
    assert mc("unschedule_campaign", campaign_id=draft["id"])["status"] == "draft"
    assert mc("update_campaign", campaign_id=draft["id"], subject_line="Changed")["subject_line"] == "Changed"
    assert mc("delete_campaign", campaign_id=draft["id"])["id"] == draft["id"]


def test_sending_reaches_only_who_is_subscribed_then(mc: Calls) -> None:
    news = newsletter(mc)
    segment = next(s for s in mc("list_segments", audience_id=news["id"]) if s["name"] == "Pro plan customers")
    members = mc.all("list_segment_members", segment_id=segment["id"])
    leaving = members[0]
    mc("unsubscribe_member", member_id=leaving["id"], reason="Other")
    draft = mc("create_campaign", audience_id=news["id"], segment_id=segment["id"], title="Pro tips", subject_line="Three Pro tips",
               content="Hi *|FNAME|*, here are three tips for the Pro plan.")
    sent = mc("send_campaign", campaign_id=draft["id"])
    assert (sent["status"], sent["emails_sent"]) == ("sent", len(members) - 1)
    got = {r["email_address"] for r in mc.all("list_campaign_recipients", campaign_id=draft["id"])}
    assert got == {m["email_address"] for m in members[1:]}
    assert mc("list_campaign_recipients", campaign_id=draft["id"], email_address=leaving["email_address"])["items"] == []
    assert mc("get_campaign_report", campaign_id=draft["id"])["emails_sent"] == len(members) - 1
    mc.refused("send_campaign", "invalid_state", campaign_id=draft["id"])
    mc.refused("delete_campaign", "invalid_state", campaign_id=draft["id"])
    empty = mc("create_campaign", audience_id=news["id"], title="Empty", subject_line="Nobody gets this",
               content="Hi *|FNAME|*, nobody should receive this email at all.",
               segment_id=mc("create_segment", audience_id=news["id"], name="VIP prospects", tags=["Prospect"], vip_only=True)["id"])
    assert "Nobody subscribed" in mc.refused("send_campaign", "invalid_state", campaign_id=empty["id"])


def test_past_campaigns_list_who_got_them_and_the_webinar_invitations_link_the_zoom_registration(ep: Episode, mc: Calls) -> None:
    sent = mc.all("list_campaigns", status="sent")
    assert len(sent) >= 5 and all(c["send_time"] < ep.world.now for c in sent)
    for campaign in sent:
        recipients = mc.all("list_campaign_recipients", campaign_id=campaign["id"])
        assert len(recipients) == campaign["emails_sent"] > 0
    webinars = ep.call("meetings", "list_meetings", {"kind": "webinar"}).data["items"]
    for webinar in webinars:
        invitation = mc("list_campaigns", query=f"invitation {webinar['topic']}")["items"]
        assert len(invitation) == 1 and webinar["registration_url"] in invitation[0]["content"]
        emails = {r["email"] for r in ep.call("meetings", "list_registrants", {"meeting_id": webinar["id"]}).data["items"]}
        got = {r["email_address"] for r in mc.all("list_campaign_recipients", campaign_id=invitation[0]["id"])}
        assert emails <= got  # registrants registered from the invitation they received
    assert mc.all("list_campaigns", status="scheduled") and mc.all("list_campaigns", status="draft")


def test_a_website_signup_arrives_as_a_pending_member(ep: Episode, mc: Calls) -> None:
    news = newsletter(mc)
    key = ep.run_event("marketing", "member_signed_up", audience=news["name"], email_address="Jo.Park@gmail.example",
                       first_name="Jo", last_name="Park", tags=["Prospect"], hours_ago=3)
    assert_added_only(ep, "marketing")
    member = mc("get_member", member_id=key)
    assert (member["email_address"], member["status"], member["source"]) == ("jo.park@gmail.example", "pending", "Signup form")
    assert member["opted_in_at"] < ep.world.now
