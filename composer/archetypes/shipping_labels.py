"""Labels bought to a deadline: the cheapest service that still arrives by the day the customer needs the parcel.

A customer whose order waits for its label says when they need it. The shipping rule says which service to buy:
the cheapest of the carriers' rates whose estimated delivery is on or before that day. Ground is the cheapest; where
the day is too close for ground, only the rates say which express service is the cheapest one in time.
"""

from __future__ import annotations

from datetime import date, timedelta

from composer.archetypes.common import rule_author, short_date
from composer.plan import Lit
from composer.scenario import Said, Scenario, Skip, archetype
from composer.stages.channels import Ask, arrive, can_arrive, reply, reply_clause
from composer.stages.lookup import lookup
from composer.stages.rules import consult


def _day_name(iso: str) -> str:
    return f"{date.fromisoformat(iso).strftime('%A')} {short_date(iso)}"


@archetype(
    "label-by-deadline",
    family="operations",
    title="A customer needs their order by a day: buy the cheapest label that arrives in time, and tell them when",
    services=("shipping",),
    fits=can_arrive(),
)
def label_by_deadline(s: Scenario) -> None:
    people = {p.email: p for p in s.world.customers}
    pending = [sh for sh in s.records("shipping", "shipment", where={"status": "pending"}) if sh["ship_to_email"] in people]
    shipment = s.pick(pending, "no order waiting for its label")
    person = people[shipment["ship_to_email"]]
    s.subject = person
    check = s.runner.call("shipping", "validate_address", {"address": shipment["ship_to_address"]})
    broken = not check.success or check.data.get("status") == "error"
    result = s.runner.call("shipping", "get_rates", {"shipment_id": shipment.key})
    if not result.success or not result.data:
        raise Skip("no rates for the shipment")
    rates = sorted(result.data, key=lambda r: (float(r["amount"]), r["service_code"]))
    cheapest = rates[0]
    days = sorted({r["estimated_delivery"] for r in rates})
    # Half the time the day they need it by is too close for the cheapest service: the rule then picks an express one.
    tight = len(days) > 1 and s.rng.random() < 0.55
    needed = days[-2] if tight and days[-2] < cheapest["estimated_delivery"] else cheapest["estimated_delivery"]
    if not tight:
        needed = (date.fromisoformat(needed) + timedelta(days=s.rng.randint(0, 2))).isoformat()
    fits = [r for r in rates if r["estimated_delivery"] <= needed]
    if not fits:
        raise Skip("no service arrives in time")
    chosen = fits[0]
    if len([r for r in fits if abs(float(r["amount"]) - float(chosen["amount"])) < 0.01]) > 1:
        raise Skip("two services cost the same")
    order = shipment["order_number"]
    trigger = arrive(s, person, Ask(
        subject=f"Order {order}",
        text=s.rng.choice((
            f"Could you make sure order {order} reaches us by {_day_name(needed)}? We need it for an event.",
            f"We need order {order} on site by {_day_name(needed)} at the latest. Can you ship it so it arrives in time?",
        )),
        short=f"Please make sure order {order} arrives by {_day_name(needed)}.",
        topic="Orders and shipping",
        relay=f"{person.first_name} needs order {order} delivered by {_day_name(needed)}.",
    ))
    rule = consult(s, "Shipping rule",
                   "- Orders ship with the cheapest rate the carriers quote for the shipment.\n"
                   "- When a customer needs an order by a given day, buy the cheapest rate whose estimated delivery is on or "
                   "before that day, express or not.\n"
                   "- Validate the delivery address before buying a label. If it fails, buy nothing and ask the customer for "
                   "what is missing.",
                   author_role=rule_author(s, "operations manager"))
    found = lookup(s, shipment, {"order_number": order, "query": order, "status": "pending"},
                   say=f"find the shipment of order {order}")
    s.call("shipping", "validate_address", {"address": found.ref("ship_to_address")}, say="validate the delivery address",
           stage="decide")
    s.brief.intro = f"{trigger.intro} about when order {order} arrives"
    s.brief.constraints.append(rule.pointer)
    s.brief.anchors += [person.name]
    s.brief.goal = (f"Get order {order} shipped so it arrives in time, as our shipping rule says, and "
                    f"{reply_clause(trigger, 'the tracking number and when it should arrive')}")
    s.decide("premise", f"order {order} can ship to the address it has", default=not broken)
    if broken:
        problem = "; ".join(check.data.get("messages") or []) if check.success else ""
        s.literal_writes.append(s.spec("shipping", "create_label", {"shipment_id": shipment.key,
                                                                     "service_code": chosen["service_code"]}))
        reply(s, trigger, [f"Hi {person.first_name},\n\nBefore we can ship order {order}, we need your full delivery address: "
                           f"the one we have is missing something ({problem or 'it does not validate'}). Could you send it "
                           "over? We will ship it the same day."],
              say=reply_clause(trigger, "the tracking number and when it should arrive"),
              facts=[Said("that the address is missing something", Lit("not attached"), "premise")], subject=f"Order {order}")
        return
    s.call("shipping", "get_rates", {"shipment_id": found.ref("id")}, say="get the carriers' rates for it", stage="decide",
           select_by=("service_code", chosen["service_code"]))
    s.decide("rule", "the cheapest rate that arrives by the day they need it", default=chosen["service_code"] == cheapest["service_code"])
    s.decide("figure", "the cheapest of the rates that arrive in time")
    label = s.call("shipping", "create_label", {"shipment_id": found.ref("id"), "service_code": chosen["service_code"]},
                   say=f"buy the label the shipping rule calls for, given when {person.first_name} needs it")
    if chosen["service_code"] != cheapest["service_code"]:
        s.set_policy(rule.rec, "the cheapest rate that arrives in time", label, "service_code", chosen["service_code"],
                     cheapest["service_code"], f"The label is {chosen['service_name']}, the cheapest that arrives by "
                                               f"{short_date(needed)}")
    reply(s, trigger, [f"Hi {person.first_name},\n\nOrder {order} is on its way with {chosen['service_name']} and should "
                       f"arrive on {_day_name(chosen['estimated_delivery'])}. Tracking number: ", label.ref("tracking_number"), "."],
          say=reply_clause(trigger, "the tracking number and when it should arrive"),
          facts=[Said("the day it should arrive", Lit(chosen["estimated_delivery"]), "date")],
          mentions=[(label.ref("tracking_number"), "the tracking number")], subject=f"Order {order}")
