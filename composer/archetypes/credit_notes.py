"""Credit for goods a customer sent back: a credit note for what came back, applied as the credit rule says.

The credit note covers the units returned at the price they were invoiced at. Where the invoice still has money due, the
credit rule applies the credit to it at once; where the invoice is paid, the credit stays on the customer's account
for their next invoice. The accounting tools allow either on an open invoice: only the rule says which.
"""

from __future__ import annotations

from composer.archetypes.common import money, rule_author
from composer.archetypes.finance import _billing_person
from composer.plan import ListOf, Lit
from composer.scenario import Said, Scenario, archetype, detail
from composer.stages.channels import Ask, arrive, can_arrive, reply, reply_clause
from composer.stages.lookup import lookup
from composer.stages.rules import consult

#: Item categories that are not goods one can send back.
_NOT_GOODS = ("subscriptions", "services", "usage")
_WHY = ("arrived damaged", "were the wrong model", "were not needed after all")


@archetype(
    "returned-goods-credit",
    family="finance",
    title="A customer sent goods back: issue a credit note for them, applied to the invoice only while it is still open",
    services=("accounting",),
    fits=can_arrive(),
)
def returned_goods_credit(s: Scenario) -> None:
    goods = {i.key for i in s.records("accounting", "item") if i["category"] not in _NOT_GOODS}
    invoices = [i for i in s.records("accounting", "invoice") if i["status"] in ("AUTHORISED", "PAID")
                and any(line["sku"] in goods for line in i["line_items"])]
    open_ones = [p for p in _billing_person(s, invoices) if p[0]["status"] == "AUTHORISED"]
    paid = [p for p in _billing_person(s, invoices) if p[0]["status"] == "PAID"]
    invoice, person = s.pick(open_ones if open_ones and (not paid or s.rng.random() < 0.55) else paid, "no invoice with goods")
    line = s.pick([li for li in invoice["line_items"] if li["sku"] in goods], "no product line")
    quantity = s.rng.randint(1, int(line["quantity"]))
    credit = round(quantity * float(line["unit_price"]), 2)
    is_open = invoice["status"] == "AUTHORISED" and float(invoice["amount_due"]) >= credit
    if invoice["status"] == "AUTHORISED" and not is_open:
        paid_pair = s.pick(paid, "no paid invoice")
        invoice, person = paid_pair
        line = s.pick([li for li in invoice["line_items"] if li["sku"] in goods], "no product line")
        quantity = s.rng.randint(1, int(line["quantity"]))
        credit = round(quantity * float(line["unit_price"]), 2)
    s.subject = person
    why = s.rng.choice(_WHY)
    what = f"{quantity} x {line['description']}"
    trigger = arrive(s, person, Ask(
        subject=f"Returned goods - {invoice.key}",
        text=f"We sent back {what} from invoice {invoice.key} last week: they {why}. Could you credit us for them?",
        short=f"We returned {what} from invoice {invoice.key}. Please credit us.",
        topic="Billing",
        relay=f"{person.first_name} returned {what} from invoice {invoice.key} (they {why}) and asks for a credit.",
    ))
    rule = consult(s, "Credit note rule",
                   "- Goods sent back are credited with a credit note, at the price they were invoiced at.\n"
                   "- While the invoice they came from still has money due, apply the credit to that invoice straight away.\n"
                   "- If that invoice is paid already, leave the credit on the customer's account for their next invoice, "
                   "and tell them so.",
                   author_role=rule_author(s, "finance lead"))
    found = lookup(s, invoice, {"invoice_number": invoice.key, "query": invoice.key}, say=f"open invoice {invoice.key}")
    stored = {"sku": line["sku"], "description": line["description"], "quantity": quantity,
              "unit_price": float(line["unit_price"]), "line_amount": credit}
    note = s.call("accounting", "create_credit_note",
                  {"contact_id": found.ref("contact_id"), "line_items": ListOf((Lit(stored),)),
                   "reason": detail(f"Returned {what} ({invoice.key})")},
                  say=f"issue a credit note for the {what} they sent back, at the invoiced price")
    s.decide("figure", "the credit: the units returned at the invoiced price")
    s.decide("rule", "credit goes on the invoice while it is open, else stays on the account", default=not is_open)
    s.brief.intro = f"{trigger.intro} about goods they sent back"
    s.brief.goal = (f"Credit {person.first_name} for what they sent back as our credit note rule says and "
                    f"{reply_clause(trigger, 'the credit and where it went')}")
    s.brief.constraints.append(rule.pointer)
    s.brief.anchors += [person.name]
    if is_open:
        s.call("accounting", "allocate_credit_note", {"credit_note_number": note.ref("id"),
                                                      "invoice_number": found.ref("invoice_number")},
               say="apply the credit to the invoice, as the rule says for one still open")
        where = f"applied to invoice {invoice.key}, which now has {money(float(invoice['amount_due']) - credit)} left to pay"
        facts = [Said("the credit", Lit(credit), "money"), Said("what is left to pay", Lit(round(float(invoice['amount_due']) - credit, 2)), "money")]
    else:
        where = f"on your account for your next invoice, as {invoice.key} is paid already"
        facts = [Said("the credit", Lit(credit), "money"), Said("that the invoice was paid already", Lit("already"), "premise")]
    reply(s, trigger, [f"Hi {person.first_name},\n\nWe've issued credit note ", note.ref("id"), f" for {money(credit)} ({what}), "
                       f"{where}."],
          say=reply_clause(trigger, "the credit and where it went"), facts=facts, subject=f"Credit for {invoice.key}")
