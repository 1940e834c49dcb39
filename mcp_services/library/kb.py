"""KB: the customer help center, articles in sections and categories (modelled on Zendesk Guide / Intercom Articles).

Articles follow Zendesk Guide's life cycle: a new article is a draft; publishing makes it visible to
customers at its link; a published article can be unpublished back to a draft; archiving takes it out
of the help center (archived articles cannot be edited until restored, as drafts). Titles are unique
among the live (draft or published) articles of a section. Readers leave feedback on articles (was it
helpful, and why), which the team marks as addressed once the article is fixed.

The seeded help center answers the questions the helpdesk's tickets ask (exports, login loops, single
sign-on, API limits, invoices and VAT, refunds, adding admins, plan changes, deliveries), with a few
drafts being written and older articles archived.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, derived, field, joined
from mcp_services.kernel.entity import json_text
from mcp_services.kernel.plans.policies import REFUNDS
from mcp_services.kernel.records import RecordAccess, like_pattern
from mcp_services.kernel.schema import StateDef
from mcp_services.kernel.prose import industry_facts, write
from mcp_services.kernel.semantic import URL, DateTime, EmailAddress, EntityId, ShortText, Subject, Tag, Text

CategoryId = EntityId("kb.category")
SectionId = EntityId("kb.section")
ArticleId = EntityId("kb.article")
FeedbackId = EntityId("kb.feedback")

ArticleStatus = Literal["draft", "published", "archived"]
SortBy = Literal["position", "title", "updated_at", "helpful_votes"]

ARTICLE_STATUS = StateDef(
    field="status",
    values=["draft", "published", "archived"],
    initial="draft",
    transitions={"draft": ["published", "archived"], "published": ["draft", "archived"], "archived": ["draft"]},
)

service = Service(
    "kb",
    "The customer help center: categories, sections and articles (drafts, published, archived), their links, "
    "and readers' feedback on them.",
    title="Help center",
)


@service.entity(table="categories", prefix="kc", label="name", search=("name", "description"))
class Category:
    """A top-level group of the help center."""

    id: CategoryId
    name: str = field(unique=True)
    description: Text
    position: int


def _article_counts(db: RecordAccess, sections: Sequence[Section]) -> list[int]:
    counts = dict(db.sql("SELECT section_id, COUNT(*) FROM articles WHERE status = 'published' GROUP BY 1"))
    return [int(counts.get(s.id, 0)) for s in sections]


@service.entity(table="sections", prefix="ks", label="name", search=("name", "description"))
class Section:
    """A section of a category, holding articles on one topic."""

    id: SectionId
    category_id: CategoryId = field(index=True)
    name: str
    description: Text
    position: int

    category_name = joined(str, via="category_id", field="name")
    published_articles = derived(int, batch=_article_counts, description="Published articles in the section")


@service.entity(table="articles", prefix="art", label="title", search=("title", "body"), state=ARTICLE_STATUS)
class Article:
    """A help center article."""

    id: ArticleId
    section_id: SectionId = field(index=True)
    title: Subject = field(index=True)
    body: Text
    label_names: list[Tag]
    status: ArticleStatus = field(index=True)
    promoted: bool = False
    position: int = 0
    author_email: EmailAddress = field(role="author")
    html_url: URL = field(mention="the article link")
    helpful_votes: int = 0
    unhelpful_votes: int = 0
    created_at: DateTime
    updated_at: DateTime
    published_at: DateTime | None = None

    section_name = joined(str, via="section_id", field="name")


@service.entity(table="feedback", prefix="fb", search=("comment",))
class Feedback:
    """A reader's feedback on an article: whether it helped, and what they said."""

    id: FeedbackId
    article_id: ArticleId = field(index=True)
    reader_email: EmailAddress = field(role="reader")
    helpful: bool
    comment: Text | None = None
    addressed: bool = False
    addressed_note: Text | None = None
    created_at: DateTime

    article_title = joined(str, via="article_id", field="title")


# -- rules shared by the tools -------------------------------------------------------------------

_ARTICLE_HINT = "Use search_articles or list_articles to find article ids."
_SLUG = re.compile(r"[^a-z0-9]+")


def _url(ctx: ToolContext, article_id: str, title: str) -> str:
    number = int(article_id.rsplit("_", 1)[-1])
    slug = _SLUG.sub("-", title.lower()).strip("-")[:60]
    return f"https://help.{ctx.world.home.domain}/hc/en-us/articles/{360000 + number}-{slug}"


def _article(ctx: ToolContext, article_id: str) -> Article:
    return ctx.get(Article, article_id, hint=_ARTICLE_HINT)


def _editable(ctx: ToolContext, article_id: str) -> Article:
    article = _article(ctx, article_id)
    if article.status == "archived":
        raise ToolError.invalid_state(
            f"Article {article_id} is archived; restore_article it (as a draft) to change it."
        )
    return article


def _section(ctx: ToolContext, section_id: str) -> Section:
    return ctx.get(Section, section_id, hint="Use list_sections to find section ids.")


def _title(ctx: ToolContext, section: Section, title: str, exclude: str | None = None) -> str:
    clean = " ".join(title.split())
    if not clean:
        raise ToolError.invalid_argument("title must not be empty.")
    clash = (
        ctx.query(Article)
        .where(section_id=section.id)
        .where_in("status", ("draft", "published"))
        .where_sql("lower(title) = lower(?)", clean)
        .first()
    )
    if clash is not None and clash.id != exclude:
        raise ToolError.conflict(
            f"Section {section.name!r} already has a {clash.status} article titled {clash.title!r} ({clash.id}); "
            "update that one or pick another title."
        )
    return clean


def _labels(labels: Sequence[str]) -> list[str]:
    clean: list[str] = []
    for label in labels:
        tag = "-".join(label.strip().lower().split())
        if not tag:
            raise ToolError.invalid_argument("A label must not be blank.")
        if tag not in clean:
            clean.append(tag)
    if len(clean) > 20:
        raise ToolError.invalid_argument("An article takes at most 20 labels.")
    return clean


def _body(text: str) -> str:
    if not text.strip():
        raise ToolError.invalid_argument("body must not be empty.")
    return text.strip()


# -- seed ----------------------------------------------------------------------------------------

#: (category, [(section, what it covers)])
_TREE: tuple[tuple[str, str, tuple[tuple[str, str], ...]], ...] = (
    (
        "Getting started",
        "Set up your account and your team.",
        (
            ("Account setup", "Signing in, passwords and single sign-on."),
            ("Users and permissions", "Adding people, admins and seats."),
        ),
    ),
    (
        "Billing and plans",
        "Invoices, payments, refunds and plan changes.",
        (
            ("Invoices and payments", "Invoice copies, tax, failed payments and payment links."),
            ("Plans and subscriptions", "Upgrading, downgrading and cancelling."),
        ),
    ),
    (
        "Using the product",
        "Reports, exports and dashboards.",
        (("Reports and exports", "Exporting data and reading dashboards."),),
    ),
    (
        "Integrations and API",
        "Connect other tools and build on our API.",
        (
            ("API", "Keys, limits and errors."),
            ("Webhooks", "Receiving events in your own systems."),
        ),
    ),
    ("Orders and shipping", "Hardware and furniture orders.", (("Deliveries", "Tracking, delays and damaged items."),)),
)

#: (section, title, labels, status, body)
_ARTICLES: tuple[tuple[str, str, tuple[str, ...], ArticleStatus, str], ...] = (
    (
        "Account setup",
        "How to reset your password",
        ("password", "login"),
        "published",
        (
            "1. On the sign-in page, click **Forgot password**.\n2. Enter your work email; we send a reset link that "
            "works "
            "for 30 minutes.\n3. Choose a new password of at least 12 characters.\n\nIf the sign-in page keeps "
            "reloading "
            'after a reset, see "Fixing a login loop after a password reset".'
        ),
    ),
    (
        "Account setup",
        "Fixing a login loop after a password reset",
        ("login", "password", "troubleshooting"),
        "published",
        (
            "If you are sent back to the sign-in page after resetting your password:\n\n1. Sign out on every tab and "
            "clear "
            "this site's cookies.\n2. Sign in again in a private window.\n3. If your company uses single sign-on, sign "
            "in "
            "with the **Continue with SSO** button, not with a password.\n\nStill stuck? Reply to your ticket with the "
            "time "
            "you tried and your browser."
        ),
    ),
    (
        "Account setup",
        "How to set up single sign-on (SSO)",
        ("sso", "login", "security"),
        "published",
        (
            "Single sign-on is included in the Pro and Enterprise plans.\n\n"
            "1. Go to **Settings > Security > Single sign-on**.\n"
            "2. Choose your identity provider (Okta, Azure AD, Google Workspace or any SAML 2.0 provider).\n3. Paste "
            "your "
            "provider's metadata URL and save.\n4. Test with one user before turning on **Require SSO** for everyone."
        ),
    ),
    (
        "Account setup",
        "Setting up SSO (old admin console)",
        ("sso",),
        "archived",
        'This article describes the admin console we retired last year. Use "How to set up single sign-on (SSO)".',
    ),
    (
        "Users and permissions",
        "How to add users to your account",
        ("users", "seats"),
        "published",
        (
            "1. Go to **Settings > Users** and click **Invite users**.\n2. Enter their work emails, one per line.\n3. "
            "Pick a "
            'role: member or admin.\n\nEach invited user takes a seat. If you see "seat limit reached" while seats are '
            "free, remove pending invitations older than 30 days: they still hold a seat."
        ),
    ),
    (
        "Users and permissions",
        "How to make someone an admin",
        ("users", "admins", "permissions"),
        "published",
        (
            "Only the account owner or an existing admin can do this.\n\n1. Go to **Settings > Users**.\n2. Open the "
            "person's profile and set **Role** to **Admin**.\n3. Save. They get an email and can manage users and "
            "billing "
            "right away."
        ),
    ),
    (
        "Users and permissions",
        "Admin roles explained",
        ("admins", "permissions"),
        "draft",
        "Draft: what admins, billing admins and members can each do. To be reviewed before publishing.",
    ),
    (
        "Invoices and payments",
        "How to download a copy of an invoice",
        ("invoices", "billing"),
        "published",
        (
            "1. Go to **Settings > Billing > Invoices**.\n2. Find the invoice by its number or date.\n3. Click "
            "**Download PDF**."
            "\n\nYour accounts team can also ask us to email a copy to any address."
        ),
    ),
    (
        "Invoices and payments",
        "Invoices for tax-exempt organisations",
        ("invoices", "tax", "vat"),
        "published",
        (
            "If your organisation is exempt from VAT or sales tax, send us your exemption certificate. Once it is on "
            "file we "
            "reissue open invoices without tax and future invoices follow automatically."
        ),
    ),
    (
        "Invoices and payments",
        "What to do when a payment fails",
        ("payments", "billing"),
        "published",
        (
            "If your card payment is declined we email you and retry after 3 days. To pay now, ask us for a payment "
            "link and "
            "pay by card, or update your card under **Settings > Billing > Payment method**."
        ),
    ),
    (
        "Invoices and payments",
        "How refunds work",
        ("refunds", "billing"),
        "published",
        (
            f"You can ask for a refund of a charge within {REFUNDS.window_days} days of it. Duplicate charges are "
            "always "
            "refunded in full. Refunds go back to the card or account you paid with and take 5-10 business days to "
            "show on "
            "your statement. Larger refunds are reviewed by our finance team first, which can add a day or two."
        ),
    ),
    (
        "Plans and subscriptions",
        "How to upgrade your plan",
        ("plans", "upgrade"),
        "published",
        (
            "1. Go to **Settings > Billing > Plan** and click **Change plan**.\n2. Pick the new plan and "
            "confirm.\n\nUpgrades "
            "start at once; you pay the prorated difference for the rest of the billing period on your next invoice."
        ),
    ),
    (
        "Plans and subscriptions",
        "How to cancel your subscription",
        ("plans", "cancellation"),
        "published",
        (
            "Cancelling stops your subscription at the end of the current billing period; you keep access until then "
            "and "
            "are not charged again. Account owners can cancel under **Settings > Billing > Plan > Cancel "
            "subscription**, or "
            "ask us to do it for them."
        ),
    ),
    (
        "Reports and exports",
        "How to export a report to CSV",
        ("exports", "csv", "reports"),
        "published",
        (
            "1. Open the report and set its date range.\n2. Click **Export > CSV**.\n3. The file downloads when it is "
            "ready; "
            "large exports arrive by email within 10 minutes.\n\nIf the export fails with error 500 or the file is "
            "empty, "
            "shorten the date range to one month and try again, then tell us the report's name."
        ),
    ),
    (
        "Reports and exports",
        "Exporting reports (legacy dashboard)",
        ("exports", "csv"),
        "archived",
        'The legacy dashboard was retired. See "How to export a report to CSV".',
    ),
    (
        "Reports and exports",
        "Exporting large reports",
        ("exports", "csv", "reports"),
        "draft",
        "Draft: scheduled exports and exports over 100,000 rows. Waiting for engineering to confirm the limits.",
    ),
    (
        "Reports and exports",
        "Why dashboard totals differ from your records",
        ("reports", "dashboards"),
        "published",
        (
            "Dashboards count orders on the day they were paid, in UTC. Totals can differ from your books when orders "
            "are "
            "refunded later or paid near midnight in your time zone. Open the total to see the orders it counts."
        ),
    ),
    (
        "API",
        "API rate limits",
        ("api", "rate-limits", "429"),
        "published",
        (
            "Each API key may make 600 requests a minute. Above that the API answers HTTP 429 with a Retry-After "
            "header. "
            "Usage blocks you buy raise your monthly quota, not the per-minute limit. Spread requests out and retry "
            "after the "
            "time the header gives."
        ),
    ),
    (
        "API",
        "How to create an API key",
        ("api", "keys"),
        "published",
        (
            "1. Go to **Settings > API**.\n2. Click **New key**, name it after the integration that will use it.\n3. "
            "Copy the "
            "key now: it is shown only once. Revoke keys you no longer use."
        ),
    ),
    (
        "Webhooks",
        "How to set up webhooks",
        ("webhooks", "integrations"),
        "published",
        (
            "1. Go to **Settings > Webhooks** and click **Add endpoint**.\n2. Enter your HTTPS URL and pick the "
            "events.\n3. We "
            "send a test event; your endpoint must answer 200 within 10 seconds.\n\nDeliveries that time out are "
            "retried for "
            "24 hours; the delivery log shows every attempt."
        ),
    ),
    (
        "Webhooks",
        "Troubleshooting failed webhook deliveries",
        ("webhooks", "troubleshooting"),
        "published",
        (
            "If deliveries show timeouts, check that your endpoint answers within 10 seconds and does the work "
            "afterwards. "
            "After 24 hours of failures an endpoint is paused: fix it, then click **Resume** in the delivery log."
        ),
    ),
    (
        "Deliveries",
        "How to track your order",
        ("orders", "shipping", "tracking"),
        "published",
        (
            "Your shipping confirmation email has a tracking link for each parcel. Deliveries usually take 3-5 working "
            "days. "
            "If the tracking has not moved for 3 working days, contact us with your order number."
        ),
    ),
    (
        "Deliveries",
        "What to do if an item arrives damaged",
        ("orders", "damaged", "returns"),
        "published",
        (
            "Take a photo of the item and the box, and contact us within 7 days of delivery with your order number. We "
            "send "
            "a replacement or refund the item; you do not need to send it back unless we ask."
        ),
    ),
)

#: Readers' feedback on articles: (article, helpful, what they wrote, or None).
_FEEDBACK = (
    (
        "How to export a report to CSV",
        False,
        "[The export button is not where the article says|I can't find the export button the article shows|The "
        "screenshots are out of date] on the new reports page.[ We export every week for {work}.| Please update it.|]",
    ),
    ("API rate limits", True, None),
    ("How to add users to your account", False, "[Didn't mention|It doesn't say|Missing:] pending invitations "
     "[holding seats|using up seats|count as seats] until [the end|they expire|someone accepts them].[ Cost us a "
     "seat at {site}.|]"),
    ("How refunds work", True, "[Clear, thanks.|Very clear, thank you.|Helpful, thanks!|Exactly what I needed.|"
     "Answered my question.]"),
)


@service.seeder
def seed(ctx: ToolContext) -> None:
    """The help center's categories and sections, its articles (published, drafts and archived) and some feedback."""
    world = ctx.world
    rng = ctx.rng("seed")
    writers = [
        world.team_member("support lead"),
        world.team_member("support agent"),
        world.team_member("product manager"),
    ]
    sections: dict[str, Section] = {}
    categories = []
    for n, (name, about, children) in enumerate(_TREE):
        category = Category(id=ctx.new_id("kc"), name=name, description=about, position=n)
        categories.append(category)
        for m, (section, covers) in enumerate(children):
            sections[section] = Section(
                id=ctx.new_id("ks"), category_id=category.id, name=section, description=covers, position=m
            )
    ctx.insert_many(categories)
    ctx.insert_many(list(sections.values()))
    articles = []
    for n, (section, title, labels, status, body) in enumerate(_ARTICLES):
        article_id = ctx.new_id("art")
        created = ctx.days_from_now(-rng.randint(120, 700))
        updated = ctx.days_from_now(-rng.randint(2, 100))
        votes = rng.randint(3, 60) if status != "draft" else 0
        articles.append(
            Article(
                id=article_id,
                section_id=sections[section].id,
                title=title,
                body=body,
                label_names=list(labels),
                status=status,
                promoted=n in (0, 13),
                position=n,
                author_email=rng.choice(writers).email,
                html_url=_url(ctx, article_id, title),
                helpful_votes=votes,
                unhelpful_votes=rng.randint(0, votes // 5 + 1),
                created_at=created,
                updated_at=updated,
                published_at=created if status != "draft" else None,
            )
        )
    ctx.insert_many(articles)
    by_title = {a.title: a for a in articles}
    readers = list(world.customers)
    words = ctx.rng("words")
    ctx.insert_many(
        [
            Feedback(
                id=ctx.new_id("fb"),
                article_id=by_title[title].id,
                reader_email=reader.email,
                helpful=helpful,
                comment=write(words, comment, industry_facts(words, world.organisation(reader.organisation_id).industry))
                if comment else None,
                created_at=ctx.days_from_now(-rng.randint(1, 30)),
            )
            for title, helpful, comment, reader in ((*f, rng.choice(readers)) for f in _FEEDBACK)
        ]
    )


# -- categories and sections ---------------------------------------------------------------------


@service.tool(
    "read", intent="find", phrases=("check the help center's categories", "see which categories the help center has")
)
def list_categories(ctx: ToolContext) -> list[Category]:
    """The help center's categories, in the order customers see them."""
    return ctx.query(Category).order_by("position").all()


@service.tool("read", intent="find", phrases=("list the help center sections", "see which sections {category_id} has"))
def list_sections(
    ctx: ToolContext, category_id: CategoryId | None = None, limit: Limit = 50, cursor: Cursor = None
) -> Page[Section]:
    """The help center's sections (in one category, or all), with how many published articles each holds.

    Args:
        category_id: Only the sections of this category (see list_categories).
        limit: Maximum number of sections to return (1-100).
        cursor: next_cursor from a previous page.
    """
    if category_id is not None:
        ctx.get(Category, category_id, hint="Use list_categories to find category ids.")
    return ctx.query(Section).filter(category_id=category_id).order_by("category_id", "position").page(limit, cursor)


@service.tool(
    "write",
    intent="create",
    phrases=("add a help center section {name} to {category_id}", "create a section called {name} in {category_id}"),
)
def create_section(
    ctx: ToolContext, category_id: CategoryId, name: ShortText, description: Text | None = None
) -> Section:
    """Add a section at the end of a category. Section names are unique within a category.

    Args:
        category_id: The category (see list_categories).
        name: The section's name.
        description: What the section covers.
    """
    category = ctx.get(Category, category_id, hint="Use list_categories to find category ids.")
    clean = " ".join(name.split())
    if not clean:
        raise ToolError.invalid_argument("name must not be empty.")
    siblings = ctx.query(Section).where(category_id=category.id).all()
    if any(s.name.casefold() == clean.casefold() for s in siblings):
        raise ToolError.conflict(f"Category {category.name!r} already has a section {clean!r}.")
    return ctx.insert(
        Section(
            id=ctx.new_id("ks"),
            category_id=category.id,
            name=clean,
            description=(description or "").strip(),
            position=len(siblings),
        )
    )


# -- articles: reads -----------------------------------------------------------------------------


@service.tool(
    "read",
    intent="find",
    phrases=("look for a help center article about {query}", "search the help center for {query}"),
)
def search_articles(
    ctx: ToolContext,
    query: str | None = None,
    section_id: SectionId | None = None,
    label: Tag | None = None,
    status: ArticleStatus | None = None,
    limit: Limit = 10,
    cursor: Cursor = None,
) -> Page[Article]:
    """Search articles by words in their title or text. Without a status you get published articles and drafts
    (each says which it is); archived ones only with status archived. Customers only see published articles.

    Args:
        query: Words to find in the title or text (every word must appear, case-insensitive).
        section_id: Only articles of this section (see list_sections).
        label: Only articles with this label, e.g. sso.
        status: Only draft, published or archived articles.
        limit: Maximum number of articles to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Article).search(query).filter(section_id=section_id)
    if status is None:
        q.where_in("status", ("draft", "published"))
    else:
        q.where(status=status)
    if label is not None:
        q.where_sql("label_names LIKE ? ESCAPE '\\'", like_pattern(json_text(_labels([label])[0])))
    return q.order_by("title").page(limit, cursor)


@service.tool(
    "read", intent="find", phrases=("list the articles in {section_id}", "see which articles are in {section_id}")
)
def list_articles(
    ctx: ToolContext,
    section_id: SectionId,
    status: ArticleStatus | None = None,
    sort_by: SortBy = "position",
    limit: Limit = 30,
    cursor: Cursor = None,
) -> Page[Article]:
    """The articles of a section (every status unless you pass one), sorted as asked.

    Args:
        section_id: The section (see list_sections).
        status: Only draft, published or archived articles.
        sort_by: position (as customers see them, default), title, updated_at (newest first) or helpful_votes
            (most first).
        limit: Maximum number of articles to return (1-100).
        cursor: next_cursor from a previous page.
    """
    section = _section(ctx, section_id)
    q = ctx.query(Article).where(section_id=section.id).filter(status=status)
    order = {"position": "position", "title": "title", "updated_at": "-updated_at", "helpful_votes": "-helpful_votes"}
    return q.order_by(order[sort_by]).page(limit, cursor)


@service.tool("read", intent="get", phrases=("open the help center article {article_id}", "read {article_id}"))
def get_article(ctx: ToolContext, article_id: ArticleId) -> Article:
    """Get one article with its text, status, labels, votes and its link (html_url).

    Args:
        article_id: The article's id, e.g. art_0004 (see search_articles).
    """
    return _article(ctx, article_id)


# -- articles: writes ----------------------------------------------------------------------------


@service.tool(
    "write",
    intent="draft",
    phrases=("draft a help center article {title} in {section_id}", "write up {title} for the help center"),
)
def create_article(
    ctx: ToolContext,
    section_id: SectionId,
    title: Subject,
    body: Text,
    label_names: list[Tag] | None = None,
    status: Literal["draft", "published"] = "draft",
) -> Article:
    """Write a new article in a section: a draft (the default; customers do not see it until it is published) or
    published at once.

    Args:
        section_id: The section it belongs in (see list_sections).
        title: The article's title, unique among the section's live articles.
        body: The article's text (Markdown).
        label_names: Labels, e.g. ["sso", "login"].
        status: draft (default) or published.
    """
    section = _section(ctx, section_id)
    clean = _title(ctx, section, title)
    (count,) = ctx.sql("SELECT COUNT(*) FROM articles WHERE section_id = ?", section.id)[0]
    article_id = ctx.new_id("art")
    return ctx.insert(
        Article(
            id=article_id,
            section_id=section.id,
            title=clean,
            body=_body(body),
            label_names=_labels(label_names or []),
            status=status,
            position=int(count),
            author_email=ctx.world.user.email,
            html_url=_url(ctx, article_id, clean),
            created_at=ctx.now_iso,
            updated_at=ctx.now_iso,
            published_at=ctx.now_iso if status == "published" else None,
        )
    )


@service.tool(
    "write", intent="update", phrases=("update the help center article {article_id}", "fix the text of {article_id}")
)
def update_article(
    ctx: ToolContext,
    article_id: ArticleId,
    title: Subject | None = None,
    body: Text | None = None,
    label_names: list[Tag] | None = None,
) -> Article:
    """Change an article's title, text or labels (a published article stays published, with the new text).

    Args:
        article_id: The article (not archived).
        title: A new title (its link changes with it).
        body: The new full text (Markdown), replacing the old one.
        label_names: The new full list of labels.
    """
    article = _editable(ctx, article_id)
    changes: dict[str, object] = {}
    if title is not None:
        changes["title"] = _title(ctx, _section(ctx, article.section_id), title, exclude=article.id)
    if body is not None:
        changes["body"] = _body(body)
    if label_names is not None:
        changes["label_names"] = _labels(label_names)
    changes = {k: v for k, v in changes.items() if getattr(article, k) != v}
    if not changes:
        raise ToolError.invalid_argument("Pass a new title, body or labels that differ from the current ones.")
    if "title" in changes:
        changes["html_url"] = _url(ctx, article.id, str(changes["title"]))
    return ctx.update(article, **changes, updated_at=ctx.now_iso)


@service.tool("write", intent="publish", phrases=("publish {article_id}", "put {article_id} live in the help center"))
def publish_article(ctx: ToolContext, article_id: ArticleId) -> Article:
    """Publish a draft: customers can read it at its link from now on.

    Args:
        article_id: The draft to publish.
    """
    article = _article(ctx, article_id)
    if article.status != "draft":
        raise ToolError.invalid_state(
            f"Article {article_id} is {article.status}; only drafts can be published"
            + (" (restore_article it first)." if article.status == "archived" else ".")
        )
    return ctx.update(article, status="published", published_at=ctx.now_iso, updated_at=ctx.now_iso)


@service.tool("write", intent="transition", phrases=("unpublish {article_id}", "take {article_id} back to draft"))
def unpublish_article(ctx: ToolContext, article_id: ArticleId) -> Article:
    """Take a published article back to draft: customers no longer see it.

    Args:
        article_id: The published article.
    """
    article = _article(ctx, article_id)
    if article.status != "published":
        raise ToolError.invalid_state(f"Article {article_id} is {article.status}, not published.")
    return ctx.update(article, status="draft", updated_at=ctx.now_iso)


@service.tool("write", intent="delete", phrases=("archive the article {article_id}", "retire {article_id}"))
def archive_article(ctx: ToolContext, article_id: ArticleId) -> Article:
    """Archive an article: it leaves the help center (its link stops working) and search by default.

    Args:
        article_id: The draft or published article.
    """
    article = _editable(ctx, article_id)
    return ctx.update(article, status="archived", promoted=False, updated_at=ctx.now_iso)


@service.tool(
    "write",
    intent="restore",
    phrases=("restore the archived article {article_id}", "bring the article {article_id} back from the archive"),
)
def restore_article(ctx: ToolContext, article_id: ArticleId) -> Article:
    """Bring an archived article back as a draft (publish it again when it is up to date).

    Args:
        article_id: The archived article.
    """
    article = _article(ctx, article_id)
    if article.status != "archived":
        raise ToolError.invalid_state(f"Article {article_id} is {article.status}, not archived.")
    _title(ctx, _section(ctx, article.section_id), article.title, exclude=article.id)
    return ctx.update(article, status="draft", updated_at=ctx.now_iso)


@service.tool(
    "write",
    intent="update",
    phrases=("move {article_id} to {section_id}", "put the article {article_id} in the section {section_id}"),
)
def move_article(ctx: ToolContext, article_id: ArticleId, section_id: SectionId) -> Article:
    """Move an article to another section (it keeps its status and link).

    Args:
        article_id: The article (not archived).
        section_id: The section to move it to.
    """
    article = _editable(ctx, article_id)
    section = _section(ctx, section_id)
    if section.id == article.section_id:
        raise ToolError.invalid_argument(f"Article {article_id} is already in section {section.name!r}.")
    _title(ctx, section, article.title, exclude=article.id)
    return ctx.update(article, section_id=section.id, updated_at=ctx.now_iso)


# -- feedback ------------------------------------------------------------------------------------


@service.tool(
    "read",
    intent="find",
    phrases=("read the feedback on {article_id}", "check what readers said about the help center"),
)
def list_feedback(
    ctx: ToolContext,
    article_id: ArticleId | None = None,
    include_addressed: bool = False,
    limit: Limit = 30,
    cursor: Cursor = None,
) -> Page[Feedback]:
    """Readers' feedback, newest first: on one article or all of them; addressed feedback only when asked.

    Args:
        article_id: Only feedback on this article.
        include_addressed: Also return feedback already marked addressed.
        limit: Maximum number of entries to return (1-100).
        cursor: next_cursor from a previous page.
    """
    if article_id is not None:
        _article(ctx, article_id)
    q = ctx.query(Feedback).filter(article_id=article_id)
    if not include_addressed:
        q.where(addressed=False)
    return q.order_by("-created_at").page(limit, cursor)


@service.tool(
    "write",
    intent="close",
    phrases=(
        "mark the feedback {feedback_id} as addressed",
        "close the feedback {feedback_id}, it has been dealt with",
    ),
)
def mark_feedback_addressed(ctx: ToolContext, feedback_id: FeedbackId, note: Text | None = None) -> Feedback:
    """Mark a reader's feedback as addressed, with a note on what was done.

    Args:
        feedback_id: The feedback (see list_feedback).
        note: What was changed because of it.
    """
    feedback = ctx.get(Feedback, feedback_id, hint="Use list_feedback to find feedback ids.")
    if feedback.addressed:
        raise ToolError.invalid_state(f"Feedback {feedback_id} is already addressed.")
    return ctx.update(feedback, addressed=True, addressed_note=note.strip() if note and note.strip() else None)


@service.event("feedback_received")
def feedback_received(
    ctx: ToolContext,
    article_id: str,
    reader_email: str,
    helpful: bool,
    comment: str | None = None,
    hours_ago: float = 1.0,
) -> str:
    """A reader rates an article ``hours_ago`` and says why (a task's trigger). Returns the feedback's id."""
    if not 0 <= hours_ago <= 720:
        raise ToolError.invalid_argument(f"hours_ago must be between 0 and 720, not {hours_ago}.")
    article = _article(ctx, article_id)
    if article.status != "published":
        raise ToolError.invalid_state(f"Article {article_id} is {article.status}; readers only see published articles.")
    return ctx.insert(
        Feedback(
            id=ctx.new_id("fb"),
            article_id=article.id,
            reader_email=reader_email.strip().lower(),
            helpful=bool(helpful),
            comment=comment.strip() if comment and comment.strip() else None,
            created_at=ctx.days_from_now(-hours_ago / 24),
        )
    ).id
