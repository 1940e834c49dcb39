"""Which services of the shared specs file become the library: business and consumer products people automate.

    python -m generator.selection ../shared/specs/tool_specs.jsonl.gz > generator/data/selection.txt

Rules (in order): leave out cloud-infrastructure management (AWS, Azure, Google Cloud infrastructure,
hosting and cluster APIs) and per-agency government certificate lookups; keep Google's Workspace,
commerce, marketing and consumer APIs; leave out tiny specs (fewer than 3 tools) and huge ones; then
take services from the categories of products people automate first (collaboration, messaging,
commerce, finance, CRM, marketing...), and fill up with the rest until the target is reached.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from generator.importers.text import iter_lines

GOOGLE_PRODUCTS = frozenset({
    "gmail", "calendar", "drive", "sheets", "docs", "slides", "tasks", "people", "youtube", "blogger", "books",
    "classroom", "forms", "chat", "admin", "vault", "licensing", "reseller", "my-business",
    "mybusinessaccountmanagement", "mybusinessbusinessinformation", "mybusinessqanda", "mybusinessverifications",
    "mybusinessplaceactions", "mybusinesslodging", "content", "shoppingcontent", "androidpublisher", "tagmanager",
    "analytics", "analyticsadmin", "adsense", "adsensehost", "admob", "fitness", "groupssettings", "searchconsole",
    "webmasters", "youtubeAnalytics", "youtubereporting", "driveactivity", "games", "gamesConfiguration",
    "gamesManagement", "jobs", "civicinfo", "area120tables", "script", "siteVerification", "dfareporting",
    "displayvideo", "doubleclicksearch", "androidenterprise", "alertcenter", "contactcenterinsights",
    "streetviewpublish", "paymentsresellersubscription", "localservices", "retail",
})
INFRASTRUCTURE = frozenset({
    "azure.com", "amazonaws.com", "kubernetes.io", "linode.com", "digitalocean.com", "clever-cloud.com",
    "netboxdemo.com", "mist.com", "osisoft.com", "gambitcomm.local", "vultr.com", "hetzner.com", "scaleway.com",
    "upcloud.com", "exoscale.com", "rancher.local", "portainer.io", "docker.com", "vmware.com",
})
INFRA_CATEGORIES = frozenset({"cloud", "hosting"})
PREFERRED = (
    "collaboration", "messaging", "email", "customer_relation", "ecommerce", "payment", "financial", "marketing",
    "support", "project_management", "time_management", "forms", "document & file management", "storage",
    "social", "education", "transport", "telecom", "developer tools & devops", "media", "entertainment",
    "location", "enterprise", "analytics", "developer_tools", "text", "search", "tools",
)
SKIPPED_COMPOSIO = frozenset({"composio:github"})  # the REST GitHub spec is in; one GitHub is enough
#: Well-known products kept although their specs are large (the limit for others is ``MAX_TOOLS``).
ICONIC = frozenset({"github.com:api.github.com", "trello.com", "sendgrid.com", "docusign.net", "stripe.com",
                    "atlassian.com:jira", "gitlab.com", "magento.com", "vimeo.com", "bitbucket.org", "slack.com",
                    "asana.com", "box.com", "squareup.com", "xero.com:xero_accounting", "twilio.com:api"})
MIN_TOOLS = 3
MAX_TOOLS = 80
TARGET_SERVICES = 500
TARGET_TOOLS = 12_000


@dataclass(frozen=True)
class Candidate:
    name: str
    tools: int
    categories: tuple[str, ...]


def candidates(path: Path) -> Iterator[Candidate]:
    for line in iter_lines(path):
        head = json.loads(line) if line.strip() else None
        if not head:
            continue
        yield Candidate(head["service"], len(head.get("tools", [])), tuple(head.get("categories") or ()))


def eligible(c: Candidate) -> bool:
    provider, _, api = c.name.partition(":")
    if provider in INFRASTRUCTURE or provider == "apisetu.gov.in" or c.name in SKIPPED_COMPOSIO:
        return False
    if provider == "googleapis.com":
        return api in GOOGLE_PRODUCTS
    if set(c.categories) & INFRA_CATEGORIES:
        return False
    return MIN_TOOLS <= c.tools <= MAX_TOOLS or c.name in ICONIC


def rank(c: Candidate) -> tuple[int, str]:
    positions = [PREFERRED.index(cat) for cat in c.categories if cat in PREFERRED]
    return (min(positions) if positions else len(PREFERRED), c.name)


def select(path: Path, services: int = TARGET_SERVICES, tools: int = TARGET_TOOLS) -> list[Candidate]:
    pool = sorted((c for c in candidates(path) if eligible(c)), key=rank)
    chosen: list[Candidate] = []
    total = 0
    for c in pool:
        if len(chosen) >= services and total >= tools:
            break
        chosen.append(c)
        total += c.tools
    return chosen


def main(argv: list[str] | None = None) -> None:
    args = argv if argv is not None else sys.argv[1:]
    if not args:
        print("usage: python -m generator.selection SPECS_FILE", file=sys.stderr)
        raise SystemExit(2)
    chosen = select(Path(args[0]))
    print(f"# {len(chosen)} services, {sum(c.tools for c in chosen)} tools in their specs; see generator/selection.py")
    for c in chosen:
        print(c.name)


if __name__ == "__main__":
    main()
