"""Two tickets from one customer that a colleague takes for duplicates: merged only where they are.

A customer's second ticket either chases the first (the same problem, asked again) or raises something else. The
colleague's premise, that they are duplicates, is checked against what the tickets say: duplicates are merged into the
older ticket (it holds the history), and a second question stays a ticket of its own.
"""

from __future__ import annotations

from composer.archetypes.common import teammate
from composer.plan import ListOf, Lit
from composer.scenario import Said, Scenario, archetype
from composer.stages.channels import COLLEAGUE, Ask, arrive, can_arrive, reply, reply_clause
from composer.stages.lookup import lookup

#: Something else a customer asks in a ticket of its own.
_OTHER = (
    ("Adding a user to our account", "Could you add our new colleague to our account? She starts on Monday."),
    ("Copy of our contract", "Could you send me a copy of the contract we signed last year? Our auditors need it."),
    ("Change of billing address", "We have moved offices. Please update the billing address on our account."),
)


@archetype(
    "duplicate-ticket-check",
    family="support",
    title="A colleague asks to merge a customer's two tickets as duplicates: merge them into the older one only if they are",
    services=("helpdesk",),
    fits=can_arrive(COLLEAGUE),
)
def duplicate_ticket_check(s: Scenario) -> None:
    people = {p.email: p for p in s.world.customers}
    tickets = [t for t in s.records("helpdesk", "ticket") if t["status"] in ("new", "open", "pending")
               and t["requester_email"] in people]
    first = s.pick(tickets, "no open ticket of a customer")
    person = people[first["requester_email"]]
    same = s.rng.random() < 0.55
    if same:
        subject = f"Re: {first['subject']}"
        text = (f"I wrote in about this already and haven't heard back: {first['subject'].lower()}. Any news? "
                f"{person.first_name}")
    else:
        subject, body = s.rng.choice(_OTHER)
        text = f"{body} Thanks, {person.first_name}"
    second = s.event("helpdesk", "ticket_received", "ticket", requester_email=person.email, requester_name=person.name,
                     subject=subject, description=text, channel="email", priority="normal", hours_ago=1.0)
    sender = teammate(s)
    trigger = arrive(s, sender, Ask(
        subject=f"{person.name}'s tickets",
        text=s.rng.choice((
            f"{person.name}'s new ticket \"{subject}\" looks like a duplicate of their \"{first['subject']}\". Can you merge "
            "them?",
            f"Could you merge {person.first_name}'s new ticket \"{subject}\" into their other one? I think they wrote in twice "
            "about the same thing.",
        )),
        team="support",
    ), channels=COLLEAGUE)
    s.brief.intro = f"{trigger.intro} about {person.name}'s two tickets"
    s.brief.goal = f"Merge {person.first_name}'s tickets if they are duplicates and {reply_clause(trigger, 'what you found')}"
    s.brief.anchors += [person.name]
    older = lookup(s, first, {"requester_email": person.email, "query": first["subject"]}, say=f"open {person.first_name}'s "
                   "first ticket", stage="decide")
    newer = lookup(s, second, {"requester_email": person.email, "query": subject}, say="open the new one", stage="decide")
    s.decide("premise", f"{person.first_name}'s two tickets are about the same thing", default=same)
    if not same:
        s.literal_writes.append(s.spec("helpdesk", "merge_tickets", {"target_ticket_id": first.key,
                                                                      "source_ticket_ids": [second.key]}))
        reply(s, trigger, [f"They aren't duplicates: \"{first['subject']}\" and \"{subject}\" are about different things, so "
                           "I've left both tickets open."],
              say=reply_clause(trigger, "what you found"), facts=[Said("the new ticket's subject", Lit(subject))],
              subject=f"{person.name}'s tickets")
        return
    s.call("helpdesk", "merge_tickets", {"target_ticket_id": older.ref("id"), "source_ticket_ids": ListOf((newer.ref("id"),))},
           say="merge the new ticket into the older one, which holds the history")
    reply(s, trigger, [f"Merged: \"{subject}\" chases the same problem, so it is now part of ticket ", older.ref("id"),
                       f" (\"{first['subject']}\")."],
          say=reply_clause(trigger, "what you found"), facts=[Said("the ticket they are merged into", older.ref("id"))],
          subject=f"{person.name}'s tickets")
