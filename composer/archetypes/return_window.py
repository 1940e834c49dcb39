"""A customer asks to send something back: a return opened only where the store policy's window allows it.

The store policy counts the return window from the day the item shipped. Where the customer asks inside it, a return
is opened for the units and reason they give; where the window has closed (often by a day or two), nothing is opened
and they hear when it closed.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from composer.archetypes.common import short_date
from composer.plan import ListOf, Lit
from composer.scenario import Said, Scenario, Skip, archetype
from composer.stages.channels import Ask, arrive, can_arrive, reply, reply_clause
from composer.stages.lookup import lookup

#: What the customer says, by the reason the store records.
_REASONS = {
    "unwanted": "we ordered more than we need and they are still sealed",
    "defective": "they arrived broken",
    "not_as_described": "they are not what the product page described",
}


@archetype(
    "return-window-check",
    family="support",
    title="A customer asks to return items: open the return if the store policy's window from shipping allows it",
    services=("commerce",),
    fits=can_arrive(),
)
def return_window_check(s: Scenario) -> None:
    policy = s.runner.call("commerce", "get_store_policy", {}).data
    window = int(policy["return_window_days"])
    people = {p.email: p for p in s.world.customers}
    now = datetime.strptime(s.world.now[:19], "%Y-%m-%dT%H:%M:%S")
    final = set(policy["final_sale_product_types"])
    types = {p.key: p["product_type"] for p in s.records("commerce", "product")}
    kinds = {v["sku"]: types.get(v["product_id"]) for v in s.records("commerce", "variant")}
    options = []
    for f in s.records("commerce", "fulfillment", where={"status": "success"}):
        order = s.record("commerce", "order", f["order_id"])
        if order["email"] not in people or order["status"] != "open":
            continue
        days = (now - datetime.strptime(str(f["created_at"])[:19], "%Y-%m-%dT%H:%M:%S")).total_seconds() / 86400
        if abs(days - window) <= 3:  # near the window's end, on either side
            lines = {li["id"]: li for li in order["line_items"]}
            for item in f["items"]:
                line = lines.get(item["line_item_id"])
                if line is not None and not line["returned_quantity"] and kinds.get(line["sku"]) not in final:
                    options.append((order, f, item, days))
    order, fulfillment, shipped, days = s.pick(options, "no order shipped near the end of the return window")
    line = next(li for li in order["line_items"] if li["id"] == shipped["line_item_id"])
    person = people[order["email"]]
    s.subject = person
    inside = days <= window
    reason = s.rng.choice(sorted(_REASONS))
    quantity = s.rng.randint(1, int(shipped["quantity"]))
    what = f"{quantity} of the {line['title']}" + (f" ({line['variant_title']})" if line["variant_title"] != "Default Title" else "")
    trigger = arrive(s, person, Ask(
        subject=f"Return from order {order['name']}",
        text=f"We'd like to send back {what} from order {order['name']}: {_REASONS[reason]}. Can you set up a return?",
        short=f"Can we return {what} from order {order['name']}? {_REASONS[reason].capitalize()}.",
        topic="Orders and shipping",
        relay=f"{person.first_name} wants to return {what} from order {order['name']} ({_REASONS[reason]}).",
    ))
    s.call("commerce", "get_store_policy", {}, say="check the store's return policy", stage="consult")
    found = lookup(s, order, {"name": order["name"], "query": order["name"], "email": person.email},
                   say=f"find order {order['name']}")
    lookup(s, fulfillment, {"order_id": found.ref("id")}, say="see when it shipped", stage="decide")
    closes = (datetime.strptime(str(fulfillment["created_at"])[:19], "%Y-%m-%dT%H:%M:%S") + timedelta(days=window))
    s.decide("rule", f"returns within {window} days of shipping", default=inside, value=days, threshold=float(window))
    s.brief.intro = f"{trigger.intro} to return items from order {order['name']}"
    s.brief.goal = (f"Set up the return {person.first_name} asks for if our store policy allows it and "
                    f"{reply_clause(trigger, 'where it stands')}")
    s.brief.anchors += [person.name]
    item = {"line_item_id": line["id"], "sku": line["sku"], "quantity": quantity, "reason": reason}
    if not inside:
        s.literal_writes.append(s.spec("commerce", "create_return", {"order_id": order.key, "items": [item]}))
        reply(s, trigger, [f"Hi {person.first_name},\n\nI'm sorry: those items shipped on {short_date(fulfillment['created_at'])} "
                           f"and our {window}-day return window closed on {short_date(closes.strftime('%Y-%m-%d'))}, so we "
                           "can't take them back."],
              say=reply_clause(trigger, "where it stands"),
              facts=[Said("the day the window closed", Lit(closes.strftime("%Y-%m-%d")), "date")],
              subject=f"Order {order['name']}")
        return
    opened = s.call("commerce", "create_return", {"order_id": found.ref("id"), "items": ListOf((Lit(item),))},
                    say=f"open a return for what {person.first_name} is sending back")
    reply(s, trigger, [f"Hi {person.first_name},\n\nDone: your return for {what} is open (", opened.ref("id"),
                       "). You'll get the label shortly."],
          say=reply_clause(trigger, "where it stands"), mentions=[(opened.ref("id"), "the return")],
          facts=[Said("what is coming back", Lit(line["title"]))], subject=f"Order {order['name']}")
