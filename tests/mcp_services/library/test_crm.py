"""What a salesperson sees in the seeded CRM: deals worth pursuing, lost for reasons of their own, news of today."""

from __future__ import annotations

from mcp_services.kernel import Episode
from mcp_services.library.crm import MIN_DEAL


def deals(seed: int) -> list[dict[str, object]]:
    with Episode.create(["crm"], seed) as ep:
        return list(ep.dump()["crm"]["deals"].values())


def test_deals_sell_what_sales_sells_and_are_worth_a_pipeline() -> None:
    with Episode.create(["crm"], 0) as ep:
        products = {p.name: p for p in ep.world.products}
        found = list(ep.dump()["crm"]["deals"].values())
    sold = [(products[str(d["name"]).split(" for ")[0]], d) for d in found if " for " in str(d["name"])]
    assert len(sold) >= 30
    assert not [d["name"] for p, d in sold if p.category in ("pantry", "supplies", "merchandise")]  # no espresso deal
    assert min(float(d["amount"]) for _, d in sold) >= MIN_DEAL  # type: ignore[arg-type]


def test_lost_deals_give_varied_reasons_and_closed_deals_were_last_changed_when_they_closed() -> None:
    found = [d for seed in (0, 1, 2) for d in deals(seed)]
    reasons = {d["lost_reason"] for d in found if d["stage"] == "lost"}
    assert len(reasons) >= 5, reasons  # not "Chose a competitor" on every lost deal
    assert all(str(d["updated_at"])[:10] >= str(d["close_date"]) for d in found if d["stage"] in ("won", "lost"))


def test_one_deal_was_won_this_morning_and_it_is_the_only_deal_won_today() -> None:
    with Episode.create(["crm"], 3) as ep:
        today, now = ep.world.now[:10], ep.world.now
        won_today = [d for d in ep.dump()["crm"]["deals"].values() if d["stage"] == "won" and d["close_date"] == today]
    (deal,) = won_today
    assert str(deal["updated_at"])[:10] == today and str(deal["updated_at"]) < now


def test_closing_a_deal_dates_it_today_so_a_won_deal_never_closes_in_the_future() -> None:
    with Episode.create(["crm"], 0) as ep:
        ahead = next(d for d in ep.dump()["crm"]["deals"].values()
                     if d["stage"] in ("proposal", "negotiation") and str(d["close_date"]) > ep.world.now[:10])
        result = ep.call("crm", "update_deal_stage", {"deal_id": ahead["id"], "stage": "won"})
        assert result.success, result.envelope()
        assert result.data["close_date"] == ep.world.now[:10] and result.data["stage"] == "won"
