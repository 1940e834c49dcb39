"""Finance workflows: refunds, chasing and recording payments, payment links, credit notes."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta

from composer.archetypes.common import (
    chat_post,
    maybe_log_in_crm,
    colleague,
    inbound_email,
    inbound_text,
    money,
    org_of,
    policy_document,
    rule_source,
    short_date,
    signature,
)
from composer.plan import ListOf, Lit
from composer.scenario import Said, Scenario, archetype, detail
from composer.stages.acts import act, tell
from composer.stages.channels import Ask, arrive, reply, reply_clause
from composer.stages.lookup import lookup
from composer.stages.rules import consult


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
    duplicate = s.copy(charge, created=_later(charge["created"], s.rng.randint(2, 9)))
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

    lead = colleague(s, "finance lead")
    # The rule sits on both sides of its threshold: some duplicates need the finance lead told, some do not.
    threshold = float(s.rng.choice(_nearby_thresholds(charge["amount"]))) if s.rng.random() < 0.5 else None
    rule = None
    if threshold is not None:
        rule = consult(
            s, "Refund policy",
            f"- Refunds go back to the original card; never refund more than was charged.\n"
            f"- Duplicate charges are refunded in full.\n"
            f"- Tell the finance lead ({lead.name}) about any refund above {money(threshold)}, with its refund id.",
            author_role="finance lead" if s.rng.random() < 0.5 else "operations manager",
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
        if charge["amount"] > threshold:
            told = tell(s, lead, [f"Refunded a duplicate charge of {amount} on invoice {invoice} for {org.name}: refund ",
                                  refund.ref("id"), "."], say=f"let {lead.first_name} know, as the refund policy asks",
                        facts=[Said("the refund id", refund.ref("id"))], subject=f"Refund on {invoice}")
            s.require_by_policy(rule.rec, f"refunds above {money(threshold)} are reported to the finance lead", told,
                                "The finance lead is told about the refund, as the refund policy requires")
        else:
            s.policy_documents.append(rule.rec)
        s.brief.constraints.append(rule.pointer)
    s.brief.intro = f"{trigger.intro} about being charged twice"
    s.brief.goal = f"Sort out the double charge and {reply_clause(trigger, 'the refund reference')}"
    s.brief.constraints.append("Leave the original charge alone")
    s.brief.anchors += [person.name, org.name]


def _nearby_thresholds(amount: float) -> list[int]:
    """Round thresholds a rule might state, a little below and a little above ``amount`` (never far from it)."""
    steps = (50, 100, 250, 500)
    options = set()
    for step in steps:
        below, above = int(amount // step * step), int((amount // step + 1) * step)
        for value in (below, above):
            if value > 0 and 0.6 * amount <= value <= 1.5 * amount and abs(value - amount) > 0.01:
                options.add(value)
    return sorted(options) or [max(50, int(round(amount, -2)))]


@archetype(
    "overdue-invoice-chase",
    family="finance",
    title="Chase a customer's overdue invoice with its billing contact",
    services=("accounting", "chat"),
)
def overdue_invoice_chase(s: Scenario) -> None:
    invoices = [i for i in s.records("accounting", "invoice", where={"status": "AUTHORISED"}) if i["overdue"] and i["amount_due"] > 0]
    per_contact = Counter(i["contact_id"] for i in invoices)
    invoice = s.pick([i for i in invoices if per_contact[i["contact_id"]] == 1], "no customer with exactly one overdue invoice")
    contact = s.record("accounting", "contact", invoice["contact_id"])
    lead = colleague(s, "finance lead")
    post, when = chat_post(
        s, lead, "finance",
        s.rng.choice(
            (
                f"Can someone chase {contact['name']}? Their invoice is overdue and I'd like it paid this week.",
                f"{contact['name']} still hasn't paid - could you send them a reminder with the invoice today?",
            )
        ),
    )
    found = s.call(
        "accounting", "list_invoices", {"contact_id": contact.key}, select=s.record("accounting", "invoice", invoice.key),
        say=f"find {contact['name']}'s overdue invoice in accounting",
    )
    s.refer(s.record("accounting", "invoice", invoice.key), f"{contact['name']}'s overdue invoice", relation="customer",
            where={"contact_id": contact.key, "status": "AUTHORISED", "id": invoice.key})
    others = [i for i in s.records("accounting", "invoice", where={"contact_id": contact.key}) if i.key != invoice.key and i["status"] == "PAID"]
    if others:
        s.trap("paid-invoice", others[0], f"their paid invoice {others[0].key}", step=found)
    policy = s.rng.random() < 0.6
    cc: list[str] = []
    if policy:
        days = int(s.rng.choice((14, 30, 45)))
        document, pointer = rule_source(
            s, "Collections policy",
            f"- Send a reminder with the invoice as soon as it is overdue.\n- When an invoice is more than {days} days "
            f"overdue, copy the finance lead ({lead.name}, {lead.email}) on the reminder.",
            author_role="finance lead",
        )
        cc = [lead.email] if invoice["days_overdue"] > days else []
        s.brief.constraints.append(pointer)
    sent = s.call(
        "accounting", "email_invoice",
        {"invoice_number": found.ref("invoice_number"), "cc": ListOf(tuple(Lit(c) for c in cc)), "message": s.text(
            "Hello, a friendly reminder that this invoice is now past its due date. Could you let us know when "
            "we can expect payment? Thank you.")},
        say="email that invoice to their billing contact with a short payment reminder"
            + (", copying whoever the collections policy asks for" if policy else ""),
    )
    if policy:
        if cc:
            s.set_policy(document, f"invoices more than {days} days overdue copy the finance lead", sent, "cc",
                         ListOf((Lit(lead.email),)), ListOf(()), "The finance lead is in copy, as the collections policy requires")
        else:
            s.policy_documents.append(document)
    s.call(
        "chat", "reply_in_thread",
        {"message_id": post.key, "text": s.text("Done - sent the reminder for ", found.ref("invoice_number"), ".")},
        say=f"answer {lead.first_name} in the thread with the invoice number you chased",
        mentions=[(found.ref("invoice_number"), "the invoice number")],
    )
    s.brief.intro = f"{lead.name} asked in #finance {when} for someone to chase {contact['name']}"
    s.brief.goal = f"Send {contact['name']} a reminder for what they owe us and let {lead.first_name} know which invoice you chased"
    s.brief.constraints.append("Only chase what is overdue")
    s.brief.anchors += [contact["name"], lead.name]


@archetype(
    "refund-needs-approval",
    family="finance",
    title="A customer asks for a refund the policy says only the finance lead may approve: escalate, don't refund",
    services=("payments", "mailbox"),
)
def refund_needs_approval(s: Scenario) -> None:
    charges = [c for c in s.records("payments", "charge", where={"status": "succeeded"}) if not c["amount_refunded"] and not c["disputed"] and c["amount"] >= 300]
    charge = s.pick(charges, "no large clean charge")
    person = s.person(charge["customer_email"])
    org = org_of(s, person)
    lead = colleague(s, "finance lead")
    limit = float(s.rng.choice((100, 200, 250)))
    document, pointer = rule_source(
        s, "Refund policy",
        f"- Support may refund up to {money(limit)} on its own.\n- Anything above {money(limit)} needs the finance "
        f"lead's approval first: forward the customer's request to {lead.name} ({lead.email}) and tell the customer "
        "it is being reviewed. Do not refund it yourself.",
        author_role="finance lead" if s.rng.random() < 0.5 else "operations manager",
    )
    amount = money(charge["amount"], charge["currency"])
    email, when = inbound_email(
        s, person, "Refund request",
        f"Hi,\n\nWe were charged {amount} on {short_date(charge['created'])} for {charge['description'] or 'our order'}, "
        f"but we cancelled before it started. Could you refund it in full?\n\nThanks,\n{signature(person, org)}",
    )
    s.refer(email, f"{person.first_name}'s email", relation="sender", where={"from_email": person.email}, latest="sent_at")
    found = s.call("payments", "list_charges", {"customer_email": person.email}, select=charge,
                   say=f"find the charge {person.first_name} is talking about in payments", needed=True)
    forward = s.call(
        "mailbox", "forward_message",
        {"message_id": email.key, "to": ListOf((Lit(lead.email),)), "note": detail("Refund above our limit: needs your approval.")},
        say=f"if the refund policy says a refund this size needs approval, forward {person.first_name}'s email to whoever approves it",
    )
    s.call(
        "mailbox", "reply_to_message",
        {"message_id": email.key, "body": detail(f"Hi {person.first_name},\n\nThanks - your refund request is with our finance team for approval; we'll be in touch shortly.")},
        say=f"tell {person.first_name} where their request stands",
    )
    violation = [s.specs[0], s.spec("payments", "refund_charge", {"charge_id": found.ref("id")}), s.specs[2]]
    s.forbid_by_policy(document, f"refunds above {money(limit)} need the finance lead's approval", forward, violation,
                       ("payments", "refunds", {"charge_id": charge.key}), "No refund was issued without the finance lead's approval")
    logged = maybe_log_in_crm(s, person, "Refund request sent to finance for approval", None, "")
    s.brief.intro = f"{person.name} from {org.name} emailed {when} asking for a full refund"
    s.brief.goal = f"Handle {person.first_name}'s refund request and let them know where it stands" + (
        ", and note on their CRM contact what you did" if logged else "")
    s.brief.constraints.append(pointer)
    s.brief.anchors += [person.name, org.name]


@archetype(
    "invoice-copy-request",
    family="finance",
    title="A customer's accounts team asks for a copy of an invoice: send it from accounting",
    services=("accounting", "mailbox"),
)
def invoice_copy_request(s: Scenario) -> None:
    invoices = [i for i in s.records("accounting", "invoice") if i["status"] in ("AUTHORISED", "PAID")]
    contacts = {c.key: c for c in s.records("accounting", "contact")}
    invoice = s.pick(invoices, "no sent invoices")
    contact = contacts[invoice["contact_id"]]
    people = [p for p in s.world.customers if p.email == contact["email"]]
    person = s.pick(people, "the billing contact is not a person of the world")
    org = org_of(s, person)
    email, when = inbound_email(
        s, person, f"Copy of invoice {invoice.key}",
        f"Hello,\n\nOur accounts team can't find invoice {invoice.key}. Could you send us a copy?\n\nMany thanks,\n{signature(person, org)}",
    )
    s.refer(email, f"{person.first_name}'s email", relation="sender", where={"from_email": person.email}, latest="sent_at")
    s.call("accounting", "email_invoice",
           {"invoice_number": invoice.key, "to": ListOf((Lit(person.email),)), "message": detail("As requested, here is a copy of the invoice.")},
           say=f"email the invoice {person.first_name} asks for to them from accounting")
    s.brief.intro = f"{person.name} from {org.name} emailed {when} asking for a copy of an invoice"
    s.brief.goal = f"Send {person.first_name} the invoice they asked for, from accounting"
    s.brief.anchors += [person.name]


@archetype(
    "bank-payment-recorded",
    family="finance",
    title="A customer says they paid an invoice by bank transfer: record the payment with their reference",
    services=("accounting", "mailbox"),
)
def bank_payment_recorded(s: Scenario) -> None:
    invoices = [i for i in s.records("accounting", "invoice", where={"status": "AUTHORISED"}) if i["amount_due"] > 0]
    contacts = {c.key: c for c in s.records("accounting", "contact")}
    per_contact = {}
    for i in invoices:
        per_contact.setdefault(i["contact_id"], []).append(i)
    options = [(i, contacts[i["contact_id"]]) for i in invoices if any(p.email == contacts[i["contact_id"]]["email"] for p in s.world.customers)]
    invoice, contact = s.pick(options, "no open invoice with a billing contact")
    person = s.person(contact["email"])
    org = org_of(s, person)
    reference = f"TRX-{s.rng.randint(100000, 999999)}"
    amount = money(invoice["amount_due"], invoice["currency"])
    email, when = inbound_email(
        s, person, f"Payment for {invoice.key}",
        f"Hi,\n\nWe paid invoice {invoice.key} in full ({amount}) by bank transfer this morning, reference {reference}.\n\n"
        f"Regards,\n{signature(person, org)}",
    )
    s.refer(email, f"{person.first_name}'s email", relation="sender", where={"from_email": person.email}, latest="sent_at")
    found = s.call("accounting", "list_invoices", {"contact_id": contact.key}, select=s.record("accounting", "invoice", invoice.key),
                   say=f"find the invoice {person.first_name} paid in accounting")
    others = [i for i in per_contact.get(contact.key, []) if i.key != invoice.key]
    if others:
        s.trap("other-open-invoice", others[0], f"their other open invoice {others[0].key}", step=found)
    s.call("accounting", "create_payment",
           {"amount": found.ref("amount_due"), "invoice_number": found.ref("invoice_number"), "method": "bank_transfer",
            "reference": reference, "date": s.world.now[:10]},
           say=f"record the bank transfer against it for the amount due, dated today, with their reference {reference}")
    s.call("mailbox", "reply_to_message", {"message_id": email.key, "body": detail(f"Hi {person.first_name}, thanks - we've recorded your payment.")},
           say=f"thank {person.first_name} and confirm it's recorded")
    logged = maybe_log_in_crm(s, person, "Paid by bank transfer, invoice", found.ref("invoice_number"), "the invoice number")
    s.brief.intro = f"{person.name} from {org.name} emailed {when} to say they paid an invoice by bank transfer"
    s.brief.goal = f"Record {person.first_name}'s payment in accounting (bank transfer, today, reference {reference}) and confirm it to them" + (
        "; also note on their CRM contact which invoice they paid" if logged else "")
    s.brief.anchors += [person.name, reference]


@archetype(
    "payment-link-request",
    family="finance",
    title="A customer wants to pay an invoice by card: send them a payment link for what is due",
    services=("accounting", "payments", "mailbox"),
)
def payment_link_request(s: Scenario) -> None:
    invoices = [i for i in s.records("accounting", "invoice", where={"status": "AUTHORISED"}) if i["amount_due"] > 0]
    contacts = {c.key: c for c in s.records("accounting", "contact")}
    options = [i for i in invoices if any(p.email == contacts[i["contact_id"]]["email"] for p in s.world.customers)]
    invoice = s.pick(options, "no open invoice with a billing contact")
    person = s.person(contacts[invoice["contact_id"]]["email"])
    org = org_of(s, person)
    email, when = inbound_email(
        s, person, f"Paying {invoice.key} by card",
        f"Hi,\n\nCould we pay invoice {invoice.key} by card instead of bank transfer? Please send a payment link.\n\n"
        f"Thanks,\n{signature(person, org)}",
    )
    s.refer(email, f"{person.first_name}'s email", relation="sender", where={"from_email": person.email}, latest="sent_at")
    found = s.call("accounting", "get_invoice", {"invoice_number": invoice.key}, say=f"look up the invoice {person.first_name} mentions in accounting")
    link = s.call(
        "payments", "create_payment_link",
        # Whose link it is is the agent's call: the request asks for the amount and the invoice, not this.
        {"amount": found.ref("amount_due"), "invoice_number": found.ref("invoice_number"), "customer_email": detail(person.email)},
        say="create a payment link in payments for the amount still due on it",
    )
    s.call("mailbox", "reply_to_message",
           {"message_id": email.key, "body": s.text(f"Hi {person.first_name},\n\nHere is your payment link: ", link.ref("url"), "\n\nThanks!")},
           say=f"reply to {person.first_name} with the link", mentions=[(link.ref("url"), "the payment link")])
    s.brief.intro = f"{person.name} from {org.name} emailed {when} asking to pay an invoice by card"
    s.brief.goal = f"Reply to {person.first_name} with a card payment link for what they still owe on the invoice their email names"
    s.brief.anchors += [person.name]


@archetype(
    "text-payment-link",
    family="finance",
    title="A customer texts to ask how to pay their open invoice by card: text back a payment link for what is due",
    services=("sms", "accounting", "payments"),
)
def text_payment_link(s: Scenario) -> None:
    invoices = s.records("accounting", "invoice")
    contacts = {c.key: c for c in s.records("accounting", "contact")}
    open_per_contact = Counter(i["contact_id"] for i in invoices if i["status"] == "AUTHORISED")
    # Only a mobile that may be texted: the reply goes back to the number the customer wrote from.
    textable = {p["phone_number"] for p in s.records("sms", "phone") if p["can_receive_sms"]}
    textable -= {o["phone_number"] for o in s.records("sms", "opt_out")}
    linked = {link["invoice_number"] for link in s.records("payments", "payment_link", where={"active": True})}
    orgs = {org.name: org for org in s.world.organisations}
    options = [
        (invoice, person)
        for invoice in invoices
        if invoice["status"] == "AUTHORISED" and invoice["amount_due"] > 0 and open_per_contact[invoice["contact_id"]] == 1
        and invoice.key not in linked and contacts[invoice["contact_id"]]["name"] in orgs
        for person in s.world.customers
        if person.organisation_id == orgs[contacts[invoice["contact_id"]]["name"]].id and person.phone in textable
    ]
    invoice, person = s.pick(options, "no customer with a mobile and exactly one open invoice")
    org = org_of(s, person)
    contact = contacts[invoice["contact_id"]]
    s.subject = person
    text, when = inbound_text(
        s, person,
        s.rng.choice((
            f"Hi, {person.first_name} from {org.name} here. Could you text me a link to pay our open invoice by card? Thanks",
            f"Hello, this is {person.name} ({org.name}). We'd like to pay the invoice we still owe you by card - can you send me a payment link?",
        )),
    )
    s.refer(text, f"the text from {person.first_name}", relation="sender", where={"from_number": person.phone}, latest="date_created")
    found = s.call(
        "accounting", "list_invoices", {"contact_name": org.name}, select=invoice,
        say=f"find {org.name}'s open invoice in accounting",
    )
    s.refer(invoice, f"{org.name}'s open invoice", relation="customer", where={"contact_id": contact.key, "status": "AUTHORISED"})
    paid = [i for i in invoices if i["contact_id"] == contact.key and i["status"] == "PAID"]
    if paid:
        s.trap("paid-invoice", paid[-1], f"their paid invoice {paid[-1].key}", step=found)
    link = s.call(
        "payments", "create_payment_link",
        {"amount": found.ref("amount_due"), "invoice_number": found.ref("invoice_number"), "customer_email": detail(person.email)},
        say="create a card payment link in payments for the amount still due on it",
    )
    s.call(
        "sms", "reply_to_message",
        {"message_sid": text.key, "body": s.text(
            f"Hi {person.first_name}, here is your payment link: ", link.ref("url"), " (invoice ", found.ref("invoice_number"), ").")},
        say=f"text {person.first_name} back with the link",
        mentions=[(link.ref("url"), "the payment link")],
    )
    s.brief.intro = f"{person.name} from {org.name} texted our number {when} asking to pay an invoice by card"
    s.brief.goal = f"Text {person.first_name} back a card payment link for what {org.name} still owes on their open invoice"
    s.brief.constraints.append("Leave their paid invoices out of it")
    s.brief.anchors += [person.name, org.name]
