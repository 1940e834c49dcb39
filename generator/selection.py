"""Which services of the shared specs file become the library: business and consumer products people automate.

    python -m generator.selection ../shared/specs/tool_specs.jsonl.gz          # writes the two files below
    # generator/data/selection.txt          the chosen services, one a line (input of ``generator import --only``)
    # generator/data/selection_report.tsv   every service of the file: in or out, its class, and why

The categories of the specs file are too coarse to choose by (Box is filed under ``cloud``, HubSpot's
CRM APIs have none, sportsdata.io is ``entertainment``), so the choice is by product: ``PRODUCTS``
names the business and consumer products people automate (CRM, email, chat, tickets, payments,
accounting, commerce, HR, calendars, documents, project and marketing tools, and consumer apps), by
provider or by one API of a provider. A small, stated share (``REFERENCE_SHARE``) of reference-data APIs
that business workflows call (tax rates, postcodes, maps, weather) is kept; everything else is out with
its reason: cloud infrastructure, government and open data, niche data feeds, developer plumbing.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from generator.importers.text import iter_lines
from generator.planner import CORE_ONLY_OVER, MAX_TOOLS

Kind = Literal["business", "reference", "infrastructure", "other"]

#: provider (or ``provider:api``) -> the kind of product it is. An entry for a provider takes every API of
#: it; providers with many APIs list the ones people automate (Twilio's messaging and voice, not its billing).
PRODUCTS: dict[str, str] = {
    # CRM and sales
    "hubapi.com": "crm", "salesloft.com": "crm", "data2crm.com": "crm", "orbit.love": "crm", "journy.io": "crm",
    "apideck.com:crm": "crm", "apideck.com:lead": "crm", "drchrono.com": "crm (clinic)",
    # email and marketing
    "sendgrid.com": "email", "mandrillapp.com": "email", "postmarkapp.com": "email", "mailscript.com": "email",
    "inboxroute.com": "email", "googleapis.com:gmail": "email", "clicksend.com": "email and sms",
    "braze.com": "marketing", "bufferapp.com": "marketing", "clickmeter.com": "marketing", "vestorly.com": "marketing",
    "zoomconnect.com": "marketing", "googleapis.com:tagmanager": "marketing", "googleapis.com:adsense": "marketing",
    "googleapis.com:blogger": "marketing", "googleapis.com:searchconsole": "marketing",
    "googleapis.com:my-business": "marketing", "googleapis.com:mybusinessbusinessinformation": "marketing",
    "googleapis.com:mybusinessaccountmanagement": "marketing", "googleapis.com:mybusinessqanda": "marketing",
    "googleapis.com:mybusinessplaceactions": "marketing", "googleapis.com:mybusinessverifications": "marketing",
    # chat, SMS and voice
    "slack.com": "chat", "telegram.org": "chat", "whatsapp.local": "chat", "circuitsandbox.net": "chat",
    "discourse.local": "community", "mastodon.local": "social", "googleapis.com:chat": "chat",
    "twilio.com:api": "sms and voice", "twilio.com:twilio_conversations_v1": "chat", "twilio.com:twilio_chat_v2": "chat",
    "twilio.com:twilio_messaging_v1": "sms", "twilio.com:twilio_verify_v2": "sms", "twilio.com:twilio_fax_v1": "fax",
    "twilio.com:twilio_taskrouter_v1": "contact center", "twilio.com:twilio_flex_v1": "contact center",
    "twilio.com:twilio_video_v1": "meetings", "twilio.com:twilio_notify_v1": "notifications",
    "twilio.com:twilio_proxy_v1": "sms", "nexmo.com:conversation": "chat", "nexmo.com:verify": "sms",
    "nexmo.com:voice": "voice", "nexmo.com:account": "sms", "sakari.io": "sms", "thesmsworks.co.uk": "sms",
    "d7networks.com": "sms", "isendpro.com": "sms", "bulksms.com": "sms", "sms77.io": "sms", "winsms.co.za": "sms",
    "wavecell.com": "sms", "callfire.com": "sms and voice", "telnyx.com": "sms and voice", "callcontrol.com": "voice",
    "surevoip.co.uk": "voice", "idtbeyond.com": "mobile top-up", "reloadly.com": "mobile top-up",
    "signl4.com": "alerting", "apideck.com:sms": "sms",
    # tickets, support and incidents
    "atlassian.com:jira": "tickets", "jira.local": "tickets", "victorops.com": "incidents",
    "apideck.com:customer-support": "tickets", "twinehealth.com": "support",
    # payments and banking
    "stripe.com": "payments", "squareup.com": "payments", "adyen.com:CheckoutService": "payments",
    "adyen.com:PaymentService": "payments", "adyen.com:PayoutService": "payments",
    "adyen.com:RecurringService": "payments", "adyen.com:AccountService": "payments",
    "adyen.com:BalancePlatformService": "payments", "adyen.com:FundService": "payments",
    "beanstream.com": "payments", "rebilly.com": "billing", "qualpay.com": "payments",
    "velopayments.com": "payouts", "payments.service.gov.uk": "payments", "izettle.com": "point of sale",
    "obono.at": "point of sale", "apideck.com:pos": "point of sale", "brex.io": "company register (KYC)",
    "fire.com": "business banking", "plaid.com": "banking", "nordigen.com": "banking", "up.com.au": "banking",
    "yodlee.com": "banking", "openbanking.org.uk:account-info-openapi": "banking",
    "openbanking.org.uk:payment-initiation-openapi": "payments", "interactivebrokers.com": "brokerage",
    "youneedabudget.com": "personal finance", "pocketsmith.com": "personal finance",
    "frankiefinancial.io": "identity checks",
    # accounting, invoicing and tax
    "xero.com": "accounting", "bigredcloud.com": "accounting", "billingo.hu": "invoicing",
    "envoice.in": "invoicing", "storecove.com": "invoicing", "taxamo.com": "tax", "apideck.com:accounting": "accounting",
    # commerce and shipping
    "magento.com": "commerce", "jumpseller.com": "commerce", "billbee.io": "commerce", "api2cart.com": "commerce",
    "shop-pro.jp": "commerce", "beezup.com": "commerce", "reverb.com": "commerce", "zalando.com": "commerce",
    "cloud-elements.com": "commerce", "akeneo.com": "product catalog", "brandlovers.com": "commerce",
    "ebay.com:sell-account": "commerce", "ebay.com:sell-fulfillment": "commerce", "ebay.com:sell-marketing": "commerce",
    "ebay.com:sell-feed": "commerce", "ebay.com:sell-logistics": "shipping", "ebay.com:buy-browse": "commerce",
    "ebay.com:sell-metadata": "commerce", "ebay.com:commerce-taxonomy": "commerce",
    "walmart.com": "commerce", "googleapis.com:content": "commerce", "googleapis.com:shoppingcontent": "commerce",
    "shipengine.com": "shipping", "royalmail.com": "shipping", "fulfillment.com": "shipping",
    "just-eat.co.uk": "food delivery", "pims.io": "events", "ticketmaster.com": "events",
    "viator.com": "travel booking", "letmc.com": "property management",
    "hetras-certification.net": "hotel booking", "lufthansa.com": "travel", "transavia.com": "travel",
    # HR, payroll and learning
    "personio.de": "hr", "paylocity.com": "payroll", "payrun.io": "payroll", "apideck.com:hris": "hr",
    "apideck.com:ats": "recruiting", "learnifier.com": "learning", "iqualify.com": "learning",
    "clever.com": "education", "googleapis.com:classroom": "education", "composio:google_classroom": "education",
    "googleapis.com:admin": "workspace admin", "composio:google_admin": "workspace admin",
    "googleapis.com:groupssettings": "workspace admin",
    # calendars and meetings
    "googleapis.com:calendar": "calendar", "googleapis.com:tasks": "tasks", "googleapis.com:people": "contacts",
    "onsched.com": "scheduling", "citrixonline.com:gotomeeting": "meetings", "getgo.com": "meetings",
    # documents, files, e-signature and forms
    "box.com": "files", "dracoon.team": "files", "exavault.com": "files", "files.com": "files",
    "apideck.com:file-storage": "files", "googleapis.com:drive": "files", "composio:googledrive": "files",
    "googleapis.com:sheets": "documents", "googleapis.com:docs": "documents", "googleapis.com:slides": "documents",
    "googleapis.com:forms": "forms", "qualtrics.com": "surveys", "docusign.net": "e-signature",
    "formapi.io": "documents", "pdfgeneratorapi.com": "documents", "handwrytten.com": "mail",
    "notion.com": "documents", "etherpad.local": "documents", "noosh.com": "print procurement",
    # projects and development collaboration
    "asana.com": "projects", "trello.com": "projects", "avaza.com": "projects", "apacta.com": "projects",
    "clubhouseapi.com": "projects", "github.com": "code collaboration", "gitlab.com": "code collaboration",
    "bitbucket.org": "code collaboration", "visualstudio.com": "code collaboration",
    "stackexchange.com": "community",
    # consumer products
    "spotify.com": "music", "soundcloud.com": "music", "vimeo.com": "video", "googleapis.com:youtube": "video",
    "instagram.com": "social", "twitter.com:current": "social", "twitter.com:legacy": "social",
    "medium.com": "publishing", "dev.to": "publishing", "flickr.com": "photos", "lyft.com": "rides",
    "trashnothing.com": "community", "wedpax.com": "events", "bigoven.com": "recipes",
    "1password.local": "passwords", "netatmo.net": "smart home", "google.home": "smart home",
    "bandsintown.com": "events", "listennotes.com": "podcasts",
}
#: Reference-data APIs that business workflows call; kept up to ``REFERENCE_SHARE`` of the selection.
REFERENCE: dict[str, str] = {
    "vatapi.com": "VAT rates", "taxrates.io": "tax rates", "ideal-postcodes.co.uk": "postcodes",
    "here.com": "maps", "tomtom.com": "maps", "graphhopper.com": "routes", "weatherbit.io": "weather",
    "worldtimeapi.org": "time zones", "exchangerate-api.com": "exchange rates",
}
REFERENCE_SHARE = 0.05
INFRASTRUCTURE = frozenset({
    "azure.com", "amazonaws.com", "kubernetes.io", "linode.com", "digitalocean.com", "clever-cloud.com",
    "netboxdemo.com", "mist.com", "osisoft.com", "gambitcomm.local", "vultr.com", "hetzner.com", "hetzner.cloud",
    "scaleway.com", "upcloud.com", "exoscale.com", "rancher.local", "portainer.io", "docker.com", "vmware.com",
    "vmware.local", "windows.net", "netlify.com", "combell.com", "ote-godaddy.com",
})
OPEN_DATA = frozenset({"open_data"})
MIN_TOOLS = 3


@dataclass(frozen=True)
class Candidate:
    name: str
    tools: int
    categories: tuple[str, ...]


@dataclass(frozen=True)
class Decision:
    """Whether one service is in the library, what kind of product it is, and why."""

    candidate: Candidate
    chosen: bool
    kind: Kind
    reason: str

    def line(self) -> str:
        return "\t".join([self.candidate.name, "in" if self.chosen else "out", self.kind, str(self.candidate.tools),
                          self.reason])


def candidates(path: Path) -> Iterator[Candidate]:
    for line in iter_lines(path):
        head = json.loads(line) if line.strip() else None
        if not head:
            continue
        yield Candidate(head["service"], len(head.get("tools", [])), tuple(head.get("categories") or ()))


def product(name: str) -> str | None:
    """The kind of business or consumer product ``name`` (a specs-file service) is, or None."""
    provider = name.partition(":")[0]
    return PRODUCTS.get(name) or PRODUCTS.get(provider)


def classify(c: Candidate) -> Decision:
    """The decision for one service, before the reference-data share is applied."""
    provider = c.name.partition(":")[0]
    what = product(c.name)
    if what is not None:
        if c.tools < MIN_TOOLS:
            return Decision(c, False, "business", f"{what}; fewer than {MIN_TOOLS} tools")
        if c.tools > MAX_TOOLS:
            return Decision(c, False, "business", f"{what}; over {MAX_TOOLS} tools (a huge spec the planner refuses)")
        if c.tools > CORE_ONLY_OVER:
            return Decision(c, True, "business", f"{what}; {c.tools} tools: its core resources gated, the rest simulated")
        return Decision(c, True, "business", what)
    if provider in INFRASTRUCTURE or "cloud" in c.categories or "hosting" in c.categories:
        return Decision(c, False, "infrastructure", "cloud infrastructure, hosting or cluster management")
    if provider == "googleapis.com":
        return Decision(c, False, "infrastructure", "a Google Cloud or developer API, not a Workspace or commerce product")
    if provider in REFERENCE or c.name in REFERENCE:
        topic = REFERENCE.get(c.name) or REFERENCE[provider]
        if c.tools < 1:
            return Decision(c, False, "reference", f"reference data ({topic}); no tools")
        return Decision(c, True, "reference", f"reference data ({topic})")
    if set(c.categories) & OPEN_DATA or provider.endswith((".gov", ".gov.uk", ".gov.in", ".gov.au", ".ac.uk")):
        return Decision(c, False, "reference", "government or open data")
    if provider in PROVIDERS_WITH_PRODUCTS:
        return Decision(c, False, "other", "an API of a listed product that people seldom automate (billing, pricing, internals)")
    shown = ", ".join(c.categories) or "no category"
    return Decision(c, False, "other", f"not a business or consumer product people automate ({shown})")


PROVIDERS_WITH_PRODUCTS = frozenset(name.partition(":")[0] for name in PRODUCTS)


def decide(path: Path) -> list[Decision]:
    """Every service of the specs file with its decision; reference data capped at ``REFERENCE_SHARE``."""
    decisions = [classify(c) for c in candidates(path)]
    business = sum(1 for d in decisions if d.chosen and d.kind == "business")
    allowed = int(business * REFERENCE_SHARE / (1 - REFERENCE_SHARE))
    kept = 0
    out: list[Decision] = []
    for d in decisions:
        if d.chosen and d.kind == "reference":
            if kept >= allowed:
                d = Decision(d.candidate, False, d.kind, f"{d.reason}; over the {REFERENCE_SHARE:.0%} reference-data share")
            else:
                kept += 1
        out.append(d)
    return out


def select(path: Path) -> list[Candidate]:
    return [d.candidate for d in decide(path) if d.chosen]


def main(argv: list[str] | None = None) -> None:
    args = argv if argv is not None else sys.argv[1:]
    if not args:
        print("usage: python -m generator.selection SPECS_FILE [OUT_DIR]", file=sys.stderr)
        raise SystemExit(2)
    out = Path(args[1]) if len(args) > 1 else Path(__file__).resolve().parent / "data"
    decisions = decide(Path(args[0]))
    chosen = [d for d in decisions if d.chosen]
    business = sum(1 for d in chosen if d.kind == "business")
    header = (f"# {len(chosen)} services ({business} business or consumer products, {len(chosen) - business} reference "
              f"data), {sum(d.candidate.tools for d in chosen)} tools in their specs; see generator/selection.py")
    (out / "selection.txt").write_text("\n".join([header, *(d.candidate.name for d in chosen)]) + "\n")
    report = ["service\tdecision\tkind\ttools\treason", *(d.line() for d in sorted(decisions, key=lambda d: d.candidate.name))]
    (out / "selection_report.tsv").write_text("\n".join(report) + "\n")
    print(header)


if __name__ == "__main__":
    main()
