"""A payment reminder left in the drafts: sent as it is only where what it says is still true.

The user drafted a reminder about an invoice some days ago and never sent it. A colleague asks for it to go out. Since
the draft was written the customer may have paid part of it (the reminder must ask for what is still due, not the
total it quotes) or all of it (the reminder must not go: it is discarded and the colleague hears when it was paid).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from composer.archetypes.common import money, short_date, teammate
from composer.archetypes.finance import _billing_person
from composer.plan import Lit
from composer.scenario import Rec, Said, Scenario, Skip, archetype
from composer.stages.channels import COLLEAGUE, Ask, arrive, reply, reply_clause
from composer.stages.lookup import lookup
from mcp_services.kernel.world import Person


def _before(iso: str, days: int) -> str:
    return (datetime.strptime(iso[:10], "%Y-%m-%d") - timedelta(days=days)).strftime("%Y-%m-%dT09:15:00Z")


def _reminder(person: Person, invoice: Rec, amount: float, sender: str) -> str:
    return (f"Hi {person.first_name},\n\nA friendly reminder that invoice {invoice.key} has {money(amount, invoice['currency'])} "
            f"outstanding, due on {short_date(invoice['due_date'])}. Could you let us know when we can expect payment?\n\n"
            f"Thanks,\n{sender}")


@archetype(
    "draft-reminder-check",
    family="finance",
    title="A payment reminder waits in the drafts: send it if it still holds, fix the amount if they paid part, "
          "discard it if they paid",
    services=("mailbox", "accounting"),
)
def draft_reminder_check(s: Scenario) -> None:
    payments: dict[str, list[Rec]] = {}
    for p in s.records("accounting", "payment"):
        if p["invoice_number"]:
            payments.setdefault(p["invoice_number"], []).append(p)
    now = s.world.now[:10]
    recent = (datetime.strptime(now, "%Y-%m-%d") - timedelta(days=30)).strftime("%Y-%m-%d")
    invoices = [i for i in s.records("accounting", "invoice") if i["status"] in ("AUTHORISED", "PAID")]
    kinds = {
        "as written": [i for i in invoices if i["status"] == "AUTHORISED" and not i["amount_paid"] and not i["amount_credited"]],
        "part paid": [i for i in invoices if i["status"] == "AUTHORISED" and i["amount_paid"] and not i["amount_credited"]
                      and i.key in payments and max(p["date"] for p in payments[i.key]) > recent],
        "paid": [i for i in invoices if i["status"] == "PAID" and i["fully_paid_on"] and i["fully_paid_on"] > recent
                 and i.key in payments],
    }
    kind = s.rng.choice([k for k, found in kinds.items() if _billing_person(s, found)] or ["none"])
    if kind == "none":
        raise Skip("no invoice a reminder could be about")
    invoice, person = s.pick(_billing_person(s, kinds[kind]), "no invoice with a billing contact")
    last_paid = max((p["date"] for p in payments.get(invoice.key, [])), default=now)
    written = _before(last_paid if kind != "as written" else now, s.rng.randint(1, 4))
    if written[:10] <= invoice["date"]:
        raise Skip("the invoice is newer than the draft would be")
    total = float(invoice["total"])
    seeded = s.records("mailbox", "draft")
    if not seeded:
        raise Skip("no draft to model the reminder on")
    me = s.world.user
    draft = s.copy(seeded[0], thread_id=None, in_reply_to=None, to=[person.email], cc=[], bcc=[],
                   subject=f"Payment reminder: invoice {invoice.key}", body=_reminder(person, invoice, total, me.name),
                   attachments=[], created_at=written, updated_at=written)
    sender = teammate(s)
    org = s.world.organisation(person.organisation_id)
    trigger = arrive(s, sender, Ask(
        subject=f"Reminder to {org.name}",
        text=s.rng.choice((
            f"Did the payment reminder to {person.name} ({org.name}) about invoice {invoice.key} ever go out? If it's still "
            "sitting in your drafts, please send it - as long as what it says is still right.",
            f"I think your reminder to {org.name} about {invoice.key} is still in your drafts. Can you get it out today, once "
            "you've checked it still holds?",
        )),
        team="finance",
    ), channels=COLLEAGUE)
    s.brief.intro = f"{trigger.intro} about a payment reminder to {org.name}"
    s.brief.goal = (f"Deal with the reminder to {person.first_name} so that nothing untrue goes out, and "
                    f"{reply_clause(trigger, 'what you did')}")
    s.brief.anchors += [sender.name]
    found = lookup(s, draft, {"query": invoice.key, "subject": f"Payment reminder: invoice {invoice.key}"},
                   say=f"find the reminder about {invoice.key} in your drafts")
    lookup(s, invoice, {"invoice_number": invoice.key, "query": invoice.key}, say=f"check where {invoice.key} stands",
           stage="decide")
    s.decide("premise", f"the reminder about {invoice.key} still says what is true", default=kind == "as written")
    if kind == "paid":
        s.literal_writes.append(s.spec("mailbox", "send_draft", {"draft_id": draft.key}))
        s.call("mailbox", "delete_draft", {"draft_id": found.ref("id")}, say="discard the reminder, as nothing is owed")
        reply(s, trigger, [f"It's been paid: {invoice.key} was paid in full on {short_date(invoice['fully_paid_on'])}, after I "
                           "drafted the reminder, so I've discarded it rather than send it."],
              say=reply_clause(trigger, "what you did"),
              facts=[Said("the day it was paid", Lit(invoice["fully_paid_on"]), "date")], subject=f"Reminder to {org.name}")
        return
    due = float(invoice["amount_due"])
    ready = found
    if kind == "part paid":
        s.literal_steps[len(s.specs)] = s.spec("mailbox", "send_draft", {"draft_id": draft.key})
        # The corrected draft is what goes out: the send names it, so the correction is checked through the sent text.
        ready = s.call("mailbox", "update_draft", {"draft_id": found.ref("id"), "body": _reminder(person, invoice, due, me.name)},
                       say="correct the amount in the reminder to what is still due")
    s.call("mailbox", "send_draft", {"draft_id": ready.ref("id")}, say=f"send the reminder to {person.first_name}",
                  facts=[Said("what is still due", Lit(due), "money")])
    # The word to the colleague names the invoice, not the figure: the figure is checked in the reminder that went out.
    words = ("it went out as written" if kind == "as written" else
             "they had paid part of it since I drafted it, so I corrected the amount to what is still due before sending it")
    reply(s, trigger, [f"Sent: the reminder about {invoice.key} is out to {person.first_name}; {words}."],
          say=reply_clause(trigger, "what you did"),
          facts=[Said("the invoice", Lit(invoice.key))], subject=f"Reminder to {org.name}")
