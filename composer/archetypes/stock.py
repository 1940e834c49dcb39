"""Stock counts: what the shelf holds, put right in the store.

A colleague counts a product on the shelf and the store's figure is off. The store's stock is corrected by the
difference between the count and what the store has on hand (not what it shows as available: units already sold but
not shipped are still on the shelf), on the variant counted (the grey chairs, not the black ones beside them).
"""

from __future__ import annotations

from collections import Counter

from composer.archetypes.common import teammate
from composer.plan import Lit
from composer.scenario import Said, Scenario, archetype, detail
from composer.stages.channels import COLLEAGUE, Ask, arrive, can_arrive, reply, reply_clause
from composer.stages.lookup import lookup, shows


@archetype(
    "stock-count-correction",
    family="operations",
    title="A colleague counted a product on the shelf: correct the store's stock of that variant by the difference",
    services=("commerce",),
    fits=can_arrive((*COLLEAGUE, "sms")),
)
def stock_count_correction(s: Scenario) -> None:
    variants = [v for v in s.records("commerce", "variant") if v["inventory_tracked"] and v["on_hand"] >= 3]
    siblings = Counter(v["product_id"] for v in variants)
    # A product of several variants: the one counted is told apart by its title (a colour, a size).
    options = [v for v in variants if siblings[v["product_id"]] >= 2]
    variant = s.pick(options, "no stocked product with several variants")
    on_hand = int(variant["on_hand"])
    delta = s.rng.choice((-3, -2, -1, 1, 2, 4))
    counted = on_hand + delta
    if counted < 0:
        delta, counted = 1, on_hand + 1
    product, title = variant["product_title"], variant["title"]
    sender = teammate(s)
    trigger = arrive(s, sender, Ask(
        subject=f"Stock count: {product}",
        text=s.rng.choice((
            f"Just did the shelf count: we have {counted} of the {product} in {title} ({variant['sku']}). The store's number "
            "looks off - can you put it right?",
            f"Counted the {title.lower()} {product.lower()} ({variant['sku']}) in the stock room this morning: {counted} on the "
            "shelf. Could you fix the stock in the store to match?",
        )),
        team="general",
        short=f"Shelf count: {counted} of the {title} {product} ({variant['sku']}). Store's number is off, can you fix it?",
    ), channels=(*COLLEAGUE, "sms"))
    found = lookup(s, variant, {"sku": variant["sku"], "query": product, "product_id": variant["product_id"]},
                   say=f"find the {title} {product} in the store")
    twin = next((v for v in options if v["product_id"] == variant["product_id"] and v.key != variant.key and shows(s, found, v)),
                None)
    if twin is not None:
        s.trap("other-variant", twin, f"the {twin['title']} {product}", step=found)
    s.decide("figure", "the correction: the count less what the store has on hand")
    s.call("commerce", "adjust_inventory", {"variant_id": found.ref("id"), "delta": delta,
                                            "reason": detail("correction")},
           say=f"correct the store's stock of it to the {counted} counted")
    reply(s, trigger, [f"Done: the store had {on_hand} {title} {product} on hand; I've adjusted it by {delta:+d} to the "
                       f"{counted} you counted."],
          say=reply_clause(trigger, "what the store had and what it has now"),
          facts=[Said("what the store had", Lit(on_hand), "number")], subject=f"Stock count: {product}")
    s.brief.intro = f"{trigger.intro} about a shelf count of the {title} {product}"
    s.brief.goal = (f"Put the store's stock of what {sender.first_name} counted right and "
                    f"{reply_clause(trigger, 'what the store had before')}")
    s.brief.anchors += [sender.name]
