"""Store, shipping and contract workflows: returns and refunds, parcels that go wrong, address fixes,
goodwill discounts, renewals sent for signature and declined envelopes sent to the right person.

They run on commerce (Shopify), shipping (ShipStation) and esign (DocuSign), whose records come from one
plan of the World (an order and its shipment agree; an envelope's company and signers are customers).
A customer's request comes in on any channel they use (``stages.channels``); a declined envelope is the
signature service's own event.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

from mcp_services.kernel.world import Person

from composer.archetypes.common import money, org_of, rule_author, short_date
from composer.plan import ListOf, Lit
from composer.scenario import Rec, Said, Scenario, Skip, Step, archetype, detail
from composer.stages.acts import act, tell
from composer.stages.channels import COLLEAGUE, Ask, Trigger, arrive, asking, can_arrive, email_of, reply, reply_clause
from composer.stages.lookup import lookup, shows
from composer.stages.rules import colleague, consult, limit_near, near_first

#: Why a customer sends an item back, as they would write it (reason code, the note they leave).
_RETURN_NOTES = (
    ("defective", "It stopped working after a couple of days."),
    ("defective", "It arrived with a crack along one side."),
    ("wrong_item", "The box had a different item in it from the one I ordered."),
    ("size_too_small", "It is smaller than I expected; it does not fit."),
    ("unwanted", "I changed my mind; it is still in its packaging."),
)


def _days_between(earlier: str, later: str) -> int:
    return (datetime.strptime(later[:10], "%Y-%m-%d") - datetime.strptime(earlier[:10], "%Y-%m-%d")).days


def _customers(s: Scenario) -> dict[str, Person]:
    return {p.email: p for p in s.world.customers}


def _escalation_contact(s: Scenario) -> Person:
    """Who takes carrier claims: the operations manager, or the support lead when the user is the manager."""
    for role in ("operations manager", "support lead"):
        try:
            return colleague(s, role)
        except Skip:
            continue
    raise Skip("nobody on the team takes carrier claims")


def _threshold_near(s: Scenario, amount: float) -> float:
    """A round limit a rule might state, a little below or a little above ``amount`` (never far from it, never on it)."""
    return limit_near(s, amount, (5, 10, 20, 25) if amount < 200 else (10, 25, 50, 100))


def _delivered_orders(s: Scenario) -> set[str] | None:
    """Ids of orders whose parcel the carrier delivered (None when shipping is not mounted)."""
    if not s.has("shipping"):
        return None
    shipments = {sh.key: sh["order_id"] for sh in s.records("shipping", "shipment")}
    return {
        shipments[label["shipment_id"]]
        for label in s.records("shipping", "label", where={"is_return": False})
        if label["tracking_status"] == "delivered" and label["shipment_id"] in shipments
    }


def _shipped_on(s: Scenario, order: Rec) -> str | None:
    fulfilments = [
        f for f in s.records("commerce", "fulfillment", where={"order_id": order.key}) if f["status"] == "success"
    ]
    return min((f["created_at"] for f in fulfilments), default=None)


def _find_order(s: Scenario, order: Rec) -> Any:
    """The order the customer names by its number, found in the store."""
    return lookup(s, order, {"name": order["name"], "query": order["name"]}, say=f"look up order {order['name']} in the store",
                  name=f"order {order['name']}")


# -- support: returns and goodwill ------------------------------------------------------------------------


@archetype(
    "store-return-refund",
    family="support",
    title="A customer asked on the store to return an item: approve the return, refund it and tell them",
    services=("commerce",),
    fits=can_arrive(),
)
def store_return_refund(s: Scenario) -> None:
    policy = s.runner.call("commerce", "get_store_policy", {}).data
    window, final_sale = int(policy["return_window_days"]), set(policy["final_sale_product_types"] or ())
    customers = _customers(s)
    returned_orders = {r["order_id"] for r in s.records("commerce", "return")}
    delivered = _delivered_orders(s)
    products = {p.key: p for p in s.records("commerce", "product")}
    variants = {v.key: v for v in s.records("commerce", "variant")}
    options = []
    for order in s.records("commerce", "order", where={"financial_status": "paid", "fulfillment_status": "fulfilled"}):
        shipped = _shipped_on(s, order)
        if (
            order.key in returned_orders
            or order["email"] not in customers
            or shipped is None
            or (delivered is not None and order.key not in delivered)
        ):
            continue
        days = _days_between(shipped, s.world.now)
        if days > window - 1:  # the store refuses a return once the window has closed
            continue
        for line in order["line_items"]:
            variant = variants.get(s.record("commerce", "line_item", line["id"])["variant_id"])
            product = products.get(variant["product_id"]) if variant else None
            if product and product["requires_shipping"] and product["product_type"] not in final_sale and line["fulfilled_quantity"]:
                options.append((order, line, days))
    # Most often an order shipped close to the window's end: the agent checks the window, not a glance at the date.
    order, line, days = near_first(s, options, lambda o: o[2], window, "no recent shipped order of a customer with a returnable item")
    person = customers[order["email"]]
    s.subject = person
    reason, note = s.rng.choice(_RETURN_NOTES)
    request = s.event("commerce", "return_requested", "return", order_id=order.key,
                      items=[{"line_item_id": line["id"], "quantity": 1, "reason": reason}], customer_note=note, hours_ago=20.0)
    restock = reason != "defective"
    rule = consult(
        s, "Returns handling",
        "- Approve a return request that is inside the store's return window and refund the returned items straight away.\n"
        "- Items returned as defective or damaged are not put back in stock (refund them with restocking off); "
        "everything else goes back into stock.",
        author_role=rule_author(s),
    )
    item = line["title"]
    trigger = arrive(s, person, Ask(
        subject=f"Return for order {order['name']}",
        text=s.rng.choice((
            f"Yesterday I asked on your site to return the {item} from order {order['name']}. {note} "
            "Could you confirm the return and let me know how much I will get back?",
            f"I put in a return on your website for the {item} (order {order['name']}). {note} "
            "Is it accepted, and how much will you refund?",
        )),
        short=f"I asked on your site to return the {item} from order {order['name']}. Is it approved, and how much do I get back?",
        topic="Orders and shipping",
        relay=f"{person.first_name} asked on the store to return the {item} from order {order['name']} ({note.lower()}) "
              "and wants to know if it's accepted and how much they get back.",
    ))
    found = _find_order(s, order)
    requests = lookup(s, request, {"order_id": found.ref("id"), "status": "requested"},
                      say="find its request among the open return requests", name="the return request")
    s.refer(request, "the return request on that order", relation="order", where={"order_id": order.key, "status": "requested"})
    waiting = [r for r in s.records("commerce", "return", where={"status": "requested"})
               if r.key != request.key and shows(s, requests, r)]
    if waiting:
        s.trap("other-return-request", waiting[0], f"the return request on order {waiting[0]['order_name']}", step=requests)
    s.call("commerce", "get_store_policy", {}, say="check that the order is still inside the store's return window",
           stage="consult")
    s.decide("rule", "a return inside the store's return window is approved", default=True, value=days, threshold=window)
    s.decide("rule", "defective returns are not restocked, everything else is", default=False)
    act(s, "approve", requests, say="approve the return")
    refund = act(s, "refund", found, {"return_id": requests.ref("id"), "reason": detail(f"Return: {reason.replace('_', ' ')}"),
                                     "restock": restock},
                 say="refund the returned item, restocking it or not as our returns rules say")
    s.set_policy(rule.rec, "defective returns are not restocked, everything else is", refund, "restock", restock, not restock,
                 "The returned item is restocked or not as the returns rules say for its reason")
    s.brief.constraints.append(rule.pointer)
    facts = [Said("the decision", Lit("approve"), "decision"), Said("the amount refunded", refund.ref("amount"), "money")]
    reply(
        s, trigger,
        [f"Hi {person.first_name},\n\nYour return of the {item} is approved and we have refunded ", refund.ref("amount"),
         f" {order['currency']} to your original payment method. Sorry for the trouble."],
        say=reply_clause(trigger, "the amount refunded"), facts=facts, subject=f"Your return for order {order['name']}",
        relay_parts=[f"Done: {person.first_name}'s return of the {item} is approved and refunded (", refund.ref("amount"),
                     f" {order['currency']}). Could you let them know?"],
    )
    s.brief.intro = f"{trigger.intro} about the return they asked for on our store for order {order['name']}"
    s.brief.goal = f"Accept {person.first_name}'s return, refund it and {reply_clause(trigger, 'how much they get back')}"
    s.brief.anchors += [person.name, order["name"]]


@archetype(
    "goodwill-discount",
    family="support",
    title="An unhappy customer complains about a late order: give them a discount code under the goodwill rule",
    services=("commerce",),
    fits=can_arrive(),
)
def goodwill_discount(s: Scenario) -> None:
    customers = _customers(s)
    # The complaint says the order came late: only an order its carrier delivered after the promised date fits.
    late = {f["order_id"] for f in s.records("commerce", "fulfillment") if f["delivered_late"]}
    orders = [
        o
        for o in s.records("commerce", "order", where={"financial_status": "paid", "fulfillment_status": "fulfilled"})
        if o["email"] in customers and o["shipping_method"] != "none"
    ]
    per_customer = Counter(o["email"] for o in orders)
    order = s.pick([o for o in orders if per_customer[o["email"]] == 1 and o.key in late],
                   "no customer with one delivered order, delivered late")
    person = customers[order["email"]]
    s.subject = person
    # The limit sits near the order's total, on either side: the rule, not the size, decides the discount.
    threshold = _threshold_near(s, float(order["total_price"]))
    small, large = s.rng.choice(((10, 15), (10, 20), (15, 25)))
    rule = consult(
        s, "Goodwill discount rule",
        f"- When a customer is unhappy about a delay, offer a percentage discount code for their next order, "
        f"single use (usage limit 1).\n- Orders under {money(threshold)}: {small}% off. Orders of {money(threshold)} "
        f"or more: {large}% off.\n- Never give cash refunds for a delay alone.",
        author_role=rule_author(s, "support lead"),
    )
    trigger = arrive(s, person, Ask(
        subject=f"Order {order['name']} - really disappointed",
        text=s.rng.choice((
            f"Order {order['name']} finally turned up, a week later than promised, and I had to chase it twice. "
            "Not the experience I expected.",
            f"Our order {order['name']} arrived days after the date you gave us. We planned around that date. "
            "Frankly, I'm disappointed.",
        )),
        short=f"Order {order['name']} came a week late and I had to chase it twice. Not happy.",
        topic="Orders and shipping",
        relay=f"{person.first_name} is unhappy that order {order['name']} came a week late after they chased it twice.",
    ))
    _find_order(s, order)
    percent = large if order["total_price"] >= threshold else small
    # Either size is what the rule gives (an agent that ignores it may give either): the larger one is the rule biting.
    s.decide("rule", "the goodwill discount follows the order's size", default=percent == small,
             value=float(order["total_price"]), threshold=threshold)
    created = s.call(
        "commerce", "create_discount_code",
        {"code": detail(f"SORRY{order['name'].lstrip('#')}"), "kind": "percentage",
         "title": detail(f"Apology for the delay on {order['name']}"), "value": float(percent), "usage_limit": 1},
        say="create a single-use percentage discount code of the size the goodwill rule gives for their order",
    )
    s.set_policy(
        rule.rec, f"orders of {money(threshold)} or more get {large}% off, smaller ones {small}%", created, "value",
        float(percent), float(small if percent == large else large),
        "The discount is the size the goodwill rule gives for the order's total",
    )
    s.brief.constraints.append(rule.pointer)
    # The code is the agent's own: its reply is checked against the code it created, never this run's literal.
    reply(
        s, trigger,
        [f"Hi {person.first_name},\n\nI'm sorry your order arrived late. As an apology, here is a code for {percent}% off "
         "your next order: ", created.ref("code"), "."],
        say=reply_clause(trigger, "the code and what it gives"),
        facts=[Said("the discount code", created.ref("code")), Said("the discount", Lit(percent), "number")],
        subject=f"Sorry about order {order['name']}",
        relay_parts=[f"I've made {person.first_name} a code for {percent}% off their next order: ", created.ref("code"),
                     ". Could you pass it on with our apologies?"],
    )
    s.brief.intro = f"{trigger.intro}, unhappy that their order came late"
    s.brief.goal = (f"Make it up to {person.first_name} with a discount code for their next order and "
                    f"{reply_clause(trigger, 'the code')}")
    s.brief.anchors += [person.name]


# -- operations: parcels and addresses --------------------------------------------------------------------


@archetype(
    "parcel-exception",
    family="operations",
    title="A customer's parcel was damaged in transit: refund or escalate under the delivery-problems policy",
    services=("shipping", "commerce"),
    fits=can_arrive(),
)
def parcel_exception(s: Scenario) -> None:
    customers = _customers(s)
    shipments = {sh.key: sh for sh in s.records("shipping", "shipment")}
    options = []
    for label in s.records("shipping", "label", where={"is_return": False, "status": "completed"}):
        if label["tracking_status"] not in ("in_transit", "accepted", "out_for_delivery"):
            continue
        shipment = shipments[label["shipment_id"]]
        orders = s.records("commerce", "order", where={"id": shipment["order_id"]})
        if orders and orders[0]["email"] in customers and orders[0]["financial_status"] == "paid" and orders[0]["total_refunded"] == 0:
            options.append((label, shipment, orders[0]))
    label, shipment, order = s.pick(options, "no parcel of a customer in transit")
    person = customers[order["email"]]
    s.subject = person
    # The damage scan is the parcel's latest: this morning, and never before its last scan.
    scans = s.records("shipping", "tracking_event", where={"label_id": label.key}, order=("-occurred_at",))
    last = datetime.fromisoformat(scans[0]["occurred_at"].replace("Z", "+00:00")) if scans else None
    since = (s.world.now_dt - last).total_seconds() / 3600 if last is not None else 24.0
    if since < 1.0:
        raise Skip("the parcel was scanned less than an hour ago")
    s.event("shipping", "tracking_updated", "tracking_event", tracking_number=label["tracking_number"], status="exception",
            description="Package damaged in transit; contents not deliverable, carrier is disposing of it", location=None,
            hours_ago=min(6.0, since / 2))
    manager = _escalation_contact(s)
    total = float(order["total_price"])
    threshold = _threshold_near(s, total)
    rule = consult(
        s, "Delivery problems policy",
        f"- When the carrier reports a parcel damaged or lost, check its tracking first.\n"
        f"- Orders under {money(threshold)}: refund the order in full at once and tell the customer.\n"
        f"- Orders of {money(threshold)} or more: do not refund; pass it to the operations manager ({manager.name}) "
        f"with the order number and the tracking number, for a carrier claim and a replacement, and tell the customer we "
        "are on it.",
        author_role=rule_author(s),
    )
    trigger = arrive(s, person, Ask(
        subject=f"Where is order {order['name']}?",
        text=s.rng.choice((
            f"My order {order['name']} should have arrived by now and the tracking shows some kind of problem. What is going on?",
            f"The tracking for order {order['name']} has shown an error since this morning. Is our parcel lost?",
        )),
        short=f"Where is order {order['name']}? The tracking shows a problem.",
        topic="Orders and shipping",
        relay=f"{person.first_name} says the tracking of order {order['name']} shows a problem and wants to know what's going on.",
    ))
    found = lookup(s, shipment, {"order_number": order["name"], "query": order["name"]},
                   say=f"find the shipment of order {order['name']} in shipping", name=f"the shipment of order {order['name']}")
    s.call("shipping", "track_package", {"tracking_number": found.ref("tracking_number")},
           say=f"track the parcel of order {order['name']}", guided=True)
    s.refer(shipment, f"the shipment of order {order['name']}", relation="order", where={"order_number": order["name"]})
    happened = Said("what happened", Lit("damaged"))
    s.decide("rule", "orders above the limit are claimed, not refunded", default=total < threshold, value=total,
             threshold=threshold)
    if total < threshold:
        placed = _find_order(s, order)
        refund = act(s, "refund", placed, {"amount": placed.ref("refundable"), "reason": detail("Parcel damaged in transit")},
                     say="refund the order in full, as the policy says for an order of its size")
        reply(
            s, trigger,
            [f"Hi {person.first_name},\n\nThe carrier damaged your parcel in transit, so we have refunded your order in full: ",
             refund.ref("amount"), f" {order['currency']}. We are very sorry."],
            say=reply_clause(trigger, "what happened and how much you refunded"),
            facts=[happened, Said("the amount refunded", refund.ref("amount"), "money")],
            subject=f"Your order {order['name']}",
            relay_parts=["The carrier damaged the parcel; I've refunded the order in full (", refund.ref("amount"),
                         f" {order['currency']}). Could you tell {person.first_name}?"],
        )
        s.policy_documents.append(rule.rec)
    else:
        told = tell(
            s, manager,
            [f"The carrier damaged order {order['name']} for {person.name} in transit (tracking ", found.ref("tracking_number"),
             "). It's over our refund limit: could you file the claim and send a replacement?"],
            say="pass it to whoever the policy names for an order of this size, with the order and tracking numbers",
            facts=[Said("the order number", Lit(order["name"])), Said("the tracking number", found.ref("tracking_number"))],
            subject=f"Damaged parcel: order {order['name']}",
        )
        violation = list(s.specs)
        violation[told.index] = s.spec("commerce", "refund_order", {"order_id": order.key, "amount": order["refundable"],
                                                                    "reason": "Damaged"})
        reply(
            s, trigger,
            [f"Hi {person.first_name},\n\nThe carrier damaged your parcel in transit. We are arranging a replacement and "
             "will be in touch shortly."],
            say=reply_clause(trigger, "what happened and that we are on it"), facts=[happened],
            subject=f"Your order {order['name']}",
            relay_parts=[f"The carrier damaged {person.first_name}'s parcel; {manager.first_name} is arranging a replacement. "
                         "Could you let them know it was damaged and that we're on it?"],
        )
        s.forbid_by_policy(rule.rec, f"orders of {money(threshold)} or more are not refunded but claimed", told, violation,
                           ("commerce", "refunds", {"order_id": order.key}), "No refund was issued for a large order")
    s.brief.intro = f"{trigger.intro} asking where order {order['name']} is"
    s.brief.goal = (f"Find out what happened to {person.first_name}'s parcel, deal with it the way our policy says and "
                    f"{reply_clause(trigger, 'what happened')}")
    s.brief.constraints.append(rule.pointer)
    s.brief.anchors += [person.name, order["name"]]


@archetype(
    "order-address-fix",
    family="operations",
    title="A customer sends a corrected address for an order that has not shipped: fix the order and its shipment",
    services=("commerce", "shipping"),
    fits=can_arrive(),
)
def order_address_fix(s: Scenario) -> None:
    customers = _customers(s)
    pending = {sh["order_id"]: sh for sh in s.records("shipping", "shipment", where={"status": "pending"})}
    options = []
    for order in s.records("commerce", "order", where={"status": "open", "fulfillment_status": "unfulfilled"}):
        if order["email"] not in customers or order.key not in pending:
            continue
        theirs = s.records("commerce", "order", where={"email": order["email"], "fulfillment_status": "unfulfilled", "status": "open"})
        if len(theirs) == 1:
            options.append(order)
    order = s.pick(options, "no customer with one order waiting to ship")
    shipment = pending[order.key]
    person = customers[order["email"]]
    s.subject = person
    addresses = sorted({c["default_address"] for c in s.records("commerce", "customer") if c["default_address"]}
                       - {order["shipping_address"]})
    address = s.pick(addresses, "no other address")
    trigger = arrive(s, person, Ask(
        subject="Wrong delivery address",
        text=s.rng.choice((
            f"I just noticed my order that hasn't shipped yet is going to the wrong address. Please send it to {address} instead.",
            f"We've moved: could you deliver the order we placed that hasn't gone out yet to {address}?",
        )),
        short=f"My order that hasn't shipped yet has the wrong address. Please send it to {address}.",
        topic="Orders and shipping",
        relay=f"{person.first_name} says their order that hasn't shipped yet should go to {address} instead.",
    ))
    address_of = email_of(s, trigger)
    found = lookup(s, order, {"email": address_of, "customer_email": address_of},
                   say=f"find {person.first_name}'s order that has not shipped yet",
                   name=f"{person.first_name}'s order that has not shipped")
    s.refer(order, f"{person.first_name}'s order that has not shipped", relation="customer",
            where={"email": person.email, "fulfillment_status": "unfulfilled", "status": "open"})
    shipped = [o for o in s.records("commerce", "order", where={"email": person.email})
               if o["fulfillment_status"] != "unfulfilled" and shows(s, found, o)]
    if shipped:
        s.trap("shipped-order", shipped[0], f"their order {shipped[0]['name']} that already shipped", step=found)
    act(s, "update", found, {"shipping_address": address},
        say=f"change the shipping address of {person.first_name}'s order that has not shipped to {address}")
    box = lookup(s, shipment, {"order_number": found.ref("name"), "order_id": found.ref("id")}, say="find its shipment in shipping",
                 name="its shipment")
    act(s, "update", box, {"ship_to_address": address}, say="correct the delivery address on the shipment too")
    reply(
        s, trigger,
        [f"Hi {person.first_name},\n\nDone: order ", found.ref("name"), f" will now go to {address}."],
        say=reply_clause(trigger, "the order number"),
        facts=[Said("the order number", found.ref("name")), Said("the new address", Lit(address))],
        subject="Your delivery address",
        relay_parts=[f"Done: {person.first_name}'s order ", found.ref("name"), f" now goes to {address}. Could you confirm it to them?"],
    )
    s.brief.intro = f"{trigger.intro} with a corrected delivery address"
    s.brief.goal = (f"Make sure {person.first_name}'s order ships to the new address (the store order and the shipment that is "
                    f"waiting for a label) and {reply_clause(trigger, 'the order number')}")
    s.brief.constraints.append("Leave orders that already shipped alone")
    s.brief.anchors.append(person.name)


# -- sales: contracts out for signature -------------------------------------------------------------------


def _signed_msas(s: Scenario) -> list[Rec]:
    return [e for e in s.records("esign", "envelope", where={"template_id": "tpl_0001"}) if e["status"] == "completed"]


def _template(s: Scenario, name: str) -> Rec:
    found = [t for t in s.records("esign", "template") if t["name"] == name]
    if not found:
        raise Skip(f"no {name} template")
    return found[0]


@archetype(
    "contract-renewal-signature",
    family="sales",
    title="The account owner asks to send a customer's renewal amendment for signature to the MSA's signatory",
    services=("esign",),
    fits=can_arrive(COLLEAGUE),
)
def contract_renewal_signature(s: Scenario) -> None:
    team = {p.email: p for p in s.world.team}
    customers = _customers(s)
    options = []
    for envelope in _signed_msas(s):
        owner = team.get(envelope["sender_email"])
        signers = [r for r in envelope["recipients"] if r["kind"] == "signer" and r["email"] in customers]
        open_ones = [e for e in s.records("esign", "envelope", where={"company_name": envelope["company_name"]})
                     if e["status"] in ("created", "sent", "delivered")]
        if owner and owner.email != s.world.user.email and len(signers) == 1 and not open_ones:
            options.append((envelope, owner, customers[signers[0]["email"]]))
    msa, owner, signer = s.pick(options, "no signed MSA of a colleague's account")
    company = msa["company_name"]
    colleagues = [p for p in s.world.customers if p.organisation_id == signer.organisation_id and p.email != signer.email]
    if colleagues:  # the request names no one: the MSA says which of the company's people signs
        s.decide("pick", f"who signed {company}'s MSA on their side, among its {len(colleagues) + 1} people")
    renewal = _template(s, "Renewal Amendment")
    policy = s.rng.random() < 0.5
    copy_me = "" if policy else " Copy me on it please."
    trigger = arrive(s, owner, Ask(
        subject=f"{company} renewal",
        text=s.rng.choice((
            f"{company} agreed to renew. Could someone send the renewal amendment to whoever signed their MSA on their side?{copy_me}",
            f"Renewal with {company} is agreed - please get the renewal amendment out for signature to the person at "
            f"{company} who signed their MSA.{copy_me}",
        )),
        team="sales",
    ), channels=COLLEAGUE)
    lookup(s, msa, {"company_name": company, "status": "completed", "query": company}, say=f"find the MSA {company} signed",
           name=f"the MSA {company} signed")
    s.refer(msa, f"the MSA {company} signed", relation="company", where={"company_name": company, "template_id": "tpl_0001"})
    subject = f"Please DocuSign: Renewal Amendment - {company}"
    if policy:
        rule = consult(
            s, "Contract sending rules",
            '- Envelope subjects follow the pattern "Please DocuSign: <document> - <customer company>" (for example '
            '"Please DocuSign: Order Form - Acme Ltd"), so the pipeline report can match them to deals.\n'
            "- The account owner is always copied on the envelope.",
            author_role=rule_author(s, "sales lead"),
        )
        s.brief.constraints.append(rule.pointer)
    sent = s.call(
        "esign", "create_envelope",
        {"email_subject": subject if policy else detail(subject), "signers": [{"name": signer.name, "email": signer.email}],
         "template_id": renewal.key, "company_name": company, "cc": [{"name": owner.name, "email": owner.email}],
         "email_message": detail(f"Hi {signer.first_name}, please review and sign the renewal amendment. Thanks!"), "send": True},
        say=f"send {signer.name} the renewal amendment for {company} to sign, "
        + ("as our contract sending rules say" if policy else f"with {owner.first_name} in copy"),
    )
    if policy:
        s.set_policy(rule.rec, "envelope subjects name the document and the company", sent, "email_subject", subject,
                     f"Renewal amendment for {company}", "The envelope's subject follows the contract sending rules")
    reply(
        s, trigger, [f"Sent the renewal amendment to {signer.name} - envelope ", sent.ref("id"), "."],
        say=reply_clause(trigger, "who it went to and the envelope id"),
        facts=[Said("who signs it", Lit(signer.name)), Said("the envelope id", sent.ref("id"))],
        subject=f"Re: {company} renewal",
    )
    s.brief.intro = asking(trigger, f"for {company}'s renewal amendment to go out for signature")
    s.brief.goal = (f"Get {company}'s renewal amendment out for signature to the person at {company} who signed their MSA, "
                    f"and {reply_clause(trigger, 'who it went to and the envelope id')}")
    s.brief.anchors += [company, owner.name]


@archetype(
    "declined-envelope-redirect",
    family="sales",
    title="A customer's signatory declined an agreement, naming who should sign: send it to that person",
    services=("esign",),
    fits=can_arrive(COLLEAGUE),
)
def declined_envelope_redirect(s: Scenario) -> None:
    customers = _customers(s)
    options = []
    for envelope in s.records("esign", "envelope"):
        if envelope["status"] not in ("sent", "delivered") or not envelope["template_id"]:
            continue
        waiting = [r for r in envelope["recipients"] if r["kind"] == "signer" and r["status"] in ("sent", "delivered")]
        if len(waiting) != 1 or waiting[0]["email"] not in customers:
            continue
        person = customers[waiting[0]["email"]]
        others = [p for p in s.world.customers if p.organisation_id == person.organisation_id and p.email != person.email]
        if others:
            options.append((envelope, person, others))
    envelope, person, others = s.pick(options, "no envelope waiting on a customer with a colleague")
    right = s.pick(others, "no colleague")
    org = org_of(s, person)
    s.subject = person
    company = envelope["company_name"]
    template = s.record("esign", "template", envelope["template_id"])
    reason = f"I'm not authorised to sign this for {org.name}. Please send it to {right.name} ({right.email}), who signs our contracts."
    decline = s.event("esign", "envelope_declined", "recipient_event", envelope_id=envelope.key, reason=reason,
                      signer_email=person.email, hours_ago=3.0)
    s.trigger, s.topic = decline, f"{template['name']} for {company}"
    declined = s.record("esign", "envelope", envelope.key)
    found = lookup(s, declined, {"company_name": company, "status": "declined", "recipient_email": person.email, "query": company},
                   say=f"find the {template['name']} {person.first_name} declined", stage="trigger",
                   name=f"the {template['name']} {person.first_name} declined")
    s.refer(declined, f"the {template['name']} {person.first_name} declined", relation="recipient",
            where={"company_name": company, "id": envelope.key})
    lookup(s, decline, {"envelope_id": found.ref("id")}, say="read why they declined")
    # Only the decline note says which of the company's people signs instead.
    s.decide("pick", f"the person {person.first_name}'s decline note names, among {company}'s {len(others)} other people")
    others_of_company = [e for e in s.records("esign", "envelope", where={"company_name": company})
                         if e.key != envelope.key and e["template_id"] and e["template_id"] != envelope["template_id"]
                         and shows(s, found, e)]
    if others_of_company:
        other = others_of_company[0]
        s.trap("other-agreement", other, f"{company}'s other agreement {other['email_subject']!r}", step=found)
    # The same routing as the original: the person named instead of the decliner, our countersigner after them, the
    # same copies. (A re-send without our countersigner is checked as well: the request names only the new signer.)
    route = sorted(envelope["recipients"], key=lambda r: (r["routing_order"], r["id"]))
    signers = ListOf(tuple(Lit({"name": right.name, "email": right.email}) if r["email"] == person.email
                           else detail({"name": r["name"], "email": r["email"]}) for r in route if r["kind"] == "signer"))
    cc = [{"name": r["name"], "email": r["email"]} for r in route if r["kind"] == "cc"]
    resent = s.call(
        "esign", "create_envelope",
        {"email_subject": detail(f"Please DocuSign: {template['name']} - {company}"), "signers": signers,
         "template_id": found.ref("template_id"), "company_name": company, "deal_name": detail(envelope["deal_name"]),
         **({"cc": detail(cc)} if cc else {}),
         "email_message": detail(f"Hi {right.first_name}, {person.first_name} asked us to send this to you for signature."),
         "send": True},
        say=f"send the same {template['name']} to the person {person.first_name} named, for signature",
    )
    sender = {p.email: p for p in s.world.team}.get(envelope["sender_email"])
    if sender is None or sender.email == s.world.user.email:
        sender = colleague(s, "sales lead")
    tell(s, sender,
         [f"{person.name} declined the {template['name']} for {company}; it is now with {right.name} for signature (envelope ",
          resent.ref("id"), ")."],
         say=f"let {sender.name} know who has it now and the new envelope id",
         facts=[Said("who signs it now", Lit(right.name)), Said("the new envelope id", resent.ref("id"))],
         subject=f"{company}: {template['name']} re-sent")
    s.brief.intro = f"{person.name} from {org.name} declined to sign the {template['name']} we sent them, a few hours ago"
    s.brief.goal = (f"Get the {template['name']} signed by the person {person.first_name} pointed us to, and let "
                    f"{sender.name} know who has it now and the new envelope id")
    s.brief.constraints.append(f"{person.first_name}'s decline note says who should sign instead")
    s.brief.anchors += [person.name, org.name, sender.name]


#: How often the customer a colleague asks about has signed since they asked (then nothing is chased).
SIGNED_SINCE = 0.4


def _signature_asked(s: Scenario, envelope: Rec, owner: Person) -> tuple[Trigger, Step]:
    """The colleague who sent ``envelope`` asks whether the customer has signed; the agent finds the envelope."""
    company = envelope["company_name"]
    trigger = arrive(s, owner, Ask(
        subject=f"{company} signature",
        text=s.rng.choice((
            f"Has {company} signed the agreement I sent on {short_date(envelope['sent_at'])}? If not, could someone nudge them?",
            f"Any news on the contract I sent {company} on {short_date(envelope['sent_at'])}? Please chase whoever still has to sign.",
        )),
        team="sales",
    ), channels=COLLEAGUE)
    found = lookup(s, envelope, {"company_name": company, "sender_email": owner.email, "query": company},
                   say=f"check {company}'s envelopes", name=f"the agreement {owner.first_name} sent {company}")
    s.refer(envelope, f"the agreement {owner.first_name} sent {company}", relation="company",
            where={"company_name": company, "sender_email": owner.email, "id": envelope.key})
    return trigger, found


def _signed_since(s: Scenario, envelope: Rec, owner: Person) -> None:
    """The customer signed in the last day (the envelope's history shows it): the right work is no reminder, and a reply
    saying it is signed. A reminder sent anyway is refused; a reply saying one went fails."""
    company = envelope["company_name"]
    s.event("esign", "envelope_completed", "recipient_event", envelope_id=envelope.key, hours_ago=s.rng.uniform(1.0, 20.0))
    trigger, found = _signature_asked(s, envelope, owner)
    s.decide("premise", f"{company} has still to sign", default=False)
    # A guided request says the chase as the usual one does: the envelope (signed, completed) says otherwise.
    s.call("esign", "get_envelope", {"envelope_id": found.ref("id")}, guided=True,
           say=f"send a reminder on the agreement {owner.first_name} sent {company} to whoever still has to sign")
    s.literal_writes.append(s.spec("esign", "resend_envelope", {"envelope_id": found.ref("id")}))
    what = "who still has to sign and the contract number you chased"
    said = reply(s, trigger, [f"Good news: {company} has signed ", found.ref("contract_number"),
                              ", every signature is in, so there was nobody left to remind."],
                 say=reply_clause(trigger, what),
                 facts=[Said("the contract number", found.ref("contract_number")), Said("that it is signed", Lit("signed"), "text")],
                 subject=f"Re: {company} signature")
    param = "body" if any(name == "body" for name, _ in s.specs[said.index].args) else "text"
    s.literal_steps[said.index] = s.specs[said.index].with_arg(
        param, Lit(f"Not signed yet, so I've sent {company} a reminder on {envelope['contract_number']}."))
    s.brief.intro = asking(trigger, f"whether {company} has signed yet")
    s.brief.goal = f"Chase {company}'s signature on the agreement {owner.first_name} sent and {reply_clause(trigger, what)}"
    s.brief.anchors += [company, owner.name]


@archetype(
    "signature-reminder",
    family="sales",
    title="A colleague asks whether a customer has signed yet: remind the signer whose turn it is",
    services=("esign",),
    fits=can_arrive(COLLEAGUE),
)
def signature_reminder(s: Scenario) -> None:
    team = {p.email: p for p in s.world.team}
    options = []
    for envelope in s.records("esign", "envelope"):
        owner = team.get(envelope["sender_email"])
        if envelope["status"] not in ("sent", "delivered") or not envelope["contract_number"] or owner is None \
                or owner.email == s.world.user.email:
            continue
        same = [e for e in s.records("esign", "envelope", where={"company_name": envelope["company_name"]})
                if e["status"] in ("sent", "delivered")]
        waiting = [r for r in envelope["recipients"] if r["kind"] == "signer" and r["status"] in ("sent", "delivered")]
        if len(same) == 1 and len(waiting) == 1:
            options.append((envelope, owner, waiting[0]))
    envelope, owner, signer = s.pick(options, "no envelope out for signature of a colleague's account")
    company = envelope["company_name"]
    if s.rng.random() < SIGNED_SINCE:  # the customer signed since: nothing to chase (the request reads the same)
        return _signed_since(s, envelope, owner)
    trigger, found = _signature_asked(s, envelope, owner)
    s.decide("premise", f"{company} has still to sign", default=True)
    done = [e for e in s.records("esign", "envelope", where={"company_name": company})
            if e["status"] == "completed" and shows(s, found, e)]
    if done:
        s.trap("signed-envelope", done[0], f"{company}'s envelope that is already signed", step=found)
    turn = lookup(s, s.record("esign", "recipient", signer["id"]), {"envelope_id": found.ref("id")},
                     say="check whose turn it is to sign")
    signers = [r for r in envelope["recipients"] if r["kind"] == "signer"]
    if len(signers) > 1:  # the customer's signer or our countersigner: the routing says whose turn it is
        s.decide("pick", f"whichever of the {len(signers)} signers on {company}'s agreement has it now")
    act(s, "notify", found, say=f"send a reminder on the agreement {owner.first_name} sent {company} to whoever still has to sign")
    reply(
        s, trigger,
        ["Not signed yet: it's with ", turn.ref("name"), ". I've sent them a reminder on ", found.ref("contract_number"), "."],
        say=reply_clause(trigger, "who still has to sign and the contract number you chased"),
        facts=[Said("who still has to sign", turn.ref("name")), Said("the contract number", found.ref("contract_number"))],
        subject=f"Re: {company} signature",
    )
    s.brief.intro = asking(trigger, f"whether {company} has signed yet")
    s.brief.goal = (f"Chase {company}'s signature on the agreement {owner.first_name} sent and "
                    f"{reply_clause(trigger, 'who still has to sign and the contract number you chased')}")
    s.brief.anchors += [company, owner.name]
