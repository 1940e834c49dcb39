"""bench/bench_heldout.py (issue 32's held-out check): the same seed draws the same services, never one an issue
or a commit named, and the rated files it prints its table from hold only services it may draw."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

from heldout import Call, eligible, excluded, replay, sample, shares  # noqa: E402

NAMED_BY_ISSUE_32 = ("mandrillapp", "postmarkapp_server", "postmarkapp_account", "apideck_crm", "apideck_accounting",
                     "jira", "atlassian_jira", "paylocity", "docusign", "ebay_sell_fulfillment", "googleapis_tasks",
                     "drchrono", "googleapis_drive", "googledrive", "googleapis_sheets", "googleapis_gmail", "trello",
                     "braze", "brex")


def test_the_same_seed_draws_the_same_services_and_another_seed_others() -> None:
    first = sample(1, 15)
    assert len(first) == 15 and first == sample(1, 15)
    assert sample(2, 15) != first
    avoided = sample(2, 15, avoid=tuple(first))
    assert not set(avoided) & set(first) and avoided == sample(2, 15, avoid=tuple(first))


def test_no_service_an_issue_or_a_commit_named_is_ever_drawn() -> None:
    pool = set(eligible())
    for name in NAMED_BY_ISSUE_32 + ("stripe", "slack", "gitlab", "squareup", "sendgrid", "asana", "box"):
        assert excluded(name) and name not in pool, name
    for seed in range(20):
        assert not any(excluded(n) for n in sample(seed, 15))


@pytest.mark.parametrize("path", sorted((REPO / "bench" / "heldout").glob("*.json")), ids=lambda p: p.name)
def test_each_ratings_file_rates_every_call_of_services_it_may_draw(path: Path) -> None:
    data = json.loads(path.read_text())
    names = [s["name"] for s in data["services"]]
    assert not any(excluded(n) for n in names)
    assert not set(names) & set(data.get("avoid", []))
    calls = [Call(**c) for s in data["services"] for c in s["calls"]]
    assert calls and all(c.rating in ("plausible", "weak", "nonsense") and c.reason for c in calls)
    assert abs(sum(shares(calls).values()) - 1) < 1e-9


def test_arguments_name_an_earlier_answer_as_a_user_copies_an_id() -> None:
    """``$0.id`` is the id call 0 returned: the webhook created is the one read back."""
    calls = [Call("post_webhooks", {"name": "Nightly", "url": "https://example.com/hook", "triggerScope": "SENT"}, "create"),
             Call("get_webhooks_id", {"id": "$0.id"}, "read it back")]
    made, read = replay("bulksms", calls)
    assert json.loads(made)["id"] == json.loads(read)["id"] and json.loads(read)["name"] == "Nightly"


def test_docs_print_the_shares_the_ratings_files_give() -> None:
    """docs/generator.md's held-out table is what ``bench_heldout.py --seed N`` prints from the rated files."""
    docs = (REPO / "docs" / "generator.md").read_text()
    rows = re.findall(r"^\| seed (\d+) [^|]*\| (\d+) \| ([\d.]+)% \| ([\d.]+)% \| ([\d.]+)% \|$", docs, re.M)
    assert rows
    for seed, count, *figures in rows:
        data = json.loads((REPO / "bench" / "heldout" / f"{seed}.json").read_text())
        calls = [Call(**c) for s in data["services"] for c in s["calls"]]
        assert len(calls) == int(count)
        assert [f"{v * 100:.1f}" for v in shares(calls).values()] == figures
