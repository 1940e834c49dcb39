"""Store, shipping and contract workflows: returns and refunds, parcels that go wrong, address fixes,
goodwill discounts, renewals sent for signature and declined envelopes sent to the right person.

They run on commerce (Shopify), shipping (ShipStation) and esign (DocuSign), whose records come from one
plan of the World (an order and its shipment agree; an envelope's company and signers are customers).
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from composer.archetypes.common import (
    chat_post,
    colleague,
    inbound_email,
    money,
    org_of,
    rule_source,
    short_date,
    signature,
)
from composer.plan import ListOf, Lit
from composer.scenario import Rec, Scenario, Skip, archetype, detail
from mcp_services.kernel.world import Person

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


def _rule_author(s: Scenario, *preferred: str) -> str:
    """The role of a manager who writes the team's rules, ``preferred`` first (never the user: they would not
    email themselves)."""
    for role in (*preferred, "operations manager", "support lead", "sales lead"):
        try:
            if s.world.team_member(role).email != s.world.user.email:
                return role
        except KeyError:
            continue
    raise Skip("no manager besides the user")


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


def _customer_email(s: Scenario, person: Person, subject: str, body: str) -> tuple[Rec, str]:
    """The customer's email that starts the work, and how the request points at it ("Ana's email")."""
    email, when = inbound_email(s, person, subject, body)
    s.refer(
        email, f"{person.first_name}'s email", relation="sender", where={"from_email": person.email}, latest="sent_at"
    )
    return email, when


def _shipped_on(s: Scenario, order: Rec) -> str | None:
    fulfilments = [
        f for f in s.records("commerce", "fulfillment", where={"order_id": order.key}) if f["status"] == "success"
    ]
    return min((f["created_at"] for f in fulfilments), default=None)


# -- support: returns and goodwill ------------------------------------------------------------------------


@archetype(
    "store-return-refund",
    family="support",
    title="A customer asked on the store to return an item: approve the return, refund it and tell them",
    services=("commerce", "mailbox"),
)
def store_return_refund(s: Scenario) -> None:
    policy = s.call("commerce", "get_store_policy", {}, say="check the store's return policy", needed=False)
    window, final_sale = int(policy.value("return_window_days")), set(policy.value("final_sale_product_types") or ())
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
        if _days_between(shipped, s.world.now) > window - 2:
            continue
        for line in order["line_items"]:
            variant = variants.get(s.record("commerce", "line_item", line["id"])["variant_id"])
            product = products.get(variant["product_id"]) if variant else None
            if (
                product
                and product["requires_shipping"]
                and product["product_type"] not in final_sale
                and line["fulfilled_quantity"]
            ):
                options.append((order, line))
    order, line = s.pick(options, "no recent shipped order of a customer with a returnable item")
    person = customers[order["email"]]
    org = org_of(s, person)
    s.subject = person
    reason, note = s.rng.choice(_RETURN_NOTES)
    request = s.event(
        "commerce",
        "return_requested",
        "return",
        order_id=order.key,
        items=[{"line_item_id": line["id"], "quantity": 1, "reason": reason}],
        customer_note=note,
        hours_ago=20.0,
    )
    restock = reason != "defective"
    document, pointer = rule_source(
        s,
        "Returns handling",
        "- Approve a return request that is inside the store's return window and refund the returned items straight away.\n"
        "- Items returned as defective or damaged are not put back in stock (refund them with restocking off); "
        "everything else goes back into stock.",
        author_role=_rule_author(s),
    )
    item = line["title"]
    email, when = _customer_email(
        s,
        person,
        f"Return for order {order['name']}",
        f"Hi,\n\nYesterday I asked on your site to return the {item} from order {order['name']}. {note} "
        f"Could you confirm the return and let me know how much I will get back?\n\nThanks,\n{signature(person, org)}",
    )
    found = s.call(
        "commerce",
        "list_orders",
        {"name": order["name"]},
        select=order,
        say=f"look up order {order['name']} in the store",
    )
    requests = s.call(
        "commerce",
        "list_returns",
        {"status": "requested"},
        select=request,
        say="find its request among the open return requests",
    )
    s.refer(
        request,
        "the return request on that order",
        relation="order",
        where={"order_id": order.key, "status": "requested"},
    )
    waiting = [r for r in s.records("commerce", "return", where={"status": "requested"}) if r.key != request.key]
    if waiting:
        other = waiting[0]
        s.trap("other-return-request", other, f"the return request on order {other['order_name']}", step=requests)
    s.call("commerce", "approve_return", {"return_id": requests.ref("id")}, say="approve the return")
    refund = s.call(
        "commerce",
        "refund_order",
        {
            "order_id": found.ref("id"),
            "return_id": requests.ref("id"),
            "reason": detail(f"Return: {reason.replace('_', ' ')}"),
            "restock": restock,
        },
        say="refund the returned item, restocking it or not as our returns rules say",
    )
    if restock:
        s.policy_documents.append(document)
    else:
        s.set_policy(
            document,
            "defective returns are not restocked",
            refund,
            "restock",
            False,
            True,
            "The defective item was not put back in stock",
        )
    s.call(
        "mailbox",
        "reply_to_message",
        {
            "message_id": email.key,
            "body": s.text(
                f"Hi {person.first_name},\n\nYour return of the {item} is approved and we have refunded ",
                refund.ref("amount"),
                f" {order['currency']} to your original payment method. Sorry for the trouble.",
            ),
        },
        say=f"reply to {person.first_name} with the amount refunded",
        mentions=[(refund.ref("amount"), "the amount refunded")],
    )
    s.brief.intro = (
        f"{person.name} emailed {when} about the return they asked for on our store for order {order['name']}"
    )
    s.brief.goal = f"Accept {person.first_name}'s return, refund it and tell them how much they get back"
    s.brief.constraints.append(pointer)
    s.brief.anchors += [person.name, order["name"]]


@archetype(
    "goodwill-discount",
    family="support",
    title="An unhappy customer complains about a late order: give them a discount code under the goodwill rule",
    services=("commerce", "mailbox"),
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
    org = org_of(s, person)
    s.subject = person
    threshold = float(s.rng.choice((100, 150, 200, 300)))
    small, large = s.rng.choice(((10, 15), (10, 20), (15, 25)))
    document, pointer = rule_source(
        s,
        "Goodwill discount rule",
        f"- When a customer is unhappy about a delay, offer a percentage discount code for their next order, "
        f"single use (usage limit 1).\n- Orders under {money(threshold)}: {small}% off. Orders of {money(threshold)} "
        f"or more: {large}% off.\n- Never give cash refunds for a delay alone.",
        author_role=_rule_author(s, "support lead"),
    )
    email, when = _customer_email(
        s,
        person,
        f"Order {order['name']} - really disappointed",
        f"Hello,\n\nOrder {order['name']} finally turned up, a week later than promised, and I had to chase it twice. "
        f"Not the experience I expected.\n\nRegards,\n{signature(person, org)}",
    )
    s.call(
        "commerce",
        "list_orders",
        {"name": order["name"]},
        select=order,
        say=f"look up order {order['name']} to see what it came to",
    )
    percent = large if order["total_price"] >= threshold else small
    code = detail(f"SORRY{order['name'].lstrip('#')}")
    created = s.call(
        "commerce",
        "create_discount_code",
        {
            "code": code,
            "kind": "percentage",
            "title": detail(f"Apology for the delay on {order['name']}"),
            "value": float(percent),
            "usage_limit": 1,
        },
        say="create a single-use percentage discount code of the size the goodwill rule gives for that order",
    )
    s.set_policy(
        document,
        f"orders of {money(threshold)} or more get {large}% off, smaller ones {small}%",
        created,
        "value",
        float(percent),
        float(small if percent == large else large),
        "The discount is the size the goodwill rule gives for the order's total",
    )
    s.call(
        "mailbox",
        "reply_to_message",
        {
            "message_id": email.key,
            "body": s.text(
                f"Hi {person.first_name},\n\nI'm sorry your order arrived late. As an apology, here is a code for {percent}% off "
                "your next order: ",
                created.ref("code"),
                ".",
            ),
        },
        say=f"apologise to {person.first_name} and give them the code",
        mentions=[(created.ref("code"), "the discount code")],
    )
    s.brief.intro = f"{person.name} from {org.name} emailed {when}, unhappy that their order came late"
    s.brief.goal = f"Make it up to {person.first_name} with a discount code for their next order and send it to them"
    s.brief.constraints.append(pointer)
    s.brief.anchors += [person.name]


# -- operations: parcels and addresses --------------------------------------------------------------------


@archetype(
    "parcel-exception",
    family="operations",
    title="A customer's parcel was damaged in transit: refund or escalate under the delivery-problems policy",
    services=("shipping", "commerce", "mailbox"),
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
        if (
            orders
            and orders[0]["email"] in customers
            and orders[0]["financial_status"] == "paid"
            and orders[0]["total_refunded"] == 0
        ):
            options.append((label, shipment, orders[0]))
    label, shipment, order = s.pick(options, "no parcel of a customer in transit")
    person = customers[order["email"]]
    org = org_of(s, person)
    s.subject = person
    # The damage scan is the parcel's latest: this morning, and never before its last scan.
    scans = s.records("shipping", "tracking_event", where={"label_id": label.key}, order=("-occurred_at",))
    since = (s.world.now_dt - datetime.fromisoformat(scans[0]["occurred_at"].replace("Z", "+00:00"))).total_seconds() / 3600 if scans else 24.0
    if since < 1.0:
        raise Skip("the parcel was scanned less than an hour ago")
    s.event(
        "shipping",
        "tracking_updated",
        "tracking_event",
        tracking_number=label["tracking_number"],
        status="exception",
        description="Package damaged in transit; contents not deliverable, carrier is disposing of it",
        location=None,
        hours_ago=min(6.0, since / 2),
    )
    manager = _escalation_contact(s)
    total = float(order["total_price"])
    # Half the time the order is under the policy's limit (refund it), half the time over it (escalate).
    factor = s.rng.uniform(1.3, 2.0) if s.rng.random() < 0.5 else s.rng.uniform(0.4, 0.75)
    threshold = float(max(50, round(total * factor / 50) * 50))
    if abs(threshold - total) < 5:
        threshold += 50
    document, pointer = rule_source(
        s,
        "Delivery problems policy",
        f"- When the carrier reports a parcel damaged or lost, check its tracking first.\n"
        f"- Orders under {money(threshold)}: refund the order in full at once and tell the customer.\n"
        f"- Orders of {money(threshold)} or more: do not refund; forward the customer's email to the operations manager "
        f"({manager.name}, {manager.email}) for a carrier claim and a replacement, and tell the customer we are on it.",
        author_role=_rule_author(s),
    )
    email, when = _customer_email(
        s,
        person,
        f"Where is order {order['name']}?",
        f"Hi,\n\nMy order {order['name']} should have arrived by now and the tracking shows some kind of problem. "
        f"What is going on?\n\nThanks,\n{signature(person, org)}",
    )
    found = s.call(
        "shipping",
        "list_shipments",
        {"order_number": order["name"]},
        select=shipment,
        say=f"find the shipment of order {order['name']} in shipping",
    )
    s.call("shipping", "track_package", {"tracking_number": found.ref("tracking_number")}, say="track the parcel")
    s.refer(shipment, f"the shipment of order {order['name']}", relation="order", where={"order_number": order["name"]})
    if total < threshold:
        placed = s.call(
            "commerce", "list_orders", {"name": order["name"]}, select=order, say="open the order in the store"
        )
        refund = s.call(
            "commerce",
            "refund_order",
            {
                "order_id": placed.ref("id"),
                "amount": placed.ref("refundable"),
                "reason": detail("Parcel damaged in transit"),
            },
            say="refund the order in full, as the policy says for an order of its size",
        )
        s.call(
            "mailbox",
            "reply_to_message",
            {
                "message_id": email.key,
                "body": s.text(
                    f"Hi {person.first_name},\n\nThe carrier damaged your parcel in transit, so we have refunded your order in full: ",
                    refund.ref("amount"),
                    f" {order['currency']}. We are very sorry.",
                ),
            },
            say=f"tell {person.first_name} what happened and how much you refunded",
            mentions=[(refund.ref("amount"), "the amount refunded")],
        )
        s.policy_documents.append(document)
    else:
        forward = s.call(
            "mailbox",
            "forward_message",
            {
                "message_id": email.key,
                "to": ListOf((Lit(manager.email),)),
                "note": detail("Parcel damaged in transit: claim and replacement, please."),
            },
            say=f"forward {person.first_name}'s email to whoever the policy names for an order of this size",
        )
        s.call(
            "mailbox",
            "reply_to_message",
            {
                "message_id": email.key,
                "body": detail(
                    f"Hi {person.first_name}, the carrier damaged your parcel; we are arranging a replacement."
                ),
            },
            say=f"tell {person.first_name} what happened and that we are on it",
        )
        violation = [
            *s.specs[:2],
            s.spec(
                "commerce", "refund_order", {"order_id": order.key, "amount": order["refundable"], "reason": "Damaged"}
            ),
            s.specs[-1],
        ]
        s.forbid_by_policy(
            document,
            f"orders of {money(threshold)} or more are not refunded but claimed",
            forward,
            violation,
            ("commerce", "refunds", {"order_id": order.key}),
            "No refund was issued for a large order",
        )
    s.brief.intro = f"{person.name} from {org.name} emailed {when} asking where order {order['name']} is"
    s.brief.goal = f"Find out what happened to {person.first_name}'s parcel and deal with it the way our policy says"
    s.brief.constraints.append(pointer)
    s.brief.anchors += [person.name, order["name"]]


@archetype(
    "order-address-fix",
    family="operations",
    title="A customer sends a corrected address for an order that has not shipped: fix the order and its shipment",
    services=("commerce", "shipping", "mailbox"),
)
def order_address_fix(s: Scenario) -> None:
    customers = _customers(s)
    pending = {sh["order_id"]: sh for sh in s.records("shipping", "shipment", where={"status": "pending"})}
    options = []
    for order in s.records("commerce", "order", where={"status": "open", "fulfillment_status": "unfulfilled"}):
        if order["email"] not in customers or order.key not in pending:
            continue
        theirs = s.records(
            "commerce", "order", where={"email": order["email"], "fulfillment_status": "unfulfilled", "status": "open"}
        )
        if len(theirs) == 1:
            options.append(order)
    order = s.pick(options, "no customer with one order waiting to ship")
    shipment = pending[order.key]
    person = customers[order["email"]]
    org = org_of(s, person)
    s.subject = person
    addresses = sorted(
        {c["default_address"] for c in s.records("commerce", "customer") if c["default_address"]}
        - {order["shipping_address"]}
    )
    address = s.pick(addresses, "no other address")
    email, when = _customer_email(
        s,
        person,
        "Wrong delivery address",
        f"Hi,\n\nI just noticed my order that hasn't shipped yet is going to the wrong address. Please send it to "
        f"{address} instead.\n\nThank you,\n{signature(person, org)}",
    )
    found = s.call(
        "commerce",
        "list_orders",
        {"email": person.email},
        select=order,
        say=f"find {person.first_name}'s order that has not shipped yet",
    )
    s.refer(
        order,
        f"{person.first_name}'s order that has not shipped",
        relation="customer",
        where={"email": person.email, "fulfillment_status": "unfulfilled", "status": "open"},
    )
    shipped = [
        o
        for o in s.records("commerce", "order", where={"email": person.email})
        if o["fulfillment_status"] != "unfulfilled"
    ]
    if shipped:
        s.trap("shipped-order", shipped[0], f"their order {shipped[0]['name']} that already shipped", step=found)
    s.call(
        "commerce",
        "update_order",
        {"order_id": found.ref("id"), "shipping_address": address},
        say=f"change its shipping address to {address}",
    )
    box = s.call(
        "shipping",
        "list_shipments",
        {"order_number": found.ref("name")},
        select=shipment,
        say="find its shipment in shipping",
    )
    s.call(
        "shipping",
        "update_shipment",
        {"shipment_id": box.ref("id"), "ship_to_address": address},
        say="correct the delivery address on the shipment too",
    )
    s.call(
        "mailbox",
        "reply_to_message",
        {
            "message_id": email.key,
            "body": s.text(
                f"Hi {person.first_name},\n\nDone: order ", found.ref("name"), f" will now go to {address}."
            ),
        },
        say=f"confirm to {person.first_name} with the order number",
        mentions=[(found.ref("name"), "the order number")],
    )
    s.brief.intro = f"{person.name} emailed {when} with a corrected delivery address"
    s.brief.goal = (
        f"Make sure {person.first_name}'s order ships to the new address (the store order and the shipment "
        "that is waiting for a label) and confirm it to them with the order number"
    )
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
    services=("esign", "chat"),
)
def contract_renewal_signature(s: Scenario) -> None:
    team = {p.email: p for p in s.world.team}
    customers = _customers(s)
    options = []
    for envelope in _signed_msas(s):
        owner = team.get(envelope["sender_email"])
        signers = [r for r in envelope["recipients"] if r["kind"] == "signer" and r["email"] in customers]
        open_ones = [
            e
            for e in s.records("esign", "envelope", where={"company_name": envelope["company_name"]})
            if e["status"] in ("created", "sent", "delivered")
        ]
        if owner and owner.email != s.world.user.email and len(signers) == 1 and not open_ones:
            options.append((envelope, owner, customers[signers[0]["email"]]))
    msa, owner, signer = s.pick(options, "no signed MSA of a colleague's account")
    company = msa["company_name"]
    renewal = _template(s, "Renewal Amendment")
    policy = s.rng.random() < 0.5
    copy_me = "" if policy else " Copy me on it please."
    post, when = chat_post(
        s,
        owner,
        "sales",
        s.rng.choice(
            (
                f"{company} agreed to renew. Could someone send the renewal amendment to whoever signed their MSA on their side?{copy_me}",
                (
                    f"Renewal with {company} is agreed - please get the renewal amendment out for signature to the person at "
                    f"{company} who signed their MSA.{copy_me}"
                ),
            )
        ),
    )
    s.call(
        "esign",
        "list_envelopes",
        {"company_name": company, "status": "completed"},
        select=msa,
        say=f"find the MSA {company} signed",
    )
    s.refer(
        s.record("esign", "envelope", msa.key),
        f"the MSA {company} signed",
        relation="company",
        where={"company_name": company, "template_id": "tpl_0001"},
    )
    signers = [{"name": signer.name, "email": signer.email}]
    subject = f"Please DocuSign: Renewal Amendment - {company}"
    if policy:
        document, pointer = rule_source(
            s,
            "Contract sending rules",
            '- Envelope subjects follow the pattern "Please DocuSign: <document> - <customer company>" (for example '
            '"Please DocuSign: Order Form - Acme Ltd"), so the pipeline report can match them to deals.\n'
            "- The account owner is always copied on the envelope.",
            author_role=_rule_author(s, "sales lead"),
        )
        s.brief.constraints.append(pointer)
    sent = s.call(
        "esign",
        "create_envelope",
        {
            "email_subject": subject if policy else detail(subject),
            "signers": signers,
            "template_id": renewal.key,
            "company_name": company,
            "cc": [{"name": owner.name, "email": owner.email}],
            "email_message": detail(f"Hi {signer.first_name}, please review and sign the renewal amendment. Thanks!"),
            "send": True,
        },
        say=f"send {signer.name} the renewal amendment for {company} to sign, "
        + ("as our contract sending rules say" if policy else f"with {owner.first_name} in copy"),
    )
    if policy:
        s.set_policy(
            document,
            "envelope subjects name the document and the company",
            sent,
            "email_subject",
            subject,
            f"Renewal amendment for {company}",
            "The envelope's subject follows the contract sending rules",
        )
    s.call(
        "chat",
        "reply_in_thread",
        {
            "message_id": post.key,
            "text": s.text(f"Sent the renewal amendment to {signer.name} - envelope ", sent.ref("id"), "."),
        },
        say=f"tell {owner.first_name} in the thread it is out, with the envelope id",
        mentions=[(sent.ref("id"), "the envelope id")],
    )
    s.brief.intro = f"{owner.name} asked in #sales {when} for {company}'s renewal amendment to go out for signature"
    s.brief.goal = (
        f"Get {company}'s renewal amendment out for signature to the person at {company} who signed their MSA, "
        f"and tell {owner.first_name} in the thread which envelope it is"
    )
    s.brief.anchors += [company, owner.name]


@archetype(
    "declined-envelope-redirect",
    family="sales",
    title="A customer's signatory declined an agreement, naming who should sign: send it to that person",
    services=("esign", "mailbox"),
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
        others = [
            p for p in s.world.customers if p.organisation_id == person.organisation_id and p.email != person.email
        ]
        if others:
            options.append((envelope, person, others))
    envelope, person, others = s.pick(options, "no envelope waiting on a customer with a colleague")
    right = s.pick(others, "no colleague")
    org = org_of(s, person)
    s.subject = person
    template = s.record("esign", "template", envelope["template_id"])
    reason = (
        f"I'm not authorised to sign this for {org.name}. Please send it to {right.name} ({right.email}), "
        "who signs our contracts."
    )
    decline = s.event(
        "esign",
        "envelope_declined",
        "recipient_event",
        envelope_id=envelope.key,
        reason=reason,
        signer_email=person.email,
        hours_ago=3.0,
    )
    s.trigger = decline
    declined = s.record("esign", "envelope", envelope.key)
    found = s.call(
        "esign",
        "list_envelopes",
        {"company_name": envelope["company_name"]},
        select=declined,
        say=f"find the {template['name']} {person.first_name} declined and read why",
    )
    s.refer(
        declined,
        f"the {template['name']} {person.first_name} declined",
        relation="recipient",
        where={"company_name": envelope["company_name"], "id": envelope.key},
    )
    others_of_company = [
        e
        for e in s.records("esign", "envelope", where={"company_name": envelope["company_name"]})
        if e.key != envelope.key and e["template_id"] and e["template_id"] != envelope["template_id"]
    ]
    if others_of_company:
        other = others_of_company[0]
        s.trap(
            "other-agreement",
            other,
            f"{envelope['company_name']}'s other agreement {other['email_subject']!r}",
            step=found,
        )
    resent = s.call(
        "esign",
        "create_envelope",
        {
            "email_subject": detail(f"Please DocuSign: {template['name']} - {envelope['company_name']}"),
            "signers": [{"name": right.name, "email": right.email}],
            "template_id": found.ref("template_id"),
            "company_name": envelope["company_name"],
            "deal_name": detail(envelope["deal_name"]),
            "email_message": detail(
                f"Hi {right.first_name}, {person.first_name} asked us to send this to you for signature."
            ),
            "send": True,
        },
        say=f"send the same {template['name']} to the person {person.first_name} named, for signature",
    )
    sender = {p.email: p for p in s.world.team}.get(envelope["sender_email"])
    if sender is not None and sender.email != s.world.user.email:
        s.call(
            "mailbox",
            "send_email",
            {
                "to": ListOf((Lit(sender.email),)),
                "subject": detail(f"{envelope['company_name']}: {template['name']} re-sent"),
                "body": s.text(
                    f"Hi {sender.first_name},\n\n{person.name} declined the {template['name']}; it is now with "
                    f"{right.name} for signature (envelope ",
                    resent.ref("id"),
                    ").",
                ),
            },
            say=f"email {sender.name}, who sent the original, with the new envelope id",
            mentions=[(resent.ref("id"), "the new envelope id")],
        )
        s.brief.goal = (
            f"Get the {template['name']} signed by the person {person.first_name} pointed us to, and let "
            f"{sender.name}, who sent the original, know the new envelope id by email"
        )
        s.brief.anchors.append(sender.name)
    else:
        s.brief.goal = f"Get the {template['name']} signed by the person {person.first_name} pointed us to"
    s.brief.intro = (
        f"{person.name} from {org.name} declined to sign the {template['name']} we sent them, a few hours ago"
    )
    s.brief.constraints.append(f"{person.first_name}'s decline note says who should sign instead")
    s.brief.anchors += [person.name, org.name]


@archetype(
    "signature-reminder",
    family="sales",
    title="A colleague asks whether a customer has signed yet: remind the signer whose turn it is",
    services=("esign", "chat"),
)
def signature_reminder(s: Scenario) -> None:
    team = {p.email: p for p in s.world.team}
    options = []
    for envelope in s.records("esign", "envelope"):
        owner = team.get(envelope["sender_email"])
        if (
            envelope["status"] not in ("sent", "delivered")
            or not envelope["contract_number"]
            or owner is None
            or owner.email == s.world.user.email
        ):
            continue
        same = [
            e
            for e in s.records("esign", "envelope", where={"company_name": envelope["company_name"]})
            if e["status"] in ("sent", "delivered")
        ]
        if len(same) == 1:
            options.append((envelope, owner))
    envelope, owner = s.pick(options, "no envelope out for signature of a colleague's account")
    company = envelope["company_name"]
    post, when = chat_post(
        s,
        owner,
        "sales",
        f"Has {company} signed the agreement I sent on {short_date(envelope['sent_at'])}? If not, could someone nudge them?",
    )
    found = s.call(
        "esign", "list_envelopes", {"company_name": company}, select=envelope, say=f"check {company}'s envelopes"
    )
    s.refer(
        envelope,
        f"the agreement {owner.first_name} sent {company}",
        relation="company",
        where={"company_name": company, "sender_email": owner.email, "id": envelope.key},
    )
    done = [e for e in s.records("esign", "envelope", where={"company_name": company}) if e["status"] == "completed"]
    if done:
        s.trap("signed-envelope", done[0], f"{company}'s envelope that is already signed", step=found)
    s.call(
        "esign", "resend_envelope", {"envelope_id": found.ref("id")}, say="send the signer whose turn it is a reminder"
    )
    s.call(
        "chat",
        "reply_in_thread",
        {
            "message_id": post.key,
            "text": s.text("Not signed yet - I've sent them a reminder on ", found.ref("contract_number"), "."),
        },
        say=f"answer {owner.first_name} in the thread with the contract number you chased",
        mentions=[(found.ref("contract_number"), "the contract number")],
    )
    s.brief.intro = f"{owner.name} asked in #sales {when} whether {company} has signed yet"
    s.brief.goal = (
        f"Chase {company}'s signature on the agreement {owner.first_name} sent and tell {owner.first_name} in the "
        "thread which contract you chased"
    )
    s.brief.anchors += [company, owner.name]
