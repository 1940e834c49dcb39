"""Finance workflows: refunds, chasing and recording payments, payment links, copies of invoices.

Customers reach us on any channel they use (``stages.channels.CUSTOMER``), colleagues by email or chat;
the invoice, the charge or the payment is found through whatever read reaches it, the write is chosen
by intent on that record, and every answer states what it reports: the refund id and amount, the
invoice chased and what is still due, what is left to pay after a part payment. The rules (refund
approval, copying the finance lead on late reminders) sit on both sides of their thresholds, near
them, and no tool enforces them.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime, timedelta

from composer.archetypes.common import money, org_of, short_date
from composer.plan import ListOf, Lit
from composer.scenario import Rec, Said, Scenario, Skip, archetype, detail
from composer.stages.acts import act, tell
from composer.stages.channels import COLLEAGUE, Ask, Trigger, arrive, channels_for, reply, reply_clause
from composer.stages.lookup import lookup, shows
from composer.stages.rules import colleague, consult, instead, limit_near, near_first
from mcp_services.kernel.world import Person


def _later(iso: str, minutes: int) -> str:
    moment = datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ") + timedelta(minutes=minutes)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@archetype(
    "double-charge-refund",
    family="finance",
    title="A customer was charged twice for one invoice: refund the duplicate and tell them",
    services=("payments",),
)
def double_charge_refund(s: Scenario) -> None:
    charges = s.records("payments", "charge", where={"status": "succeeded"})
    per_invoice = Counter(c["invoice_number"] for c in charges if c["invoice_number"])
    fits = [
        c for c in charges
        if c["invoice_number"] and per_invoice[c["invoice_number"]] == 1 and not c["amount_refunded"] and not c["disputed"]
    ]
    charge = s.pick(fits, "no invoice paid by one clean charge")
    person = s.person(charge["customer_email"])
    org = org_of(s, person)
    s.subject = person
    invoice, amount = charge["invoice_number"], money(charge["amount"], charge["currency"])
    # Now and then the customer is wrong: the second charge of the same amount pays another invoice (a plan billed
    # monthly), so nothing is refunded and they hear what the second charge was for.
    used = {c["invoice_number"] for c in charges if c["invoice_number"]}
    other = _unused_invoice(invoice, used) if s.rng.random() < FALSE_DUPLICATE else None
    later = _later(charge["created"], s.rng.randint(2, 9))
    duplicate = s.copy(charge, created=later) if other is None else s.copy(charge, created=later, invoice_number=other)
    card = charge["card"][-4:]
    trigger = arrive(s, person, Ask(
        subject=s.rng.choice((f"Charged twice for invoice {invoice}", f"Duplicate payment - {invoice}", "Double charge on our card")),
        text=s.rng.choice((
            f"Looking at our card statement, invoice {invoice} ({amount}) was charged twice on "
            f"{short_date(charge['created'])}. Could you refund the second charge?",
            f"We paid invoice {invoice} once, but the card ending {card} shows two charges of {amount}. "
            "Please refund the duplicate.",
        )),
        short=f"Invoice {invoice} was charged twice on our card ({amount} each). Can you refund one?",
        topic="Billing",
        relay=f"{person.first_name} says invoice {invoice} ({amount}) was charged twice on the card ending {card} and wants the duplicate refunded.",
    ))

    s.brief.intro = f"{trigger.intro} about being charged twice"
    s.brief.goal = (f"Look into the double charge, refund the duplicate if there is one, and "
                    f"{reply_clause(trigger, 'what you found (the refund reference and the amount, if you refunded it)')}")
    s.brief.constraints.append("Leave the original charge alone")
    s.brief.anchors += [person.name, org.name]
    if other is not None:
        found = lookup(s, duplicate, {"customer_email": person.email, "query": person.email},
                       say=f"look up the charges on {person.first_name}'s card", name="the second charge")
        s.decide("premise", f"invoice {invoice} was charged twice", default=False)
        s.literal_writes.append(s.spec("payments", "refund_charge", {"charge_id": found.ref("id")}))
        reply(s, trigger,
              [f"Hi {person.first_name},\n\nI looked into it: the second charge of {amount} on the card ending {card} pays "
               "invoice ", found.ref("invoice_number"), f", not {invoice} a second time. Nothing was charged twice, so I "
               "have not refunded anything."],
              say=reply_clause(trigger, "what the second charge was for"),
              facts=[Said("the invoice the second charge pays", found.ref("invoice_number"))], subject=f"Invoice {invoice}")
        return
    s.decide("premise", f"invoice {invoice} was charged twice", default=True)
    lead = colleague(s, "finance lead")
    # The rule sits on both sides of its threshold: some duplicates need the finance lead told, some do not.
    threshold = limit_near(s, charge["amount"]) if s.rng.random() < 0.8 else None
    rule = None
    if threshold is not None:
        rule = consult(
            s, "Refund policy",
            f"- Refunds go back to the original card; never refund more than was charged.\n"
            f"- Duplicate charges are refunded in full.\n"
            f"- Tell the finance lead ({lead.name}) about any refund above {money(threshold)}, with its refund id.",
            author_role="finance lead",  # the operations manager is the user: they do not email themselves a rule
        )

    found = lookup(s, duplicate, {"invoice_number": invoice, "query": invoice}, say=f"find the charges for invoice {invoice}",
                   name="the duplicate charge")
    s.refer(duplicate, "the later of the two charges", relation="charges for the invoice", where={"invoice_number": invoice}, latest="created")
    s.trap("original-charge", s.record("payments", "charge", charge["id"]), "the original charge", step=found)
    refund = act(s, "refund", found, {"reason": detail("duplicate")}, say="refund the later of the two charges as a duplicate")
    facts = [Said("the refund id", refund.ref("id")), Said("the refunded amount", Lit(charge["amount"]), "money")]
    reply(
        s, trigger,
        [f"Hi {person.first_name},\n\nSorry about that: we refunded the duplicate charge of {amount}. Your refund reference is ",
         refund.ref("id"), ". It should reach your card within 5-10 days."],
        say=reply_clause(trigger, "the refund id and amount"), facts=facts, subject=f"Refund for invoice {invoice}",
        mentions=[(refund.ref("id"), "the refund id")],
    )
    if rule is not None and threshold is not None:
        s.decide("rule", "refunds above the limit are reported to the finance lead", default=charge["amount"] <= threshold,
                 value=charge["amount"], threshold=threshold)
        if charge["amount"] > threshold:
            told = tell(s, lead, [f"Refunded a duplicate charge of {amount} on invoice {invoice} for {org.name}: refund ",
                                  refund.ref("id"), "."], say=f"let {lead.first_name} know, as the refund policy asks",
                        facts=[Said("the refund id", refund.ref("id"))], subject=f"Refund on {invoice}")
            s.require_by_policy(rule.rec, f"refunds above {money(threshold)} are reported to the finance lead", told,
                                "The finance lead is told about the refund, as the refund policy requires")
        else:
            s.policy_documents.append(rule.rec)
        s.brief.constraints.append(rule.pointer)


#: How often the charge a customer calls a duplicate pays another invoice (the premise is false).
FALSE_DUPLICATE = 0.5


def _unused_invoice(invoice: str, used: set[str]) -> str | None:
    """The next invoice number after ``invoice`` that no charge pays yet (None for a number of another shape)."""
    match = re.fullmatch(r"([A-Z]+-)(\d+)", invoice)
    if match is None:
        return None
    prefix, digits = match.groups()
    return next(f"{prefix}{n:0{len(digits)}d}" for n in range(int(digits) + 1, int(digits) + 500) if f"{prefix}{n:0{len(digits)}d}" not in used)


#: How often the customer a colleague asks to chase has paid since (the premise is false: nothing to chase).
PAID_SINCE = 0.4
#: How recent a late payment must be for a colleague to still believe the invoice open (days before today).
_PAID_WITHIN = 45


def _chase_asked(s: Scenario, customer: str) -> tuple[Person, Trigger]:
    """The finance lead, and a colleague in finance asking for ``customer`` to be chased (the request reads the same
    whether or not anything is overdue)."""
    lead = colleague(s, "finance lead")
    try:
        asker = colleague(s, "accountant") if s.rng.random() < 0.5 else lead
    except Skip:
        asker = lead
    trigger = arrive(s, asker, Ask(
        subject=f"Chasing {customer}",
        text=s.rng.choice((
            f"Can someone chase {customer}? Their invoice is overdue and I'd like it paid this week.",
            f"{customer} still hasn't paid - could you send them a reminder with the invoice today?",
            f"Could you nudge {customer} about the invoice they owe us? It's past due.",
        )),
        team="finance",
    ), channels=COLLEAGUE)
    return lead, trigger


def _paid_since(s: Scenario) -> None:
    """The customer a colleague asks to chase paid their late invoice since: nothing is overdue now, the payment shows
    when. The request reads as the usual chase; the right work is no reminder and a reply saying it is paid, and when."""
    today = s.world.now[:10]
    earliest = (s.world.now_dt - timedelta(days=_PAID_WITHIN)).date().isoformat()
    invoices = s.records("accounting", "invoice")
    owing = {i["contact_id"] for i in invoices if i["status"] == "AUTHORISED" and i["amount_due"] > 0}
    late = [i for i in invoices if i["status"] == "PAID" and i["contact_id"] not in owing and isinstance(i.get("fully_paid_on"), str)
            and i["due_date"] < i["fully_paid_on"] and earliest <= i["fully_paid_on"] <= today]
    latest: dict[str, Rec] = {}
    for invoice in sorted(late, key=lambda i: i["fully_paid_on"]):
        latest[invoice["contact_id"]] = invoice
    invoice = s.pick(sorted(latest.values(), key=lambda i: i.key), "no customer paid a late invoice lately")
    contact = s.record("accounting", "contact", invoice["contact_id"])
    customer = contact["name"]
    _, trigger = _chase_asked(s, customer)
    found = lookup(s, invoice, {"contact_name": customer, "query": customer, "contact_id": contact.key},
                   say=f"find {customer}'s invoices in accounting", name=f"{customer}'s invoice")
    payments = s.records("accounting", "payment", where={"invoice_number": invoice.key})
    if not payments:
        raise Skip(f"no payment shows {invoice.key} paid")
    # A guided request says the chase as the usual one does (it presumes an overdue invoice): the data says otherwise.
    s.call("accounting", "list_payments", {"invoice_number": found.ref("invoice_number")}, guided=True,
           say=f"email {customer}'s overdue invoice to their billing contact with a short payment reminder")
    s.decide("premise", f"{customer} still owes on an overdue invoice", default=False)
    paid_on = str(invoice["fully_paid_on"])
    s.literal_writes.append(s.spec("accounting", "email_invoice", {"invoice_number": found.ref("invoice_number")}))
    what = "the invoice you chased and what is still due on it"
    said = reply(s, trigger,
                 [f"No reminder sent: {customer} has already paid. ", found.ref("invoice_number"),
                  f" was paid in full on {short_date(paid_on)} ({payments[-1]['reference']}), so nothing is overdue."],
                 say=reply_clause(trigger, what),
                 facts=[Said("the invoice", found.ref("invoice_number")), Said("when it was paid", Lit(paid_on), "date")],
                 mentions=[(found.ref("invoice_number"), "the invoice number")])
    param = "body" if any(name == "body" for name, _ in s.specs[said.index].args) else "text"
    s.literal_steps[said.index] = s.specs[said.index].with_arg(
        param, Lit(f"Done - I've sent {customer} the reminder with their invoice."))
    s.brief.intro = f"{trigger.intro}: {customer} needs chasing for an overdue invoice"
    s.brief.goal = f"Send {customer} a reminder for what they owe us and {reply_clause(trigger, what)}"
    s.brief.constraints.append("Only chase what is overdue")
    s.brief.anchors += [customer, trigger.person.name]


@archetype(
    "overdue-invoice-chase",
    family="finance",
    title="Chase a customer's overdue invoice with its billing contact",
    services=("accounting", "chat"),
)
def overdue_invoice_chase(s: Scenario) -> None:
    if s.rng.random() < PAID_SINCE:
        try:
            with s.attempt():
                return _paid_since(s)
        except Skip:
            pass  # nobody paid late of late: a customer who still owes is chased
    invoices = [i for i in s.records("accounting", "invoice", where={"status": "AUTHORISED"}) if i["overdue"] and i["amount_due"] > 0]
    per_contact = Counter(i["contact_id"] for i in invoices)
    lone = [i for i in invoices if per_contact[i["contact_id"]] == 1]
    # A customer who has paid other invoices: "their invoice" is the overdue one, not any of theirs.
    paid_by = {i["contact_id"] for i in s.records("accounting", "invoice", where={"status": "PAID"})}
    invoice = s.pick([i for i in lone if i["contact_id"] in paid_by] or lone, "no customer with exactly one overdue invoice")
    contact = s.record("accounting", "contact", invoice["contact_id"])
    s.decide("premise", f"{contact['name']} still owes on an overdue invoice", default=True)  # (see _paid_since)
    customer = contact["name"]
    lead, trigger = _chase_asked(s, customer)
    found = lookup(s, s.record("accounting", "invoice", invoice.key),
                   {"contact_name": customer, "query": customer, "contact_id": contact.key, "status": "AUTHORISED",
                    "overdue": Lit(True)},
                   say=f"find {customer}'s overdue invoice in accounting", name=f"{customer}'s overdue invoice")
    s.refer(s.record("accounting", "invoice", invoice.key), f"{customer}'s overdue invoice", relation="customer",
            where={"contact_id": contact.key, "status": "AUTHORISED", "id": invoice.key})
    paid = [i for i in s.records("accounting", "invoice", where={"contact_id": contact.key}) if i["status"] == "PAID"]
    if paid and shows(s, found, paid[0]):
        s.trap("paid-invoice", paid[0], f"their paid invoice {paid[0].key}", step=found)
    rule = None
    cc: list[str] = []
    days = 0
    if s.rng.random() < 0.85:
        # The line sits near how late this invoice is, on either side of it: within a tenth of it most of the time.
        late = int(invoice["days_overdue"])
        days = near_first(s, [late + d for d in (-7, -5, -3, -2, -1, 1, 2, 3, 5, 7) if late + d >= 1], lambda _: late,
                          lambda d: d, "no threshold near the delay")
        rule = consult(
            s, "Collections policy",
            f"- Send a reminder with the invoice as soon as it is overdue.\n- When an invoice is more than {days} days "
            f"overdue, copy the finance lead ({lead.name}, {lead.email}) on the reminder.\n"
            "- Tell whoever asked for the chase which invoice went out and what is still due on it.",
            author_role="finance lead",
        )
        cc = [lead.email] if late > days else []
        s.decide("rule", "invoices overdue beyond the line copy the finance lead", default=not cc, value=late, threshold=days)
    sent = act(
        s, "send", found,
        {"cc": ListOf(tuple(Lit(c) for c in cc)), "message": detail(
            "Hello, a friendly reminder that this invoice is now past its due date. Could you let us know when we can "
            "expect payment? Thank you.")},
        say=f"email {customer}'s overdue invoice to their billing contact with a short payment reminder"
            + (", copying whoever the collections policy asks for" if rule else ""),
        prefer="email_invoice",
    )
    if rule is not None:
        if cc:
            s.set_policy(rule.rec, f"invoices more than {days} days overdue copy the finance lead", sent, "cc",
                         ListOf((Lit(lead.email),)), ListOf(()), "The finance lead is in copy, as the collections policy requires")
        else:
            s.policy_documents.append(rule.rec)
        s.brief.constraints.append(rule.pointer)
    what = "the invoice you chased and what is still due on it"
    reply(s, trigger,
          ["Done - I've sent the reminder for ", found.ref("invoice_number"), " with the invoice; ",
           found.ref("amount_due"), f" {invoice['currency']} is still due."],
          say=reply_clause(trigger, what),
          facts=[Said("the invoice chased", found.ref("invoice_number")), Said("what is still due", found.ref("amount_due"), "money")],
          mentions=[(found.ref("invoice_number"), "the invoice number")])
    s.brief.intro = f"{trigger.intro}: {customer} needs chasing for an overdue invoice"
    s.brief.goal = f"Send {customer} a reminder for what they owe us and {reply_clause(trigger, what)}"
    s.brief.constraints.append("Only chase what is overdue")
    s.brief.anchors += [customer, trigger.person.name]


@archetype(
    "refund-needs-approval",
    family="finance",
    title="A customer asks for a refund: refund it within the limit the refund policy sets, else ask the finance lead to "
          "approve it first (no refund)",
    services=("payments",),
)
def refund_needs_approval(s: Scenario) -> None:
    charges = [c for c in s.records("payments", "charge", where={"status": "succeeded"})
               if not c["amount_refunded"] and not c["disputed"] and c["amount"] >= 80]
    people = {p.email: p for p in s.world.customers}
    charge = s.pick([c for c in charges if c["customer_email"] in people], "no clean charge of a customer we know")
    person = people[charge["customer_email"]]
    org = org_of(s, person)
    s.subject = person
    lead = colleague(s, "finance lead")
    # The limit sits near the charge, on either side of it: the refund tool takes any amount up to what was charged.
    limit = limit_near(s, charge["amount"])
    amount = money(charge["amount"], charge["currency"])
    what = charge["description"] or "our order"
    trigger = arrive(s, person, Ask(
        subject=s.rng.choice(("Refund request", f"Refund for {what}", "Please refund our payment")),
        text=s.rng.choice((
            f"We were charged {amount} on {short_date(charge['created'])} for {what}, but we cancelled before it started. "
            "Could you refund it in full?",
            f"Could you refund the {amount} you charged us on {short_date(charge['created'])} ({what})? We cancelled it "
            "in time.",
        )),
        short=f"Could you refund the {amount} charge from {short_date(charge['created'])}? We cancelled {what}.",
        topic="Billing",
        relay=f"{person.first_name} wants a full refund of the {amount} charge from {short_date(charge['created'])} "
              f"for {what}; they say they cancelled in time.",
    ))
    rule = consult(
        s, "Refund policy",
        f"- Support may refund up to {money(limit)} on its own, in full, to the original card.\n"
        f"- Anything above {money(limit)} needs the finance lead's approval first: pass the request to {lead.name} "
        "with the charge and the amount, tell the customer it is being reviewed, and do not refund it yourself.",
        author_role="finance lead",
    )
    found = lookup(s, charge, {"customer_email": person.email, "query": person.name, "status": "succeeded"},
                   say=f"find the charge {person.first_name} is talking about in payments", name="the charge they name")
    others = [c for c in charges if c["customer_email"] == person.email and c.key != charge.key]
    if others and shows(s, found, others[0]):
        s.trap("other-charge", others[0], f"{person.first_name}'s other charge of {money(others[0]['amount'])}", step=found)
    sum_said = Said("the amount", Lit(charge["amount"]), "money")
    decide = "refund it in full if the refund policy lets you, and otherwise pass it to whoever has to approve it"
    stands = "where it stands (the refund id and amount, if you refunded it)"
    s.decide("rule", "refunds above the limit need the finance lead's approval", default=charge["amount"] <= limit,
             value=charge["amount"], threshold=limit)
    if charge["amount"] <= limit:
        refund = act(s, "refund", found, {"reason": detail("requested_by_customer")}, say=decide, stage="decide")
        reply(s, trigger,
              [f"Hi {person.first_name},\n\nDone: we've refunded the {amount} in full. Your refund reference is ",
               refund.ref("id"), ". It should reach your card within 5-10 days."],
              say=reply_clause(trigger, stands), facts=[Said("the refund id", refund.ref("id")), sum_said],
              subject="Your refund", mentions=[(refund.ref("id"), "the refund id")])
        s.policy_documents.append(rule.rec)
    else:
        told = tell(s, lead, [f"Hi {lead.first_name},\n\n{person.name} ({org.name}) asks for a full refund of charge ",
                              found.ref("id"), f" ({amount}, {short_date(charge['created'])}). It's above our "
                              f"{money(limit)} limit, so it needs your approval."],
                    say=decide,
                    facts=[sum_said], subject=f"Refund approval: {person.name}")
        reply(s, trigger,
              [f"Hi {person.first_name},\n\nThanks for getting in touch. Your request for a refund of {amount} is with our "
               "finance team for review; we'll come back to you shortly."],
              say=reply_clause(trigger, stands), facts=[sum_said], subject="Your refund request")
        careless = s.spec("payments", "refund_charge", {"charge_id": found.ref("id")})
        s.forbid_by_policy(rule.rec, f"refunds above {money(limit)} need the finance lead's approval", told,
                           instead(s, told, careless),
                           ("payments", "refunds", {"charge_id": charge.key}),
                           "No refund was issued without the finance lead's approval")
    s.brief.intro = f"{trigger.intro} asking for a full refund"
    s.brief.goal = (f"Handle {person.first_name}'s refund request the way the refund policy says and "
                    f"{reply_clause(trigger, 'where it stands')}")
    s.brief.constraints.append(rule.pointer)
    s.brief.anchors += [person.name]


def _billing_person(s: Scenario, invoices: list[Rec]) -> list[tuple[Rec, Person]]:
    """Invoices whose billing contact is a person of the world, with that person."""
    contacts = {c.key: c for c in s.records("accounting", "contact")}
    people = {p.email: p for p in s.world.customers}
    return [(i, people[contacts[i["contact_id"]]["email"]]) for i in invoices if contacts[i["contact_id"]]["email"] in people]


@archetype(
    "invoice-copy-request",
    family="finance",
    title="A customer's accounts team asks for a copy of an invoice: send it from accounting",
    services=("accounting",),
)
def invoice_copy_request(s: Scenario) -> None:
    invoices = [i for i in s.records("accounting", "invoice") if i["status"] in ("AUTHORISED", "PAID")]
    billed = _billing_person(s, invoices)
    # A customer with other invoices of ours: which one they mean is picked out of theirs.
    per_contact = Counter(i["contact_id"] for i in invoices)
    invoice, person = s.pick([(i, p) for i, p in billed if per_contact[i["contact_id"]] > 1] or billed,
                             "no sent invoice with a billing contact we know")
    org = org_of(s, person)
    s.subject = person
    same = [i for i in invoices if i["contact_id"] == invoice["contact_id"] and i.key != invoice.key]
    # Now and then they name it by its date and amount, not its number: then it has to be picked out of theirs.
    by_number = not same or s.rng.random() < 0.5 or any(
        i["date"] == invoice["date"] or abs(i["total"] - invoice["total"]) < 0.01 for i in same)
    named = invoice.key if by_number else (f"the invoice of {short_date(invoice['date'])} for "
                                           f"{money(invoice['total'], invoice['currency'])}")
    trigger = arrive(s, person, Ask(
        subject=f"Copy of invoice {invoice.key}" if by_number else "Copy of an invoice",
        text=s.rng.choice((
            f"Our accounts team can't find {'invoice ' if by_number else ''}{named}. Could you email us a copy?",
            f"Could you send me a copy of {'invoice ' if by_number else ''}{named} by email? We need it for our records.",
        )),
        short=f"Could you email me a copy of {'invoice ' if by_number else ''}{named}? Thanks",
        topic="Billing",
        relay=f"{person.first_name} needs a copy of {'invoice ' if by_number else ''}{named} by email.",
    ))
    rec = s.record("accounting", "invoice", invoice.key)
    known = {"invoice_number": invoice.key, "query": invoice.key} if by_number else {
        "contact_name": org.name, "query": org.name, "email": person.email}
    found = lookup(s, rec, known, say=f"find the invoice {person.first_name} asks for in accounting",
                   name="the invoice they ask for")
    if not by_number:
        s.refer(rec, named, relation="customer", where={"contact_id": invoice["contact_id"], "date": invoice["date"],
                                                        "total": invoice["total"]})
    other = next((i for i in same if shows(s, found, i)), None)
    if other is not None:
        s.trap("other-invoice", other, f"their invoice {other.key}", step=found)
    act(s, "send", found, {"to": ListOf((Lit(person.email),)), "message": detail("As requested, here is a copy of the invoice.")},
        say=f"email {person.first_name} the invoice they ask for, from accounting", prefer="email_invoice")
    reply(s, trigger, [f"Hi {person.first_name},\n\nI've just emailed you a copy of ", found.ref("invoice_number"),
                       f" from our accounting system, to {person.email}."],
          say=reply_clause(trigger, "the invoice number you sent"),
          facts=[Said("the invoice sent", found.ref("invoice_number"))], subject=f"Copy of {invoice.key}")
    s.brief.intro = f"{trigger.intro} asking for a copy of an invoice"
    s.brief.goal = (f"Email {person.first_name} the invoice they asked for, from accounting, and "
                    f"{reply_clause(trigger, 'the invoice number')}")
    s.brief.anchors += [person.name]


@archetype(
    "bank-payment-recorded",
    family="finance",
    title="A customer says they paid an invoice by bank transfer: record the payment with their reference",
    services=("accounting",),
)
def bank_payment_recorded(s: Scenario) -> None:
    invoices = [i for i in s.records("accounting", "invoice", where={"status": "AUTHORISED"}) if i["amount_due"] > 0]
    options = _billing_person(s, invoices)
    # An invoice paid off in part already: "we paid the rest" leaves the agent to work out what the rest is.
    settled_before = [(i, p) for i, p in options if i["amount_paid"] or i["amount_credited"]]
    draw = s.rng.random()
    rest = bool(settled_before) and draw < 0.35
    # Else a customer with another open invoice: the number they give picks which one the payment goes against.
    per_contact = Counter(i["contact_id"] for i in invoices)
    several = [(i, p) for i, p in options if per_contact[i["contact_id"]] > 1]
    invoice, person = s.pick(settled_before if rest else several or options, "no open invoice with a billing contact we know")
    org = org_of(s, person)
    s.subject = person
    reference = f"TRX-{s.rng.randint(100000, 999999)}"
    due, currency = float(invoice["amount_due"]), invoice["currency"]
    # Part payments happen: what is left then takes the payment and the invoice together.
    part = not rest and due >= 200 and draw > 0.45
    paid = float(round(due * s.rng.uniform(0.3, 0.7), -1)) if part else due
    left = round(due - paid, 2)
    told = (f"we transferred {money(paid, currency)} towards invoice {invoice.key} this morning, reference {reference}; "
            "the rest will follow next month" if part else
            f"we transferred the rest of invoice {invoice.key} this morning, reference {reference}, so it should be settled now"
            if rest else
            f"we paid invoice {invoice.key} in full ({money(paid, currency)}) by bank transfer this morning, reference "
            f"{reference}")
    trigger = arrive(s, person, Ask(
        subject=f"Payment for {invoice.key}",
        text=f"Just so you know, {told}.",
        short=f"FYI {told}.",
        topic="Billing",
        relay=f"{person.first_name} says {told.replace('we ', 'they ', 1)}.",
    ))
    found = lookup(s, s.record("accounting", "invoice", invoice.key), {"invoice_number": invoice.key, "query": invoice.key},
                   say=f"find the invoice {person.first_name} paid in accounting", name="the invoice they paid")
    others = [i for i in invoices if i["contact_id"] == invoice["contact_id"] and i.key != invoice.key]
    if others and shows(s, found, others[0]):
        s.trap("other-open-invoice", others[0], f"their other open invoice {others[0].key}", step=found)
    recorded = s.call("accounting", "create_payment",
                      {"amount": paid, "invoice_number": found.ref("invoice_number"), "method": "bank_transfer", "reference": reference,
                       "date": s.world.now[:10]},
                      say=f"record the bank transfer against the invoice {person.first_name} paid, for the amount they paid, dated "
                          f"today, with their reference {reference}")
    facts = [Said("the amount recorded", Lit(paid), "money")]
    if rest:  # the rest is the total less what was paid and credited before: the literal agent records the total
        s.decide("figure", "what the rest of the invoice comes to, once earlier payments and credit are taken off")
        s.literal_steps[recorded.index] = s.specs[recorded.index].with_arg("amount", Lit(float(invoice["total"])))
    if part:
        s.decide("figure", "what is still due once the part payment is recorded")
        facts.append(Said("what is still due", Lit(left), "money"))
        words = f"We've recorded your payment of {money(paid, currency)}; {money(left, currency)} is still due on it."
    else:
        words = f"We've recorded your payment of {money(paid, currency)}: the invoice is now paid in full."
    reply(s, trigger, [f"Hi {person.first_name},\n\nThanks for letting us know. {words}"],
          say=reply_clause(trigger, "the amount recorded and what is still due, if anything"), facts=facts,
          subject=f"Payment for {invoice.key}")
    s.brief.intro = f"{trigger.intro} to say they paid an invoice by bank transfer"
    s.brief.goal = (f"Record {person.first_name}'s payment in accounting (bank transfer, today, reference {reference}) and "
                    f"{reply_clause(trigger, 'what you recorded and what is still due, if anything')}")
    s.brief.anchors += [person.name, reference]


#: How often the customer asking for a payment link has paid the invoice in full already.
PAID_IN_FULL = 0.4


def _linkable(s: Scenario) -> list[tuple[Rec, Person]]:
    """Open invoices of customers we know, with no payment link out for them yet."""
    linked = {link["invoice_number"] for link in s.records("payments", "payment_link", where={"active": True})}
    invoices = [i for i in s.records("accounting", "invoice", where={"status": "AUTHORISED"})
                if i["amount_due"] > 0 and i.key not in linked]
    return _billing_person(s, invoices)


@archetype(
    "payment-link-request",
    family="finance",
    title="A customer wants to pay an invoice by card: send them a payment link for what is due",
    services=("accounting", "payments"),
)
def payment_link_request(s: Scenario) -> None:
    options = _linkable(s)
    # A part-paid invoice now and then: the customer quotes its total, the link is for what is still due.
    part_paid = [(i, p) for i, p in options if i["amount_paid"] or i["amount_credited"]]
    # Now and then the invoice was paid in full already (by someone else on their side): no link, they hear when.
    paid = _billing_person(s, [i for i in s.records("accounting", "invoice", where={"status": "PAID"}) if i["fully_paid_on"]])
    settled = paid and s.rng.random() < PAID_IN_FULL
    pool = paid if settled else part_paid if part_paid and s.rng.random() < 0.5 else options
    invoice, person = s.pick(pool, "no open invoice to link")
    org = org_of(s, person)
    s.subject = person
    total = money(invoice["total"], invoice["currency"])
    trigger = arrive(s, person, Ask(
        subject=f"Paying {invoice.key} by card",
        text=s.rng.choice((
            f"Could we pay invoice {invoice.key} ({total}) by card instead of bank transfer? Please send a payment link.",
            f"We'd rather settle invoice {invoice.key} by card. Could you send me a link to pay it?",
        )),
        short=f"Can you send me a card payment link for invoice {invoice.key}?",
        topic="Billing",
        relay=f"{person.first_name} wants to pay invoice {invoice.key} by card and asks for a payment link.",
    ))
    found = lookup(s, s.record("accounting", "invoice", invoice.key), {"invoice_number": invoice.key, "query": invoice.key},
                   say=f"look up the invoice {person.first_name} mentions in accounting")
    s.decide("premise", f"invoice {invoice.key} still has something to pay", default=not settled)
    if settled:  # nothing is due: no link, and they hear that it was paid and when
        s.literal_writes.append(s.spec("payments", "create_payment_link", {
            "amount": invoice["total"], "invoice_number": found.ref("invoice_number"), "customer_email": person.email}))
        reply(s, trigger,
              [f"Hi {person.first_name},\n\nGood news: invoice {invoice.key} ({total}) is paid already, in full on "
               f"{short_date(invoice['fully_paid_on'])}, so there is nothing left to pay and no link to send."],
              say=reply_clause(trigger, "where the invoice stands"),
              facts=[Said("that it was paid already", Lit("already"), "premise"),
                     Said("the day it was paid", Lit(invoice["fully_paid_on"]), "date")],
              subject=f"Invoice {invoice.key}",
              relay_parts=[f"Invoice {invoice.key} is paid already, in full on {short_date(invoice['fully_paid_on'])}: nothing "
                           f"is left to pay, so no link. Could you let {person.first_name} know?"])
        s.brief.intro = f"{trigger.intro} asking to pay an invoice by card"
        s.brief.goal = (f"Get {person.first_name} a card payment link for what they still owe on the invoice they name and "
                        f"{reply_clause(trigger, 'where the invoice stands')}")
        s.brief.anchors += [person.name]
        return
    link = s.call(
        "payments", "create_payment_link",
        # Whose link it is is the agent's call: the request asks for the amount and the invoice, not this.
        {"amount": found.ref("amount_due"), "invoice_number": found.ref("invoice_number"), "customer_email": detail(person.email)},
        say=f"create a payment link in payments for the amount still due on the invoice {person.first_name} names",
    )
    due = float(invoice["amount_due"])
    reply(s, trigger,
          [f"Hi {person.first_name},\n\nHere is your link to pay the {money(due, invoice['currency'])} still due on "
           f"{invoice.key} by card: ", link.ref("url"), "\n\nThanks!"],
          say=reply_clause(trigger, "the link and the amount it is for"),
          facts=[Said("the amount due", Lit(due), "money")], mentions=[(link.ref("url"), "the payment link")],
          subject=f"Payment link for {invoice.key}")
    s.brief.intro = f"{trigger.intro} asking to pay an invoice by card"
    s.brief.goal = (f"Get {person.first_name} a card payment link for what they still owe on the invoice they name and "
                    f"{reply_clause(trigger, 'the link and the amount it is for')}")
    s.brief.anchors += [person.name]


@archetype(
    "text-payment-link",
    family="finance",
    title="A customer texts to ask how to pay their open invoice by card: text back a payment link for what is due",
    services=("sms", "accounting", "payments"),
)
def text_payment_link(s: Scenario) -> None:
    invoices = s.records("accounting", "invoice")
    open_per_contact = Counter(i["contact_id"] for i in invoices if i["status"] == "AUTHORISED")
    contacts = {c.key: c for c in s.records("accounting", "contact")}
    orgs = {org.name: org for org in s.world.organisations}
    # A text and a link back by text: the work is about texting, so it comes by text (any customer with a mobile).
    options = [
        (invoice, person)
        for invoice, _ in _linkable(s)
        if open_per_contact[invoice["contact_id"]] == 1 and contacts[invoice["contact_id"]]["name"] in orgs
        for person in s.world.customers
        if person.organisation_id == orgs[contacts[invoice["contact_id"]]["name"]].id
        and channels_for(s, person, ("sms",), customer=True)
    ]
    # A customer who has paid other invoices: "our open invoice" is picked out of theirs by its status.
    paid_by = {i["contact_id"] for i in invoices if i["status"] == "PAID"}
    invoice, person = s.pick([o for o in options if o[0]["contact_id"] in paid_by] or options,
                             "no customer with exactly one open invoice")
    org = org_of(s, person)
    contact = contacts[invoice["contact_id"]]
    s.subject = person
    trigger = arrive(s, person, Ask(
        subject="Paying by card",
        text=s.rng.choice((
            "Could you text me a link to pay our open invoice by card? Thanks",
            "We'd like to pay the invoice we still owe you by card - can you send me a payment link?",
        )),
        topic="Billing",
    ), channels=("sms",))
    found = lookup(s, invoice, {"contact_name": org.name, "query": org.name, "status": "AUTHORISED"},
                   say=f"find {org.name}'s open invoice in accounting", name=f"{org.name}'s open invoice")
    s.refer(invoice, f"{org.name}'s open invoice", relation="customer", where={"contact_id": contact.key, "status": "AUTHORISED"})
    paid = [i for i in invoices if i["contact_id"] == contact.key and i["status"] == "PAID"]
    shown = next((i for i in reversed(paid) if shows(s, found, i)), None)
    if shown is not None:
        s.trap("paid-invoice", shown, f"their paid invoice {shown.key}", step=found)
    link = s.call(
        "payments", "create_payment_link",
        {"amount": found.ref("amount_due"), "invoice_number": found.ref("invoice_number"), "customer_email": detail(person.email)},
        say=f"create a card payment link in payments for the amount still due on {org.name}'s open invoice",
    )
    reply(s, trigger,
          [f"Hi {person.first_name}, here is your payment link: ", link.ref("url"), " (invoice ", found.ref("invoice_number"),
           ", ", found.ref("amount_due"), f" {invoice['currency']})."],
          say=reply_clause(trigger, "the link"), mentions=[(link.ref("url"), "the payment link")])
    s.brief.intro = f"{trigger.intro} asking to pay an invoice by card"
    s.brief.goal = f"Text {person.first_name} back a card payment link for what {org.name} still owes on their open invoice"
    # No "leave their paid invoices out of it": the paid invoices are the trap, and the request does not defuse it.
    s.brief.anchors += [person.name, org.name]
