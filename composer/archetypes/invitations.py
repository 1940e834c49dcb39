"""Invitations answered as the calendar says: accepted where the time is free, declined where it clashes.

A colleague asks whether we can make the meeting they invited us to. The calendar's free/busy decides: where something
we already accepted overlaps it, the invitation is declined with a word on the clash; otherwise it is accepted. The
tool takes either answer: only the calendar says which is true.
"""

from __future__ import annotations

from composer.archetypes.common import clock, short_date
from composer.plan import Lit
from composer.scenario import Rec, Said, Scenario, Skip, archetype
from composer.stages.channels import COLLEAGUE, Ask, arrive, can_arrive, reply, reply_clause
from composer.stages.lookup import lookup


def _overlaps(a: Rec, b: Rec) -> bool:
    return str(a["start"]) < str(b["end"]) and str(b["start"]) < str(a["end"])


@archetype(
    "invitation-clash",
    family="operations",
    title="A colleague asks if we can make their meeting: accept the invitation if the time is free, decline it if it clashes",
    services=("calendar",),
    fits=can_arrive(COLLEAGUE),
)
def invitation_clash(s: Scenario) -> None:
    me = s.world.user.email
    team = {p.email: p for p in s.world.team if p.email != me}
    upcoming = [e for e in s.records("calendar", "event", where={"status": "confirmed"}) if str(e["start"]) > s.world.now]
    mine = [e for e in upcoming if any(a["email"] == me and a["response_status"] == "accepted" for a in e["attendees"])]
    invites = [e for e in upcoming if e["organizer_email"] in team
               and any(a["email"] == me and a["response_status"] == "needs_action" for a in e["attendees"])]
    clashing = [(e, c) for e in invites for c in mine if c.key != e.key and _overlaps(e, c)]
    free = [e for e in invites if not any(c.key != e.key and _overlaps(e, c) for c in mine)]
    event = s.pick(free, "no invitation waiting for an answer")
    other = None
    if s.rng.random() < 0.5:  # something we accepted since overlaps it: a copy of one of our meetings, moved there
        model = s.pick([c for c in mine if c["organizer_email"] == me], "no meeting of ours to model a clash on")
        mine_row = s.records("calendar", "attendee", where={"event_id": model.key, "email": me})
        if not mine_row:
            raise Skip("no attendance row to copy")
        other = s.copy(model, start=event["start"], end=event["end"])
        s.copy(mine_row[0], event_id=other.key)
    del clashing
    organizer = team[event["organizer_email"]]
    when = f"{short_date(event['start'])} at {clock(event['start'])}"
    trigger = arrive(s, organizer, Ask(
        subject=event["title"],
        text=s.rng.choice((
            f"I sent you an invite for \"{event['title']}\" on {when} UTC. Can you make it? Please answer it in the calendar "
            "either way.",
            f"Are you able to join \"{event['title']}\" ({when} UTC)? Just accept or decline the invite so I know.",
        )),
        team="general",
    ), channels=COLLEAGUE)
    found = lookup(s, event, {"query": event["title"], "attendee_email": me, "time_min": s.world.now},
                   say=f"find the invitation to \"{event['title']}\"")
    s.call("calendar", "query_free_busy", {"emails": [me], "time_min": found.ref("start"), "time_max": found.ref("end")},
           say="check whether you are free then", stage="decide")
    if other is not None:
        lookup(s, other, {"attendee_email": me, "time_min": found.ref("start"), "time_max": found.ref("end")},
               say="see what else you have then", stage="decide")
    s.decide("premise", f"the time of \"{event['title']}\" is free", default=other is None)
    s.brief.intro = f"{trigger.intro} about their invitation to \"{event['title']}\""
    s.brief.goal = f"Answer the invitation as your calendar allows and {reply_clause(trigger, 'whether you can make it')}"
    s.brief.anchors += [organizer.name]
    if other is None:
        s.call("calendar", "respond_to_event", {"event_id": found.ref("id"), "response": "accepted"},
               say="answer the invitation")
        reply(s, trigger, [f"Yes, I can make it - I've accepted the invite for {when}."],
              say=reply_clause(trigger, "whether you can make it"),
              facts=[Said("the answer", Lit("approve"), "decision")], subject=event["title"])
        return
    s.literal_steps[len(s.specs)] = s.spec("calendar", "respond_to_event", {"event_id": event.key, "response": "accepted"})
    s.call("calendar", "respond_to_event", {"event_id": found.ref("id"), "response": "declined"},
           say="answer the invitation")
    reply(s, trigger, [f"Sorry, I can't make it: it clashes with \"{other['title']}\", which was already in my calendar, so I've "
                       "declined the invite."],
          say=reply_clause(trigger, "whether you can make it"),
          facts=[Said("the answer", Lit("deny"), "decision")], subject=event["title"])
