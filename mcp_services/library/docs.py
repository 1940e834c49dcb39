"""Docs: the company wiki, pages in spaces with versions, labels and comments (modelled on Confluence / Notion).

This is where the company's rules are written down (``mcp_services.kernel.plans.policies``): the refund
and discount approval policies, ticket escalation and routing, lead handling, the customer onboarding
checklist, event registration, the help center writing guidelines, and the time off, expense and hiring
rules of ``plans.staff``, with the same figures the other services enforce.

Pages follow Confluence's rules: a title is unique within its space; a page lives under a parent page
of the same space (or at the top); every edit makes a new version and keeps the old one in the page's
history; an archived page is hidden from search and cannot be edited or commented until it is
restored. Comments can be replied to and resolved.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Literal

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, derived, field, joined
from mcp_services.kernel.entity import json_text
from mcp_services.kernel.plans.policies import policy_plan
from mcp_services.kernel.prose import write
from mcp_services.kernel.records import RecordAccess, like_pattern
from mcp_services.kernel.schema import StateDef
from mcp_services.kernel.semantic import (
    URL,
    DateTime,
    EmailAddress,
    EntityId,
    PersonName,
    ShortText,
    Subject,
    Tag,
    Text,
)

SpaceId = EntityId("docs.space")
PageId = EntityId("docs.page")
VersionId = EntityId("docs.page_version")
CommentId = EntityId("docs.comment")

PageStatus = Literal["current", "archived"]
SpaceKey = ShortText

#: The wiki's spaces: (key, name, what lives there).
SPACES: tuple[tuple[str, str, str], ...] = (
    ("POL", "Company policies", "Policies that apply to everyone: refunds, data, security."),
    ("SUP", "Support", "How the support team works: routing, escalation, macros, help center guidelines."),
    ("SAL", "Sales", "Pricing and discounts, lead handling, onboarding new customers, account management."),
    ("PPL", "People", "Time off, expenses, hiring and everything else about working here."),
    ("MKT", "Marketing", "Customer events, campaigns and brand."),
    ("OPS", "Operations", "Office, vendors and purchasing."),
    ("ENG", "Engineering", "Releases, on-call and how we build the product."),
)

service = Service(
    "docs",
    "The company wiki: pages in spaces with labels, version history and comments; where the company's "
    "policies are written down.",
    title="Docs",
)


def _page_counts(db: RecordAccess, spaces: Sequence[Space]) -> list[int]:
    counts = dict(db.sql("SELECT space_id, COUNT(*) FROM pages WHERE status = 'current' GROUP BY 1"))
    return [int(counts.get(s.id, 0)) for s in spaces]


@service.entity(table="spaces", prefix="sp", label="name", search=("key", "name", "description"))
class Space:
    """A space of the wiki: a team's or a topic's pages."""

    id: SpaceId
    key: str = field(unique=True, description="The space's short key, e.g. SUP")
    name: str
    description: Text
    created_at: DateTime

    page_count = derived(int, batch=_page_counts, description="Current (not archived) pages in the space")


def _open_comments(db: RecordAccess, pages: Sequence[WikiPage]) -> list[int]:
    ids = [p.id for p in pages]
    marks = ", ".join("?" for _ in ids)
    counts = dict(
        db.sql(f"SELECT page_id, COUNT(*) FROM comments WHERE resolved = 0 AND page_id IN ({marks}) GROUP BY 1", *ids)
    )
    return [int(counts.get(p.id, 0)) for p in pages]


@service.entity(
    table="pages",
    prefix="pg",
    label="title",
    search=("title", "body"),
    state=StateDef(
        field="status",
        values=["current", "archived"],
        initial="current",
        transitions={"current": ["archived"], "archived": ["current"]},
    ),
)
class WikiPage:
    """A page of the wiki, in a space, perhaps under a parent page."""

    id: PageId
    space_id: SpaceId = field(index=True)
    parent_id: PageId | None = field(None, index=True)
    title: Subject = field(index=True)
    body: Text
    labels: list[Tag] = field(incidental=True)
    status: PageStatus = field(index=True)
    version: int
    author_email: EmailAddress = field(role="author")
    last_editor_email: EmailAddress = field(role="last editor")
    created_at: DateTime
    updated_at: DateTime
    url: URL = field(mention="the page link")

    space_key = joined(str, via="space_id", field="key")
    space_name = joined(str, via="space_id", field="name")
    open_comment_count = derived(int, batch=_open_comments, description="Comments not resolved yet")


@service.entity(table="page_versions", prefix="pv")
class PageVersion:
    """One saved version of a page: what it said after that edit."""

    id: VersionId
    page_id: PageId = field(index=True)
    version: int
    title: Subject
    body: Text
    editor_email: EmailAddress = field(role="editor")
    message: ShortText | None = None
    created_at: DateTime


@service.entity(table="comments", prefix="pc", search=("body",))
class Comment:
    """A comment on a page, or a reply to one."""

    id: CommentId
    page_id: PageId = field(index=True)
    parent_id: CommentId | None = None
    author_email: EmailAddress = field(role="author")
    author_name: PersonName = field(role="author")
    body: Text
    resolved: bool = False
    created_at: DateTime
    resolved_at: DateTime | None = None

    page_title = joined(str, via="page_id", field="title")


# -- rules shared by the tools -------------------------------------------------------------------

_PAGE_HINT = "Use search_pages or list_pages to find page ids."
_MAX_LABELS = 20


def _space(ctx: ToolContext, space_key: str) -> Space:
    key = space_key.strip().upper()
    space = ctx.find(Space, key=key)
    if space is None:
        keys = ", ".join(k for (k,) in ctx.sql("SELECT key FROM spaces ORDER BY key"))
        raise ToolError.not_found("space", space_key, f"Space keys: {keys} (see list_spaces).")
    return space


def _page(ctx: ToolContext, page_id: str) -> WikiPage:
    return ctx.get(WikiPage, page_id, hint=_PAGE_HINT)


def _editable(ctx: ToolContext, page_id: str) -> WikiPage:
    page = _page(ctx, page_id)
    if page.status == "archived":
        raise ToolError.invalid_state(
            f"Page {page_id} ({page.title!r}) is archived; restore_page it before changing it."
        )
    return page


def _title(ctx: ToolContext, space: Space, title: str, exclude: str | None = None) -> str:
    """A title for a page of ``space``: not blank and not the title of another page there (archived ones included)."""
    clean = " ".join(title.split())
    if not clean:
        raise ToolError.invalid_argument("title must not be empty.")
    clash = ctx.query(WikiPage).where(space_id=space.id).where_sql("lower(title) = lower(?)", clean).first()
    if clash is not None and clash.id != exclude:
        raise ToolError.conflict(
            f"Space {space.key} already has a page titled {clash.title!r} ({clash.id}, {clash.status}); "
            "pick another title or update that page."
        )
    return clean


def _parent(ctx: ToolContext, space: Space, parent_id: str | None, moving: str | None = None) -> str | None:
    """A parent page in the same space; a page never goes under itself or one of its own descendants."""
    if parent_id is None:
        return None
    parent = _editable(ctx, parent_id)
    if parent.space_id != space.id:
        raise ToolError.invalid_argument(
            f"Page {parent_id} is in another space; a parent must be in space {space.key} (or omit parent_id)."
        )
    cursor: WikiPage | None = parent
    seen: set[str] = set()
    while cursor is not None and cursor.id not in seen:
        if cursor.id == moving:
            raise ToolError.invalid_argument("A page cannot go under itself or one of its own child pages.")
        seen.add(cursor.id)
        cursor = ctx.fetch(WikiPage, cursor.parent_id) if cursor.parent_id else None
    return parent.id


def _labels(labels: Sequence[str]) -> list[str]:
    clean = []
    for label in labels:
        tag = "-".join(label.strip().lower().split())
        if not tag:
            raise ToolError.invalid_argument("A label must not be blank.")
        if tag not in clean:
            clean.append(tag)
    if len(clean) > _MAX_LABELS:
        raise ToolError.invalid_argument(f"A page takes at most {_MAX_LABELS} labels.")
    return clean


def _body(text: str, name: str = "body") -> str:
    if not text.strip():
        raise ToolError.invalid_argument(f"{name} must not be empty.")
    return text.strip()


def _save(ctx: ToolContext, page: WikiPage, message: str | None, **changes: object) -> WikiPage:
    """Write an edit as the next version of the page and keep it in the history."""
    me = ctx.world.user.email
    page = ctx.update(page, **changes, version=page.version + 1, last_editor_email=me, updated_at=ctx.now_iso)
    ctx.insert(
        PageVersion(
            id=ctx.new_id("pv"),
            page_id=page.id,
            version=page.version,
            title=page.title,
            body=page.body,
            editor_email=me,
            message=message.strip() if message and message.strip() else None,
            created_at=ctx.now_iso,
        )
    )
    return page


def _url(ctx: ToolContext, space_key: str, page_id: str) -> str:
    return f"https://wiki.{ctx.world.home.domain}/spaces/{space_key}/pages/{page_id}"


def _person_name(ctx: ToolContext, email: str) -> str:
    for person in ctx.world.people:
        if person.email == email:
            return person.name
    return email.split("@", 1)[0].replace(".", " ").title()


# -- seed ----------------------------------------------------------------------------------------

_SEED_COMMENTS: tuple[tuple[str, str, str], ...] = (
    ("Refund policy", "finance lead", "[Reminder|Just a reminder|Note for everyone]: duplicate charges are always "
     "refunded in full, even above the limit.[ Ask me if in doubt.| No approval needed for those.|]"),
    (
        "Ticket escalation and routing rules",
        "support agent",
        "[Does|Quick question: does|Should] the Enterprise bump also apply to how-to questions?[ Had one "
        "{weekday}.| A customer asked yesterday.|]",
    ),
    (
        "Discount approval policy",
        "account executive",
        "[Is|Quick check: is|Can someone confirm whether] the Enterprise extra [on top of|added to] the product limit "
        "or [instead of it|replacing it]?",
    ),
    ("Expense policy", "accountant", "[Please attach|Reminder to attach|Please upload] itemised receipts, not card "
     "slips.[ Card slips don't show the items.| Thanks!| It saves us a round trip.|]"),
)


@service.seeder
def seed(ctx: ToolContext) -> None:
    """The spaces, the policy pages of the policy plan with their first version, and a few comments."""
    world = ctx.world
    plan = policy_plan(world)
    spaces = {
        key: Space(
            id=ctx.new_id("sp"), key=key, name=name, description=about, created_at=ctx.days_from_now(-900 + 30 * n)
        )
        for n, (key, name, about) in enumerate(SPACES)
    }
    ctx.insert_many(list(spaces.values()))
    pages: list[WikiPage] = []
    versions: list[PageVersion] = []
    for policy in sorted(plan.pages, key=lambda p: (p.updated_days_ago, p.title), reverse=True):
        created = ctx.days_from_now(-policy.updated_days_ago - 200)
        updated = ctx.days_from_now(-policy.updated_days_ago)
        page_id = ctx.new_id("pg")
        page = WikiPage(
            id=page_id,
            space_id=spaces[policy.space].id,
            title=policy.title,
            body=policy.body,
            labels=list(policy.labels),
            status="current",
            version=1,
            author_email=policy.owner_email,
            last_editor_email=policy.owner_email,
            created_at=created,
            updated_at=updated,
            url=_url(ctx, policy.space, page_id),
        )
        pages.append(page)
        versions.append(
            PageVersion(
                id=ctx.new_id("pv"),
                page_id=page.id,
                version=1,
                title=page.title,
                body=page.body,
                editor_email=page.author_email,
                message="First version",
                created_at=updated,
            )
        )
    # The event pages sit under the event registration rules.
    rules = next(p for p in pages if p.title == "Event registration rules")
    names = {e.name for e in plan.events}
    pages = [dataclasses.replace(p, parent_id=rules.id) if p.title in names else p for p in pages]
    ctx.insert_many(sorted([p for p in pages if p.parent_id is None], key=lambda p: p.id))
    ctx.insert_many(sorted([p for p in pages if p.parent_id is not None], key=lambda p: p.id))
    ctx.insert_many(versions)
    by_title = {p.title: p for p in pages}
    comments = []
    words = ctx.rng("words")
    for n, (title, role, body) in enumerate(_SEED_COMMENTS):
        author = world.team_member(role)
        comments.append(
            Comment(
                id=ctx.new_id("pc"),
                page_id=by_title[title].id,
                author_email=author.email,
                author_name=author.name,
                body=write(words, body, {"weekday": words.choice(("Monday", "Tuesday", "Wednesday", "Thursday"))}),
                resolved=n == 0,
                created_at=ctx.days_from_now(-10 - 3 * n),
                resolved_at=ctx.days_from_now(-8) if n == 0 else None,
            )
        )
    ctx.insert_many(comments)


# -- spaces --------------------------------------------------------------------------------------


@service.tool("read", intent="find", phrases=("check which spaces the wiki has", "list the wiki spaces"))
def list_spaces(ctx: ToolContext, limit: Limit = 50, cursor: Cursor = None) -> Page[Space]:
    """List the wiki's spaces with their keys and how many pages each holds.

    Args:
        limit: Maximum number of spaces to return (1-100).
        cursor: next_cursor from a previous page.
    """
    return ctx.query(Space).order_by("key").page(limit, cursor)


# -- pages: reads --------------------------------------------------------------------------------


@service.tool("read", intent="find", phrases=("look up {query} in the wiki", "search the docs for {query}"))
def search_pages(
    ctx: ToolContext,
    query: str | None = None,
    space_key: SpaceKey | None = None,
    label: Tag | None = None,
    include_archived: bool = False,
    limit: Limit = 10,
    cursor: Cursor = None,
) -> Page[WikiPage]:
    """Search pages by words in their title or text, optionally within one space or with one label.

    Archived pages are left out unless include_archived is true. Results come in title order.

    Args:
        query: Words to find in the title or text (every word must appear, case-insensitive).
        space_key: Only pages of this space, e.g. SUP (see list_spaces).
        label: Only pages with this label, e.g. policy.
        include_archived: Also return archived pages.
        limit: Maximum number of pages to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(WikiPage).search(query)
    if space_key is not None:
        q.where(space_id=_space(ctx, space_key).id)
    if label is not None:
        q.where_sql("labels LIKE ? ESCAPE '\\'", like_pattern(json_text(_labels([label])[0])))
    if not include_archived:
        q.where(status="current")
    return q.order_by("title").page(limit, cursor)


@service.tool(
    "read", intent="find", phrases=("list the pages of the {space_key} space", "see what is under {parent_id}")
)
def list_pages(
    ctx: ToolContext,
    space_key: SpaceKey,
    parent_id: PageId | None = None,
    top_level_only: bool = False,
    include_archived: bool = False,
    limit: Limit = 50,
    cursor: Cursor = None,
) -> Page[WikiPage]:
    """List the pages of a space (the page tree), or the child pages of one page.

    Args:
        space_key: The space, e.g. SAL (see list_spaces).
        parent_id: Only the direct children of this page.
        top_level_only: Only pages without a parent (ignored when parent_id is given).
        include_archived: Also list archived pages.
        limit: Maximum number of pages to return (1-100).
        cursor: next_cursor from a previous page.
    """
    space = _space(ctx, space_key)
    q = ctx.query(WikiPage).where(space_id=space.id)
    if parent_id is not None:
        parent = _page(ctx, parent_id)
        if parent.space_id != space.id:
            raise ToolError.invalid_argument(f"Page {parent_id} is not in space {space.key}.")
        q.where(parent_id=parent.id)
    elif top_level_only:
        q.where(parent_id=None)
    if not include_archived:
        q.where(status="current")
    return q.order_by("title").page(limit, cursor)


@service.tool("read", intent="get", phrases=("open the wiki page {page_id}", "read {page_id}"))
def get_page(ctx: ToolContext, page_id: PageId) -> WikiPage:
    """Get one page with its full text, labels, version and link.

    Args:
        page_id: The page's id, e.g. pg_0007 (see search_pages).
    """
    return _page(ctx, page_id)


@service.tool(
    "read",
    intent="find",
    phrases=("open the page called {title} in the {space_key} space", "pull up the {title} page in the wiki"),
)
def get_page_by_title(ctx: ToolContext, space_key: SpaceKey, title: Subject) -> WikiPage:
    """Get the page with exactly this title (case-insensitive) in a space.

    Args:
        space_key: The space, e.g. POL.
        title: The page's title, e.g. Refund policy.
    """
    space = _space(ctx, space_key)
    page = (
        ctx.query(WikiPage)
        .where(space_id=space.id)
        .where_sql("lower(title) = lower(?)", " ".join(title.split()))
        .first()
    )
    if page is None:
        raise ToolError.not_found("page", title, f"No page of space {space.key} has that title; try search_pages.")
    return page


@service.tool("read", intent="find", phrases=("look at the history of {page_id}", "check who changed {page_id}"))
def list_page_versions(
    ctx: ToolContext, page_id: PageId, limit: Limit = 20, cursor: Cursor = None
) -> Page[PageVersion]:
    """A page's version history, newest first: what each version said, who saved it and why.

    Args:
        page_id: The page.
        limit: Maximum number of versions to return (1-100).
        cursor: next_cursor from a previous page.
    """
    page = _page(ctx, page_id)
    return ctx.query(PageVersion).where(page_id=page.id).order_by("-version").page(limit, cursor)


# -- pages: writes -------------------------------------------------------------------------------


@service.tool(
    "write",
    intent="create",
    phrases=("write a wiki page called {title} in the {space_key} space", "add a page {title} to the wiki"),
)
def create_page(
    ctx: ToolContext,
    space_key: SpaceKey,
    title: Subject,
    body: Text,
    parent_id: PageId | None = None,
    labels: list[Tag] | None = None,
) -> WikiPage:
    """Create a page in a space, at the top or under a parent page of the same space.

    Titles are unique within a space.

    Args:
        space_key: The space to create it in, e.g. SUP (see list_spaces).
        title: The page's title.
        body: The page's text (Markdown).
        parent_id: The page to put it under; omit for a top-level page.
        labels: Labels to put on it, e.g. ["policy", "support"].
    """
    space = _space(ctx, space_key)
    clean = _title(ctx, space, title)
    text = _body(body)
    parent = _parent(ctx, space, parent_id)
    me = ctx.world.user.email
    page_id = ctx.new_id("pg")
    page = ctx.insert(
        WikiPage(
            id=page_id,
            space_id=space.id,
            parent_id=parent,
            title=clean,
            body=text,
            labels=_labels(labels or []),
            status="current",
            version=1,
            author_email=me,
            last_editor_email=me,
            created_at=ctx.now_iso,
            updated_at=ctx.now_iso,
            url=_url(ctx, space.key, page_id),
        )
    )
    ctx.insert(
        PageVersion(
            id=ctx.new_id("pv"),
            page_id=page.id,
            version=1,
            title=clean,
            body=text,
            editor_email=me,
            message="Created",
            created_at=ctx.now_iso,
        )
    )
    return page


@service.tool(
    "write",
    intent="update",
    phrases=("update the wiki page {page_id}", "rewrite {page_id} to say {body}"),
)
def update_page(
    ctx: ToolContext,
    page_id: PageId,
    title: Subject | None = None,
    body: Text | None = None,
    version_message: ShortText | None = None,
) -> WikiPage:
    """Change a page's title or replace its text; the edit becomes the next version (the old one stays in its history).

    Args:
        page_id: The page to edit (not archived).
        title: A new title (unique in the space).
        body: The page's new full text (Markdown); it replaces the old text.
        version_message: A short note on what changed, shown in the history.
    """
    page = _editable(ctx, page_id)
    changes: dict[str, object] = {}
    if title is not None:
        changes["title"] = _title(ctx, ctx.get(Space, page.space_id), title, exclude=page.id)
    if body is not None:
        changes["body"] = _body(body)
    changes = {k: v for k, v in changes.items() if getattr(page, k) != v}
    if not changes:
        raise ToolError.invalid_argument("Pass a new title or body that differs from the current one.")
    return _save(ctx, page, version_message, **changes)


@service.tool(
    "write", intent="update", phrases=("add to {page_id}: {text}", "append {text} to the wiki page {page_id}")
)
def append_to_page(ctx: ToolContext, page_id: PageId, text: Text) -> WikiPage:
    """Add text at the end of a page (a new paragraph); the edit becomes the next version.

    Args:
        page_id: The page to add to (not archived).
        text: The text to add (Markdown).
    """
    page = _editable(ctx, page_id)
    return _save(ctx, page, "Added a section", body=f"{page.body}\n\n{_body(text, 'text')}")


@service.tool(
    "write", intent="update", phrases=("move {page_id} under {parent_id}", "move {page_id} to the {space_key} space")
)
def move_page(
    ctx: ToolContext, page_id: PageId, space_key: SpaceKey | None = None, parent_id: PageId | None = None
) -> WikiPage:
    """Move a page to another space and/or under another parent page (its own child pages stay where they are).

    Args:
        page_id: The page to move (not archived).
        space_key: The space to move it to; defaults to its own.
        parent_id: The new parent page, in the target space; omit to make it a top-level page.
    """
    page = _editable(ctx, page_id)
    space = _space(ctx, space_key) if space_key is not None else ctx.get(Space, page.space_id)
    if space.id != page.space_id and ctx.exists(WikiPage, parent_id=page.id, status="current"):
        raise ToolError.invalid_state(f"Page {page_id} has child pages; move them first, or keep it in its space.")
    parent = _parent(ctx, space, parent_id, moving=page.id)
    if space.id == page.space_id and parent == page.parent_id:
        raise ToolError.invalid_argument(f"Page {page_id} is already there; pass another space_key or parent_id.")
    title = _title(ctx, space, page.title, exclude=page.id)
    return ctx.update(
        page,
        space_id=space.id,
        parent_id=parent,
        title=title,
        url=_url(ctx, space.key, page.id),
        updated_at=ctx.now_iso,
    )


@service.tool("write", intent="delete", phrases=("archive the wiki page {page_id}", "take {page_id} out of the wiki"))
def archive_page(ctx: ToolContext, page_id: PageId) -> WikiPage:
    """Archive a page: it leaves search and the page tree but keeps its history; restore_page brings it back.

    A page with current child pages cannot be archived: move or archive them first.

    Args:
        page_id: The page to archive.
    """
    page = _editable(ctx, page_id)
    children = ctx.query(WikiPage).where(parent_id=page.id, status="current").count()
    if children:
        raise ToolError.invalid_state(f"Page {page_id} has {children} child page(s); move or archive them first.")
    return ctx.update(page, status="archived", updated_at=ctx.now_iso)


@service.tool(
    "write",
    intent="restore",
    phrases=("restore the archived page {page_id}", "bring the page {page_id} back from the archive"),
)
def restore_page(ctx: ToolContext, page_id: PageId) -> WikiPage:
    """Bring an archived page back (to the top of its space if its parent is archived too).

    Args:
        page_id: The archived page.
    """
    page = _page(ctx, page_id)
    if page.status != "archived":
        raise ToolError.invalid_state(f"Page {page_id} is not archived.")
    parent = ctx.fetch(WikiPage, page.parent_id) if page.parent_id else None
    keep = parent.id if parent is not None and parent.status == "current" else None
    return ctx.update(page, status="current", parent_id=keep, updated_at=ctx.now_iso)


@service.tool("write", intent="tag", phrases=("label {page_id} with {labels}", "add the labels {labels} to {page_id}"))
def add_labels(ctx: ToolContext, page_id: PageId, labels: list[Tag]) -> WikiPage:
    """Add labels to a page (labels it already has are kept once).

    Args:
        page_id: The page (not archived).
        labels: Labels to add, e.g. ["policy"].
    """
    page = _editable(ctx, page_id)
    merged = _labels([*page.labels, *labels])
    if merged == page.labels:
        raise ToolError.invalid_argument(f"Page {page_id} already has every one of those labels.")
    return ctx.update(page, labels=merged, updated_at=ctx.now_iso)


@service.tool(
    "write", intent="tag", phrases=("take the {label} label off {page_id}", "remove the label {label} from {page_id}")
)
def remove_label(ctx: ToolContext, page_id: PageId, label: Tag) -> WikiPage:
    """Remove one label from a page.

    Args:
        page_id: The page (not archived).
        label: The label to remove.
    """
    page = _editable(ctx, page_id)
    tag = _labels([label])[0]
    if tag not in page.labels:
        raise ToolError.invalid_argument(
            f"Page {page_id} has no label {tag!r}; its labels: {', '.join(page.labels) or 'none'}."
        )
    return ctx.update(page, labels=[t for t in page.labels if t != tag], updated_at=ctx.now_iso)


# -- comments ------------------------------------------------------------------------------------


def _comment(ctx: ToolContext, page: WikiPage, body: str, author: str, at: str, parent_id: str | None) -> Comment:
    parent = None
    if parent_id is not None:
        parent = ctx.get(Comment, parent_id, hint="Use list_comments to find comment ids.")
        if parent.page_id != page.id:
            raise ToolError.invalid_argument(f"Comment {parent_id} is on another page; reply on page {parent.page_id}.")
    return ctx.insert(
        Comment(
            id=ctx.new_id("pc"),
            page_id=page.id,
            parent_id=parent.id if parent else None,
            author_email=author,
            author_name=_person_name(ctx, author),
            body=_body(body),
            created_at=at,
        )
    )


@service.tool(
    "write",
    intent="note",
    phrases=("comment on {page_id}: {body}", "leave a comment on the wiki page {page_id} saying {body}"),
)
def add_comment(ctx: ToolContext, page_id: PageId, body: Text, reply_to_comment_id: CommentId | None = None) -> Comment:
    """Comment on a page, or reply to one of its comments.

    Args:
        page_id: The page (not archived).
        body: The comment's text.
        reply_to_comment_id: The comment this one answers, on the same page.
    """
    page = _editable(ctx, page_id)
    return _comment(ctx, page, body, ctx.world.user.email, ctx.now_iso, reply_to_comment_id)


@service.tool(
    "read", intent="find", phrases=("read the comments on {page_id}", "check what people commented on {page_id}")
)
def list_comments(
    ctx: ToolContext, page_id: PageId, include_resolved: bool = False, limit: Limit = 50, cursor: Cursor = None
) -> Page[Comment]:
    """A page's comments, oldest first; resolved ones only when asked.

    Args:
        page_id: The page.
        include_resolved: Also return resolved comments.
        limit: Maximum number of comments to return (1-100).
        cursor: next_cursor from a previous page.
    """
    page = _page(ctx, page_id)
    q = ctx.query(Comment).where(page_id=page.id)
    if not include_resolved:
        q.where(resolved=False)
    return q.order_by("created_at").page(limit, cursor)


@service.tool("write", intent="close", phrases=("resolve the comment {comment_id}", "mark {comment_id} as resolved"))
def resolve_comment(ctx: ToolContext, comment_id: CommentId) -> Comment:
    """Mark a comment resolved (it leaves the page's open comments).

    Args:
        comment_id: The comment (see list_comments).
    """
    comment = ctx.get(Comment, comment_id, hint="Use list_comments to find comment ids.")
    if comment.resolved:
        raise ToolError.invalid_state(f"Comment {comment_id} is already resolved.")
    return ctx.update(comment, resolved=True, resolved_at=ctx.now_iso)


@service.event("comment_added")
def comment_added(ctx: ToolContext, page_id: str, author_email: str, body: str, hours_ago: float = 1.0) -> str:
    """A colleague comments on a page ``hours_ago`` (a task's trigger: "Dana asked on the refund policy page").

    Returns the comment's id.
    """
    if not 0 <= hours_ago <= 720:
        raise ToolError.invalid_argument(f"hours_ago must be between 0 and 720, not {hours_ago}.")
    page = _page(ctx, page_id)
    return _comment(ctx, page, body, author_email.strip().lower(), ctx.days_from_now(-hours_ago / 24), None).id
