"""Files: the team's cloud drive of folders and documents (modelled on Box and Google Drive).

Folders and files are two kinds of item, as in Box; every tool that takes a ``file_id`` (get,
rename, move, trash, restore, share, shared links, permanent delete) accepts a folder id as well,
and listings that mix both show each as an item with its ``type``. The drive belongs to the home
team; the acting user is ``world.user``.

The documents about customers are the world's business plan (``world.plan``): every invoice PDF is
an invoice of the accounting books (same number, lines and total), contracts and proposals name the
CRM's companies and people, and the revenue reports add up the invoices. The rest of the drive
(policies, runbooks, meeting notes, templates) is written from the texts below.

Rules (Box's and Drive's):
- Names are unique, case-insensitively, among the items of a folder that are not in the trash.
- Trashing a folder trashes everything in it; restoring it brings back what was trashed with it.
  An item whose folder is still in the trash can only be restored into another folder.
- Only items in the trash can be deleted permanently. Trashed items cannot be edited, moved,
  copied, shared or given a shared link; restore them first. The root folder cannot be changed.
- Sharing grants a person (by email) viewer, commenter or editor access; you cannot share with
  yourself or with the owner; sharing again with another role changes the role.
- A shared link gives anyone (or anyone in the organisation) access by URL until it expires.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from datetime import date, timedelta
from random import Random
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, derived, field
from mcp_services.kernel.entity import runtime_of
from mcp_services.kernel.pagination import page_of
from mcp_services.kernel.plans.commerce import commerce_plan
from mcp_services.kernel.records import RecordAccess, check_search_text, like_pattern
from mcp_services.kernel.semantic import (
    URL,
    CompanyName,
    Date,
    DateTime,
    EmailAddress,
    EntityId,
    FileName,
    FileRef,
    PersonName,
    Text,
)
from mcp_services.kernel.world import (
    Organisation,
    Person,
    PlannedContract,
    PlannedDocument,
    PlannedInvoice,
    PlannedLine,
    PlannedProposal,
    PlannedReport,
    World,
)

FileId = EntityId("files.file")
FolderId = EntityId("files.folder")
ShareId = EntityId("files.share")
FileTextId = EntityId("files.file_text")

ItemType = Literal["file", "folder"]
ShareRole = Literal["viewer", "commenter", "editor"]
LinkAccess = Literal["anyone", "organization"]
TextMimeType = Literal["text/plain", "text/markdown", "text/csv", "application/json", "text/html"]
FileOrder = Literal["name", "modified_at", "created_at", "size"]

ROOT_NAME = "All Files"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"

#: Extension -> mime type, for the files we seed and the ones create_file may make.
MIME_BY_EXTENSION: dict[str, str] = {
    "txt": "text/plain",
    "md": "text/markdown",
    "csv": "text/csv",
    "json": "application/json",
    "html": "text/html",
    "pdf": "application/pdf",
    "docx": DOCX,
    "xlsx": XLSX,
    "pptx": PPTX,
    "png": "image/png",
    "jpg": "image/jpeg",
}
#: Mime types whose text can be written directly (create_file, update_file_content).
TEXT_MIME_TYPES = ("text/plain", "text/markdown", "text/csv", "application/json", "text/html")
FILE_HINT = "Use search_files or list_folder_items to find file ids."
FOLDER_HINT = "Use search_folders or list_folder_items to find folder ids."

service = Service(
    "files",
    "Cloud drive: folders and documents (contracts, proposals, invoices, reports, meeting notes) "
    "with search, text content, sharing with people, shared links and a trash.",
    title="Files",
)


# -- values read for a whole result ---------------------------------------------------------------


def _folder_paths(db: RecordAccess) -> dict[str, str]:
    """Every folder's path ("/" for the root), from one query: folders are few."""
    rows = {folder_id: (name, parent) for folder_id, name, parent in db.sql("SELECT id, name, parent_id FROM folders")}
    paths: dict[str, str] = {}

    def path_of(folder_id: str) -> str:
        if folder_id not in paths:
            name, parent = rows[folder_id]
            paths[folder_id] = "/" if parent is None else f"{path_of(parent).rstrip('/')}/{name}"
        return paths[folder_id]

    for folder_id in rows:
        path_of(folder_id)
    return paths


def _paths(db: RecordAccess, items: Sequence[Any]) -> list[str]:
    paths = _folder_paths(db)
    return [
        paths[i.id] if i.id.startswith("folder_") else f"{paths[i.parent_id].rstrip('/')}/{i.name}" if i.parent_id
        else f"/{i.name}"
        for i in items
    ]


def _sharers(db: RecordAccess, items: Sequence[Any]) -> list[list[str]]:
    """Who each item is shared with, by email, in one query."""
    found: dict[str, list[str]] = {i.id: [] for i in items}
    for share in db.query(Share).where_in("item_id", list(found)).order_by("email").all():
        found[share.item_id].append(share.email)
    return [found[i.id] for i in items]


def _item_counts(db: RecordAccess, folders: Sequence[Any]) -> list[int]:
    """How many items that are not in the trash each folder holds (one query per kind)."""
    ids = [f.id for f in folders]
    marks = ", ".join("?" for _ in ids)
    counts: dict[str, int] = {}
    for table in ("folders", "files"):
        statement = (
            f"SELECT parent_id, COUNT(*) FROM {table} WHERE trashed = 0 AND parent_id IN ({marks}) GROUP BY parent_id"
        )
        for parent, n in db.sql(statement, *ids):
            counts[parent] = counts.get(parent, 0) + n
    return [counts.get(i, 0) for i in ids]


def _item_names(db: RecordAccess, shares: Sequence[Any]) -> list[str]:
    ids = sorted({s.item_id for s in shares})
    names = {i.id: i.name for i in [*db.fetch_many(File, ids).values(), *db.fetch_many(Folder, ids).values()]}
    return [names[s.item_id] for s in shares]


# -- entities --------------------------------------------------------------------------------------


@service.entity(table="folders", prefix="folder", label="name", search=("name",))
class Folder:
    """A folder of the drive; the root folder ("All Files") has no parent."""

    id: FolderId
    name: FileName = field(index=True)
    parent_id: FolderId | None = None
    owner_email: EmailAddress = field(index=True, role="owner")
    owner_name: PersonName | None = field(None, role="owner")
    created_at: DateTime
    modified_at: DateTime
    modified_by_email: EmailAddress = field(role="last editor")
    trashed: bool = False
    # True for the item the user trashed; False for the contents trashed along with a folder.
    explicitly_trashed: bool = False
    trashed_at: DateTime | None = None
    shared_link_url: URL | None = field(None, unique=True, mention="the shared link")
    shared_link_access: LinkAccess | None = None
    shared_link_expires_on: Date | None = field(None, mention="when the shared link expires")

    path = derived(FileRef, batch=_paths)
    item_count = derived(int, batch=_item_counts)
    shared_with = derived(list[EmailAddress], batch=_sharers)


@service.entity(table="files", prefix="file", label="name", search=("name",))
class File:
    """A document, spreadsheet, image... in a folder; folders listed beside files take this shape too."""

    id: FileId
    name: FileName = field(index=True)
    parent_id: FolderId | None = None
    mime_type: str | None = None
    size: int = 0
    description: Text | None = None
    owner_email: EmailAddress = field(index=True, role="owner")
    owner_name: PersonName | None = field(None, role="owner")
    created_at: DateTime
    modified_at: DateTime
    modified_by_email: EmailAddress = field(role="last editor")
    version: int = 1
    trashed: bool = False
    explicitly_trashed: bool = False
    trashed_at: DateTime | None = None
    shared_link_url: URL | None = field(None, unique=True, mention="the shared link")
    shared_link_access: LinkAccess | None = None
    shared_link_expires_on: Date | None = field(None, mention="when the shared link expires")

    type = derived(ItemType, lambda f: "folder" if f.id.startswith("folder_") else "file")
    path = derived(FileRef, batch=_paths)
    shared_with = derived(list[EmailAddress], batch=_sharers)


@service.entity(table="file_texts", prefix="file", noun="file text")
class FileText:
    """The text of a file (for PDFs and Office files, their extracted text), kept apart so listings stay light."""

    id: FileTextId  # the file's id
    content: Text


@service.entity(table="shares", prefix="share")
class Share:
    """A person's access to a file or folder (Box collaboration, Drive permission)."""

    id: ShareId
    item_id: str = field(index=True)  # a file or folder id: no single foreign key fits both
    email: EmailAddress = field(index=True, role="collaborator")
    person_name: PersonName | None = field(None, role="collaborator")
    role: ShareRole
    shared_by_email: EmailAddress = field(role="sharer")
    created_at: DateTime
    updated_at: DateTime

    file_id = derived(FileId, lambda s: s.item_id)
    file_name = derived(FileName, batch=_item_names)


Item = File | Folder


class FileContentOut(BaseModel):
    id: FileId
    name: FileName
    path: FileRef
    mime_type: str
    size: int
    version: int
    modified_at: DateTime
    content: Text


class SharedLinkOut(BaseModel):
    file_id: FileId
    file_name: FileName
    url: URL
    access: LinkAccess
    expires_on: Date | None


class DeletedOut(BaseModel):
    id: FileId
    type: ItemType
    name: FileName
    deleted_items: int
    removed_shares: int


# -- what a call computes --------------------------------------------------------------------------


def _kind(item: Item) -> ItemType:
    return "folder" if isinstance(item, Folder) else "file"


def _fields(record: Any) -> dict[str, Any]:
    return runtime_of(type(record)).dump(record)


def _as_item(item: Item) -> File:
    """A file, or a folder in the shape of a drive item (for listings and tools that take either)."""
    if isinstance(item, File):
        return item
    return File(**_fields(item), mime_type=None, size=0, description=None, version=1)


def _as_items(page: Page[Any]) -> Page[File]:
    page.items = [_as_item(i) for i in page.items]
    return page




def _sorted(items: list[Item], order_by: str) -> list[Item]:
    """Names A-Z (ignoring case); dates newest first; size largest first; ids break ties."""
    items.sort(key=lambda i: i.id)
    if order_by == "name":
        items.sort(key=lambda i: i.name.lower())
    else:
        items.sort(key=lambda i: getattr(i, order_by) if isinstance(i, File) or order_by != "size" else 0, reverse=True)
    return items


# -- rules -----------------------------------------------------------------------------------------


def _root(ctx: ToolContext) -> Folder:
    root = ctx.find(Folder, parent_id=None)
    if root is None:  # every seeded store has one and no tool can remove it
        raise RuntimeError("the files store has no root folder")
    return root


def _item(ctx: ToolContext, file_id: str) -> Item:
    item: Item | None = ctx.fetch(Folder, file_id) if file_id.startswith("folder_") else ctx.fetch(File, file_id)
    if item is None:
        raise ToolError.not_found("file or folder", file_id, FILE_HINT)
    return item


def _file(ctx: ToolContext, file_id: str) -> File:
    """A file (not a folder)."""
    item = _item(ctx, file_id)
    if isinstance(item, Folder):
        raise ToolError.invalid_argument(
            f"{file_id} is a folder ({item.name!r}), not a file; use list_folder_items to see what it holds."
        )
    return item


def _folder(ctx: ToolContext, folder_id: str | None) -> Folder:
    """A folder by id; None means the root folder."""
    if folder_id is None:
        return _root(ctx)
    folder = ctx.fetch(Folder, folder_id)
    if folder is not None:
        return folder
    file = ctx.fetch(File, folder_id)
    if file is not None:
        raise ToolError.invalid_argument(f"{folder_id} is a file ({file.name!r}), not a folder. {FOLDER_HINT}")
    raise ToolError.not_found("folder", folder_id, FOLDER_HINT)


def _not_trashed(item: Item, action: str) -> None:
    if item.trashed:
        raise ToolError.invalid_state(
            f"{_kind(item).capitalize()} {item.id} ({item.name!r}) is in the trash and cannot be {action}; "
            "restore_file it first."
        )


def _not_root(item: Item, action: str) -> None:
    if isinstance(item, Folder) and item.parent_id is None:
        raise ToolError.invalid_argument(f"The root folder ({item.id}) cannot be {action}.")


def _open_folder(ctx: ToolContext, folder_id: str | None, action: str) -> Folder:
    folder = _folder(ctx, folder_id)
    if folder.trashed:
        raise ToolError.invalid_state(
            f"Folder {folder.id} ({folder.name!r}) is in the trash; you cannot {action} it. "
            "Restore it with restore_file or choose another folder."
        )
    return folder


def _clean_name(name: str) -> str:
    cleaned = name.strip()
    if not cleaned:
        raise ToolError.invalid_argument("The name must not be empty.")
    if "/" in cleaned or "\\" in cleaned or cleaned in (".", ".."):
        raise ToolError.invalid_argument(
            f"{name!r} is not a valid name: it must not contain '/' or '\\' or be '.' or '..'."
        )
    return cleaned


def _children(ctx: ToolContext, folder: Folder, *, live: bool) -> list[Item]:
    found: list[Item] = []
    for cls in (Folder, File):
        q = ctx.query(cls).where(parent_id=folder.id)
        found += q.where(trashed=False).all() if live else q.all()
    return found


def _check_name_free(ctx: ToolContext, folder: Folder, name: str, exclude_id: str | None = None) -> None:
    """Names are unique (case-insensitive) among a folder's items that are not in the trash."""
    for item in _children(ctx, folder, live=True):
        if item.name.lower() == name.lower() and item.id != exclude_id:
            raise ToolError.conflict(
                f"Folder {folder.id} ({folder.name!r}) already holds a {_kind(item)} named {item.name!r} ({item.id}). "
                "Choose another name, or rename or trash the existing item first."
            )


def _descendants(ctx: ToolContext, folder_id: str) -> tuple[list[str], list[str]]:
    """The folders and the files below a folder (not the folder itself), parents before children."""
    below: dict[str, list[str]] = {}
    for child, parent in ctx.sql("SELECT id, parent_id FROM folders WHERE parent_id IS NOT NULL ORDER BY id"):
        below.setdefault(parent, []).append(child)
    folders: list[str] = []
    queue = list(below.get(folder_id, ()))
    while queue:
        folders.append(queue.pop(0))
        queue.extend(below.get(folders[-1], ()))
    files = [f.id for f in ctx.query(File).where_in("parent_id", [folder_id, *folders]).all()]
    return folders, files


def _mime_for_name(name: str) -> str | None:
    if "." not in name:
        return None
    return MIME_BY_EXTENSION.get(name.rsplit(".", 1)[1].lower())


def _link_url(ctx: ToolContext, item_id: str) -> str:
    # A new link sequence number each time, so a removed link's URL is never handed out again.
    seq = ctx.new_id("link")
    token = hashlib.sha256(f"{ctx.world.seed}:{item_id}:{seq}".encode()).hexdigest()[:16]
    return f"https://files.{ctx.world.home.domain}/s/{token}"


def _touched(ctx: ToolContext, item: Item, **changes: Any) -> Item:
    return ctx.update(item, **changes, modified_at=ctx.now_iso, modified_by_email=ctx.world.user.email)


def _name_of(world: World, email: str) -> str | None:
    return next((p.name for p in world.people if p.email == email), None)


def _text(ctx: ToolContext, file_id: str) -> str | None:
    found = ctx.fetch(FileText, file_id)
    return found.content if found else None


def _where_text(q: Any, text: str) -> Any:
    """Files whose name or text contains ``text`` (the kernel's escaping; the text lives in its own table)."""
    pattern = like_pattern(text)
    return q.where_sql(
        "name LIKE ? ESCAPE '\\' OR id IN (SELECT id FROM file_texts WHERE content LIKE ? ESCAPE '\\')",
        pattern,
        pattern,
    )


# -- seed: the drive as data -----------------------------------------------------------------------

#: (path, owner's role, age in days). "user" is the person the agent acts for.
_FOLDERS = (
    ("Clients", "sales lead", 700),
    ("Finance", "finance lead", 700),
    ("Finance/Invoices", "accountant", 600),
    ("Finance/Reports", "finance lead", 600),
    ("Finance/Receipts", "accountant", 500),
    ("Sales", "sales lead", 650),
    ("Meeting Notes", "user", 650),
    ("HR", "office manager", 800),
    ("Engineering", "engineering lead", 700),
    ("Marketing", "product manager", 600),
    ("Operations", "user", 700),
    ("Templates", "user", 850),
    ("Archive", "user", 880),
)


class _Doc(NamedTuple):
    """A document written from a template: ``{home}``, ``{year}``, ``{finance_lead}``, ``{finance_lead_email}``..."""

    folder: str
    name: str
    owner: str  # a role of the home team, or "user"
    age: tuple[int, int]
    text: str | None
    description: str | None = None
    link: LinkAccess | None = None
    shares: tuple[tuple[str, ShareRole], ...] = ()  # (role, access)
    size: int | None = None


_DOCS = (
    _Doc("Sales", "Sales playbook.docx", "sales lead", (100, 300),
         "Sales playbook for {home}.\nDiscounts above 15% need approval from {sales_lead} ({sales_lead_email}). "
         "Contracts above {currency} 50,000.00 need the finance lead, {finance_lead}, to sign off.",
         shares=(("account executive", "editor"),)),
    _Doc("HR", "Employee handbook.pdf", "office manager", (300, 800),
         "{home} employee handbook.\nOffice: {home_address}. Phone {home_phone}.\n"
         "Questions about benefits: {office_manager} <{office_manager_email}>.", link="organization"),
    _Doc("HR", "Travel policy.docx", "finance lead", (100, 400),
         "Travel policy.\nFlights over {currency} 800.00 need approval from the finance lead, {finance_lead} "
         "({finance_lead_email}).\nHotels up to {currency} 220.00 per night."),
    _Doc("HR", "Expense policy.md", "finance lead", (100, 400),
         "# Expense policy\n\n- Keep receipts for anything over {currency} 75.00.\n"
         "- Submit expense reports by the 5th of the month to {accountant_email}.\n"
         "- Client meals up to {currency} 60.00 per person."),
    _Doc("HR", "Onboarding checklist.md", "office manager", (50, 300),
         "# Onboarding checklist\n- Laptop and dock\n- Accounts: mail, chat, files, CRM\n- Intro with {user}\n"
         "- Read the employee handbook"),
    _Doc("HR", "Holiday calendar {year}.csv", "office manager", (60, 120),
         "date,holiday\n{year}-01-01,New Year\n{year}-07-04,Independence Day\n{year}-12-25,Christmas"),
    _Doc("Engineering", "Architecture overview.pptx", "engineering lead", (200, 500),
         "Architecture overview: API, workers, database, files."),
    _Doc("Marketing", "Brand guidelines.pdf", "product manager", (200, 500),
         "{home} brand guidelines: logo clear space, colours, tone of voice. Website {home_website}.", link="anyone"),
    _Doc("Marketing", "Logo.png", "product manager", (300, 600), None, size=48_213),
    _Doc("Marketing", "Logo dark.png", "product manager", (300, 600), None, size=51_877),
    _Doc("Operations", "Office floor plan.png", "office manager", (300, 700), None, size=412_330),
    _Doc("Templates", "Invoice template.docx", "user", (400, 850),
         "INVOICE {{number}}\nBill to: {{customer}}\nTotal due: {{amount}}"),
    _Doc("Templates", "NDA template.docx", "user", (400, 850),
         "MUTUAL NON-DISCLOSURE AGREEMENT between {{party_a}} and {{party_b}}."),
    _Doc("Templates", "Proposal template.docx", "user", (400, 850),
         "Proposal for {{company}}\nPrepared by {{owner}}\nTotal: {{amount}}"),
    _Doc("Templates", "Meeting notes template.md", "user", (400, 850),
         "# {{title}} {{date}}\nAttendees:\n## Discussion\n## Action items"),
    _Doc("Archive", "Revenue report {last_year} summary.xlsx", "finance lead", (60, 80),
         "Summary of last year's revenue."),
)

#: Engineering's runbooks: (system, its three steps).
_RUNBOOKS = (
    ("Billing sync", ("Check the dashboard.", "Restart the worker if the queue is stuck.",
                      "Escalate to the on-call engineer.")),
    ("Backups", ("Check last night's job.", "Restore a sample file to verify.", "Escalate to the on-call engineer.")),
    ("On-call", ("Acknowledge the page.", "Post in the incident channel.", "Write the postmortem within two days.")),
)
#: Engineering's API designs: (feature, author's role, status).
_API_DESIGNS = (
    ("Webhooks", "engineering lead", "approved"),
    ("SSO", "product manager", "in review"),
    ("Usage export", "engineering lead", "draft"),
)
_MEETING_TOPICS = (
    "hiring plan", "office move", "Q{q} targets", "customer churn", "pricing update", "support backlog",
    "security audit", "team offsite", "new onboarding flow", "invoice reminders",
)
_ACTIONS = ("follow up with", "send the contract to", "book a call with", "chase the invoice for")
_CALL_KINDS = ("Kickoff", "Quarterly review", "Renewal", "Support escalation", "Pricing")
_ASKS = ("volume discounts", "a longer contract", "SSO", "support")
_SOW_STEPS = ("Discovery workshop", "Data migration", "Pilot go-live", "Training", "Full rollout", "Handover")
_SIZE_FACTOR = {"application/pdf": 9, DOCX: 4, XLSX: 5, PPTX: 12}  # Office files and PDFs weigh more than their text


def _money(world: World, amount: float) -> str:
    return f"{world.currency} {amount:,.2f}"


def _table(world: World, lines: Sequence[PlannedLine]) -> str:
    rows = [
        f"| {line.sku} | {line.description} | {line.quantity} | {_money(world, line.unit_price)} "
        f"| {_money(world, line.amount)} |"
        for line in lines
    ]
    return "| SKU | Item | Qty | Unit price | Amount |\n|---|---|---|---|---|\n" + "\n".join(rows)


def _role_key(role: str) -> str:
    return role.replace(" ", "_")


class _Drive:
    """Writes the seeded drive: its folder tree, documents, shares and shared links."""

    def __init__(self, ctx: ToolContext) -> None:
        self.ctx, self.world = ctx, ctx.world
        self.rng: Random = ctx.rng("seed")
        self.now = ctx.now  # parsed once: days_from_now re-parses the clock on every call
        self.names = {p.email: p.name for p in ctx.world.people}
        self.folders: dict[str, Folder] = {}
        self.files: list[File] = []
        self.texts: list[FileText] = []
        self.shares: list[Share] = []
        self.taken: set[tuple[str, str]] = set()  # (folder id, lower-case name): names are unique per folder
        world, team = ctx.world, ctx.world.team
        self.facts: dict[str, Any] = {
            "home": world.home.name, "home_address": world.home.address, "home_phone": world.home.phone,
            "home_website": world.home.website, "currency": world.currency, "user": world.user.name,
            "year": self.now.year, "last_year": self.now.year - 1,
        }
        for person in team:
            self.facts[_role_key(person.job_title)] = person.name
            self.facts[f"{_role_key(person.job_title)}_email"] = person.email
        # Clients whose superseded first draft sits in the trash (a few, always some).
        self.drafted = set(self.rng.sample([o.id for o in world.organisations[1:]], 4))

    def person(self, role: str) -> Person:
        return self.world.user if role == "user" else self.world.team_member(role)

    def ago(self, days: float) -> str:
        return self.ctx.iso(self.now - timedelta(days=days))

    def date(self, days_ahead: int) -> str:
        return self.ago(-days_ahead)[:10]

    def when(self, min_days: int, max_days: int) -> tuple[str, str]:
        """A (created, modified) pair between max_days and min_days ago, modified after created."""
        created = self.rng.randint(min_days, max_days)
        modified = self.rng.randint(max(0, min_days - 5), created) if created > 0 else 0
        offset = self.rng.randint(0, 8 * 60)
        return self.ago(created + offset / 1440), self.ago(modified + offset / 2880)

    def free_name(self, parent_id: str, name: str) -> str:
        stem, dot, ext = name.rpartition(".") if "." in name else (name, "", "")
        candidate, n = name, 1
        while (parent_id, candidate.lower()) in self.taken:
            n += 1
            candidate = f"{stem} ({n}){dot}{ext}"
        self.taken.add((parent_id, candidate.lower()))
        return candidate

    def folder(self, path: str, owner: Person, age: int) -> Folder:
        parent_path, _, name = path.rpartition("/")
        parent = self.folders.get(parent_path) if path else None
        created, modified = self.when(max(1, age - 60), age)
        folder = Folder(
            id=self.ctx.new_id("folder"), name=self.free_name(parent.id, name) if parent else ROOT_NAME,
            parent_id=parent.id if parent else None, owner_email=owner.email, owner_name=owner.name,
            created_at=created, modified_at=modified, modified_by_email=owner.email,
        )
        self.folders[path] = folder
        return folder

    def file(self, path: str, name: str, text: str | None, owner: Person, age: tuple[int, int],
             description: str | None = None, size: int | None = None, **extra: Any) -> File:
        mime = _mime_for_name(name) or "text/plain"
        if size is None:
            factor = _SIZE_FACTOR.get(mime, 1)
            size = len((text or "").encode()) * factor + (self.rng.randint(2_000, 30_000) if factor > 1 else 0)
        created, modified = self.when(*age)
        editor = owner if self.rng.random() < 0.7 else self.rng.choice(self.world.team)
        folder = self.folders[path]
        item = File(
            id=self.ctx.new_id("file"), name=self.free_name(folder.id, name), parent_id=folder.id, mime_type=mime,
            size=size, description=description, owner_email=owner.email, owner_name=owner.name, created_at=created,
            modified_at=modified, modified_by_email=editor.email,
            version=1 if modified == created else self.rng.randint(1, 6), **extra,
        )
        self.files.append(item)
        if text is not None:
            self.texts.append(FileText(id=item.id, content=text))
        return item

    def share(self, item: Item, email: str, role: ShareRole, by: str | None = None) -> None:
        if email in (item.owner_email, self.world.user.email):
            return
        created = self.ago(self.rng.randint(0, 60))
        self.shares.append(
            Share(id=self.ctx.new_id("share"), item_id=item.id, email=email, person_name=self.names.get(email),
                  role=role, shared_by_email=by or item.owner_email, created_at=created, updated_at=created)
        )

    def link(self, access: LinkAccess, expires_in_days: int | None = None) -> dict[str, Any]:
        """The shared-link fields of a new file (its id is the next one)."""
        expires = self.date(expires_in_days) if expires_in_days is not None else None
        return {"shared_link_access": access, "shared_link_expires_on": expires, "shared_link_url": "pending"}

    def trashed(self, days_ago: int, explicitly: bool = True) -> dict[str, Any]:
        return {"trashed": True, "explicitly_trashed": explicitly, "trashed_at": self.ago(days_ago)}

    # -- the drive --

    def write(self) -> None:
        world, plan = self.world, self.world.plan
        self.folder("", world.user, 900)
        for path, role, age in _FOLDERS:
            self.folder(path, self.person(role), age)
        for org in world.organisations[1:]:
            self.folder(f"Clients/{org.name}", plan.account_owners[org.id], self.rng.randint(200, 600))
        for doc in plan.documents:
            self.planned(doc)
        for org in world.organisations[1:]:
            self.client_papers(org)
        for doc in _DOCS:
            self.from_template(doc)
        self.series()
        self.archive()

    def from_template(self, doc: _Doc) -> None:
        owner = self.person(doc.owner)
        extra = self.link(doc.link) if doc.link else {}
        text = doc.text.format(**self.facts) if doc.text is not None else None
        name = doc.name.format(**self.facts)
        item = self.file(doc.folder, name, text, owner, doc.age, doc.description, doc.size, **extra)
        for role, access in doc.shares:
            self.share(item, self.person(role).email, access)

    def planned(self, doc: PlannedDocument) -> None:
        """A document of the world's plan, written from the record it describes."""
        world, record = self.world, doc.record
        owner = next(p for p in world.people if p.email == doc.owner_email)
        path = doc.folder.lstrip("/")
        if isinstance(record, PlannedInvoice):
            self.invoice_pdf(path, doc.name, record, owner)
        elif isinstance(record, PlannedContract):
            self.contract(path, doc.name, record, owner)
        elif isinstance(record, PlannedProposal):
            self.proposal(path, doc.name, record, owner)
        elif isinstance(record, PlannedReport):
            self.revenue_report(path, doc.name, record, owner)

    def invoice_pdf(self, path: str, name: str, inv: PlannedInvoice, accountant: Person) -> None:
        world = self.world
        org = world.organisation(inv.organisation_id)
        today = self.now.date().isoformat()
        late = "Overdue" if inv.is_overdue(today) else "Unpaid"
        status = f"Paid on {inv.fully_paid_on}" if inv.fully_paid_on else late
        text = "\n".join([
            f"INVOICE {inv.number}",
            f"From: {world.home.name}, {world.home.address}",
            f"Issued: {inv.date}    Due: {inv.due_date}",
            *([f"Your reference: {inv.reference}"] if inv.reference else []),
            "", "Bill to:", inv.billing_name, org.name, org.address, inv.billing_email, "",
            _table(world, inv.lines), "",
            f"Subtotal: {_money(world, inv.total)}", f"Tax: {_money(world, 0)}",
            f"Total due: {_money(world, inv.total)}",
            f"Status: {status}", "", f"Questions: {accountant.name} <{accountant.email}>",
        ])
        issued = (self.now.date() - self._day(inv.date)).days
        item = self.file(path, name, text, accountant, (issued, issued),
                         f"{inv.number} for {org.name}, {_money(world, inv.total)}")  # the status changes; the PDF does not
        if self.rng.random() < 0.5:
            self.share(item, inv.billing_email, "viewer", accountant.email)

    def contract(self, path: str, name: str, c: PlannedContract, owner: Person) -> None:
        world = self.world
        org = world.organisation(c.organisation_id)
        signatory = next(p for p in world.people if p.email == c.signatory_email)
        status = f"signed on {c.signed_on}" if c.signed_on else "DRAFT - awaiting customer signature"
        text = "\n".join([
            "MASTER SERVICES AGREEMENT", "", f"Agreement number: {c.number}", f"Effective date: {c.effective}",
            f"Term: {c.months} months, ending {c.ends}", "",
            f'Between {world.home.name}, {world.home.address} ("Provider")',
            f'and {org.name}, {org.address} ("Customer").', "",
            "1. Services. Provider will supply: " + "; ".join(f"{s.description} ({s.sku})" for s in c.services) + ".",
            (f"2. Fees. Customer will pay {_money(world, c.annual_fee)} per year, invoiced {c.billing}, due within "
            f"{c.payment_days} days."),
            "3. Renewal. The agreement renews for 12 months unless either party gives 60 days' written notice.",
            "4. Confidentiality. Each party keeps the other's confidential information secret.",
            "5. Liability. Each party's liability is capped at the fees paid in the previous 12 months.", "",
            f"Signed for {world.home.name}: {owner.name}, {owner.job_title} ({owner.email})",
            f"Signed for {org.name}: {signatory.name}, {signatory.job_title} ({signatory.email})",
            f"Status: {status}",
        ])
        age = (self.now.date() - self._day(c.effective)).days
        item = self.file(path, name, text, owner, (max(1, age - 10), age + 20),
                         f"{c.number}: MSA with {org.name}" + ("" if c.signed_on else " (draft)"))
        for person in world.people_of(org.id)[:2]:
            self.share(item, person.email, "viewer" if c.signed_on else "commenter", owner.email)

    def proposal(self, path: str, name: str, p: PlannedProposal, owner: Person) -> None:
        world = self.world
        org = world.organisation(p.organisation_id)
        contact = next(x for x in world.people if x.email == p.prepared_for_email)
        text = "\n".join([
            f"Proposal {p.number} for {org.name}", f"Prepared by {owner.name} ({owner.email}), {world.home.name}",
            f"Prepared for {contact.name} ({contact.email})", f"Date: {p.date}   Valid until: {p.valid_until}", "",
            f"{org.name} works in {org.industry}; this proposal covers the tools and services below.", "",
            _table(world, p.lines), "", f"Total: {_money(world, p.total)} (excluding tax)",
            "Payment terms: 30 days from invoice.",
        ])
        age = (self.now.date() - self._day(p.date)).days
        valid_days = (self._day(p.valid_until) - self.now.date()).days
        extra = self.link("anyone", valid_days) if self.rng.random() < 0.35 else {}
        described = f"Commercial proposal, total {_money(world, p.total)}"
        item = self.file(path, name, text, owner, (age, age + 5), described, **extra)
        self.share(item, contact.email, self.rng.choice(("viewer", "commenter", "editor")), owner.email)

    def revenue_report(self, path: str, name: str, r: PlannedReport, finance: Person) -> None:
        world = self.world
        rows = "\n".join(f"{world.organisation(org).name},{amount:.2f}" for org, amount in r.rows)
        text = (f"Revenue report {r.month} ({world.currency})\ncustomer,revenue\n{rows}\nTotal,{r.total:.2f}\n"
                f"Prepared by {finance.name} <{finance.email}>")
        age = (self.now.date() - self._day(f"{r.month}-01")).days - 31
        item = self.file(path, name, text, finance, (max(1, age - 5), max(1, age)),
                         f"Monthly revenue for {r.month}, by customer")
        if r in world.plan.reports[:3]:
            for role in ("accountant", "operations manager", "sales lead"):
                self.share(item, self.person(role).email, "editor" if role == "accountant" else "viewer", finance.email)

    @staticmethod
    def _day(iso: str) -> date:
        return date.fromisoformat(iso[:10])

    def client_papers(self, org: Organisation) -> None:
        """What a client's folder holds beside its plan documents: SOW, NDA, call notes, a discarded draft."""
        world, rng = self.world, self.rng
        path = f"Clients/{org.name}"
        owner = world.plan.account_owners[org.id]
        people = world.people_of(org.id)
        contact = people[0]
        if rng.random() < 0.4:
            self.share(self.folders[path], contact.email, "viewer", owner.email)
        if org.id in self.drafted:
            proposal = next(p for p in world.plan.proposals if p.organisation_id == org.id)
            self.file(path, f"{org.name} - Proposal draft v1.docx",
                      f"DRAFT proposal for {org.name}. Superseded by the final proposal.\n\n"
                      f"{_table(world, proposal.lines)}",
                      owner, (60, 120), **self.trashed(rng.randint(1, 25)))
        if rng.random() < 0.6:
            days = sorted(rng.sample(range(-30, 120), 3))
            steps = sorted(rng.sample(_SOW_STEPS, 3), key=_SOW_STEPS.index)
            fee = rng.choice((2400.0, 5200.0, 7800.0, 12500.0, 18000.0))
            self.file(path, f"{org.name} - Statement of Work.pdf", "\n".join([
                f"STATEMENT OF WORK under the Master Services Agreement with {org.name}",
                f"Project lead ({world.home.name}): {owner.name} ({owner.email})",
                f"Customer lead: {contact.name} ({contact.email})", "",
                *(f"- Milestone {i + 1}: {step} by {self.date(day)}" for i, (step, day) in enumerate(zip(steps, days))),
                "", f"Fixed fee: {_money(world, fee)}, 50% on signature and 50% on completion.",
            ]), owner, (10, 200))
        if rng.random() < 0.5:
            ops = self.person("operations manager")
            nda = self.file(path, f"{org.name} - Mutual NDA.pdf",
                            f"MUTUAL NON-DISCLOSURE AGREEMENT between {world.home.name} and {org.name}, "
                            f"{org.address}.\n"
                            f"Effective {self.date(-rng.randint(200, 700))} for 3 years.\n"
                            f"Signed: {ops.name} for {world.home.name}; {people[-1].name} for {org.name}.",
                            world.user, (200, 700))
            self.share(nda, people[-1].email, "viewer", world.user.email)
        finance = self.person("finance lead")
        services = next(c for c in world.plan.contracts if c.organisation_id == org.id).services
        for _ in range(rng.randint(1, 3)):
            day = -rng.randint(1, 150)
            ours = rng.sample(world.team, 2)
            theirs = people[: rng.randint(1, len(people))]
            kind = rng.choice(_CALL_KINDS)
            if kind == "Kickoff" and not self.signed_before(org.id, day):  # a kickoff follows a deal won
                kind = "Quarterly review"
            notes = self.file(path, f"{org.name} - {kind} call {self.date(day)}.md", "\n".join([
                f"# {org.name} - {kind} call, {self.date(day)}", "",
                "Attendees: " + ", ".join(f"{p.name} <{p.email}>" for p in [*ours, *theirs]), "",
                "## Discussion",
                f"- {org.name} is happy with {rng.choice(world.products).name}; asked about {rng.choice(_ASKS)}.",
                f"- Open invoice questions go to {finance.name} ({finance.email}).", "",
                "## Action items",
                f"- [ ] {ours[0].name} to send the updated pricing to {theirs[0].email} by {self.date(day + 7)}",
                f"- [ ] {theirs[0].name} to confirm the {rng.choice(services).description} rollout date",
            ]), ours[0], (-day, -day + 1))
            self.share(notes, ours[1].email, "editor", ours[0].email)

    def signed_before(self, organisation_id: str, day: int) -> bool:
        """Whether the organisation won a deal (the plan's) in the six weeks before ``day`` (days from now)."""
        when = self.world.now_dt.date() + timedelta(days=day)
        return any(d.organisation_id == organisation_id and d.stage == "won"
                   and timedelta(0) <= when - date.fromisoformat(d.close_date) <= timedelta(weeks=6)
                   for d in commerce_plan(self.world).deals)

    def series(self) -> None:
        """Documents that come in runs: receipts, notes, expenses, exports, orders."""
        world, rng, facts = self.world, self.rng, self.facts
        team, orgs = list(world.team), list(world.organisations[1:])
        for i in range(10):
            self.file("Finance/Receipts", f"Receipt {self.date(-rng.randint(3, 200))} #{1000 + i}.jpg", None,
                      rng.choice(team), (3, 200), "Scanned receipt", rng.randint(180_000, 2_400_000))
        for quarter, months in self.quarters():
            revenue = round(sum(r.total for r in months), 2)
            by_org: dict[str, float] = {}
            for report in months:
                for org_id, amount in report.rows:
                    by_org[org_id] = by_org.get(org_id, 0.0) + amount
            top = sorted(by_org, key=lambda o: -by_org[o])[:3]
            self.file("Finance/Reports", f"Quarterly report {quarter}.docx",
                      f"Quarterly report {quarter}\nRevenue invoiced: {_money(world, revenue)}\n"
                      f"Top customers: {', '.join(world.organisation(o).name for o in top)}\n"
                      f"Author: {facts['finance_lead']}",
                      self.person("finance lead"), (20, 40))
        budget = "\n".join(f"{label},{round(rng.uniform(5_000, 90_000), 2):.2f}" for label in
                           ("Salaries", "Software", "Travel", "Office", "Marketing", "Hardware", "Training"))
        self.file("Finance/Reports", f"Budget {facts['year']}.xlsx",
                  f"Budget {facts['year']} ({world.currency})\ncategory,annual_budget\n{budget}",
                  self.person("finance lead"), (60, 120), "Annual budget by category")
        for person in rng.sample(team, 4):
            spent = rng.sample(("Taxi", "Hotel", "Flight", "Client lunch", "Train", "Conference"), 3)
            lines = "\n".join(
                f"{self.date(-rng.randint(5, 60))},{what},{round(rng.uniform(12, 900), 2):.2f}" for what in spent
            )
            self.file("Finance/Reports", f"Expense report - {person.name} - {self.date(-3)[:7]}.xlsx",
                      f"Expense report for {person.name} <{person.email}>\ndate,item,amount\n{lines}", person, (2, 30))
        sales = self.person("sales lead")
        self.file("Sales", f"Price list {facts['year']}.csv", "sku,name,category,unit_price,currency\n" + "\n".join(
            f"{p.sku},{p.name},{p.category},{p.unit_price:.2f},{p.currency}" for p in world.products),
            sales, (20, 90), "Current list prices for every product", **self.link("organization"))
        self.file("Sales", "Customer contacts.csv", "name,email,phone,company,job_title,city\n" + "\n".join(
            f"{p.name},{p.email},{p.phone},{world.organisation(p.organisation_id).name},\"{p.job_title}\",{p.city}"
            for p in world.customers), sales, (5, 60), "Export of customer contacts")
        for q in range(1, 4):
            self.file("Sales", f"Pipeline review {facts['year']}-Q{q}.md",
                      f"# Pipeline review {facts['year']} Q{q}\n\nOwner: {sales.name}\n\n" + "\n".join(
                          f"- {o.name}: {rng.choice(('proposal sent', 'negotiation', 'verbal yes', 'at risk'))}, "
                          f"est. {_money(world, round(rng.uniform(3_000, 60_000), 2))}" for o in rng.sample(orgs, 4)),
                      sales, (10 + 90 * (3 - q), 30 + 90 * (3 - q)))
        for week in range(1, 25):
            day = -7 * week + rng.randint(0, 2)
            attendees = rng.sample(team, rng.randint(3, 6))
            org = rng.choice(orgs)
            doc = self.file("Meeting Notes", f"Team sync {self.date(day)}.md", "\n".join([
                f"# Team sync {self.date(day)}", "Attendees: " + ", ".join(p.name for p in attendees), "", "## Topics",
                *(f"- {t.format(q=rng.randint(1, 4))}" for t in rng.sample(_MEETING_TOPICS, 3)),
                f"- Account update: {org.name} ({org.industry})", "", "## Action items",
                *(f"- [ ] {p.name} ({p.email}): {rng.choice(_ACTIONS)} {org.name} "
                  f"by {self.date(day + rng.randint(2, 10))}" for p in attendees[1:3]),
            ]), attendees[0], (-day, -day + 1))
            for person in attendees[1:]:
                if rng.random() < 0.5:
                    self.share(doc, person.email, "editor", attendees[0].email)
        place = rng.choice(world.places)
        self.file("Meeting Notes", f"All-hands {self.date(-20)}.md", f"# All-hands {self.date(-20)}\n"
                  f"Location: {place.name}, {place.address}\n" + "\n".join(
                      f"- {p.name} ({p.job_title}) presented" for p in team[:5]), world.user, (20, 21))
        self.file("HR", "Team directory.csv", "name,email,phone,role\n" + "\n".join(
            f"{p.name},{p.email},{p.phone},{p.job_title}" for p in team), self.person("office manager"), (10, 90))
        lead = self.person("engineering lead")
        for system, steps in _RUNBOOKS:
            numbered = "\n".join(f"{n}. {step}" for n, step in enumerate(steps, start=1))
            self.file("Engineering", f"Runbook - {system}.md",
                      f"# Runbook: {system}\n\nOwner: {lead.name} <{lead.email}>\n\n{numbered}", lead, (30, 400))
        for feature, role, status in _API_DESIGNS:
            self.file("Engineering", f"API design - {feature}.md", f"# API design: {feature}\n\nAuthor: {lead.name}\n"
                      f"Reviewers: {facts['product_manager']}\nStatus: {status}", self.person(role), (10, 150))
        for _ in range(3):
            day = -rng.randint(5, 200)
            self.file("Engineering", f"Incident postmortem {self.date(day)}.md",
                      f"# Incident {self.date(day)}\n\nImpact: {rng.choice(orgs).name} could not download invoices for "
                      f"{rng.randint(15, 180)} minutes.\nRoot cause: expired certificate.\n"
                      f"Follow-up owner: {lead.name}.",
                      lead, (-day, -day + 3))
        pm = self.person("product manager")
        for org in rng.sample(orgs, 2):
            person = world.people_of(org.id)[0]
            study = self.file("Marketing", f"Case study - {org.name}.docx",
                              f"How {org.name} ({org.industry}) saved time with {world.home.name}.\n"
                              f'"We rolled out in weeks." - {person.name}, {person.job_title}', pm, (20, 200),
                              **(self.link("anyone", 60) if rng.random() < 0.5 else {}))
            self.share(study, person.email, "commenter", pm.email)
        for back in range(1, 4):
            month = self.date(-30 * back)[:7]
            self.file("Marketing", f"Newsletter draft - {month}.docx",
                      f"Newsletter {month}: product news, {rng.choice(world.products).name} now available.",
                      # the oldest draft had a review link that has since expired
                      pm, (30 * back, 30 * back + 5), **(self.link("anyone", -60) if back == 3 else {}))
        self.file("Marketing", "Webinar attendees.csv", "name,email,company\n" + "\n".join(
            f"{p.name},{p.email},{world.organisation(p.organisation_id).name}"
            for p in rng.sample(world.customers, 12)),
            pm, (10, 40))
        office = self.person("office manager")
        supplies = [p for p in world.products if p.category in ("supplies", "pantry", "hardware", "furniture")]
        for back in range(1, 5):
            lines = [(p, rng.randint(1, 12)) for p in rng.sample(supplies, 4)]
            self.file("Operations", f"Office supplies order {self.date(-30 * back)[:7]}.csv",
                      "sku,item,quantity,unit_price,amount\n" + "\n".join(
                          f"{p.sku},{p.name},{q},{p.unit_price:.2f},{p.unit_price * q:.2f}" for p, q in lines)
                      + f"\nTOTAL,,,,{sum(p.unit_price * q for p, q in lines):.2f}", office, (30 * back, 30 * back + 2))
        venue = next((p for p in world.places if p.kind == "conference venue"), world.places[0])
        self.file("Operations", f"Team offsite plan {facts['year']}.md",
                  f"# Team offsite\n\nVenue: {venue.name}, {venue.address}\nBudget: {_money(world, 5200)}\n"
                  f"Organiser: {office.name} <{office.email}>", office, (5, 40))
        vendors = [world.organisation(o) for o in sorted(world.plan.suppliers)]
        self.file("Operations", "Vendor list.csv", "vendor,contact,email,phone\n" + "\n".join(
            f"{o.name},{world.plan.billing_contacts[o.id].name},{world.plan.billing_contacts[o.id].email},{o.phone}"
            for o in vendors), world.user, (30, 200), "Suppliers that send us bills")

    def quarters(self) -> list[tuple[str, list[PlannedReport]]]:
        """The calendar quarters whose three months all have a revenue report, newest first."""
        by_quarter: dict[str, list[PlannedReport]] = {}
        for report in self.world.plan.reports:
            year, month = report.month.split("-")
            by_quarter.setdefault(f"Q{(int(month) - 1) // 3 + 1} {year}", []).append(report)
        return [(q, months) for q, months in by_quarter.items() if len(months) == 3]

    def archive(self) -> None:
        world, last_year = self.world, self.facts["last_year"]
        sales = self.person("sales lead")
        self.file("Archive", f"Price list {last_year}.csv", "sku,name,unit_price\n" + "\n".join(
            f"{p.sku},{p.name},{p.unit_price * 0.95:.2f}" for p in world.products), sales, (380, 420))
        old = self.folder("Archive/Old proposals", sales, 500)
        self.folders["Archive/Old proposals"] = old = Folder(**{**_fields(old), **self.trashed(12)})
        for org in self.rng.sample(list(world.organisations[1:]), 3):
            # Trashed along with the folder: restoring "Old proposals" brings them back.
            self.file("Archive/Old proposals", f"{org.name} - Proposal {last_year}.docx",
                      f"Proposal for {org.name} ({last_year}).", sales, (380, 480),
                      trashed=True, trashed_at=old.trashed_at)
        self.file("Archive", "Untitled document.txt", "", world.user, (30, 60), size=0, **self.trashed(3))

    def save(self) -> None:
        ctx = self.ctx
        # Shared links get their URL in id order, once every id is known.
        files = [File(**{**_fields(f), "shared_link_url": _link_url(ctx, f.id)}) if f.shared_link_url else f
                 for f in self.files]
        ctx.insert_many(list(self.folders.values()))
        ctx.insert_many(files)
        ctx.insert_many(self.texts)
        ctx.insert_many(self.shares)


@service.seeder
def seed(ctx: ToolContext) -> None:
    drive = _Drive(ctx)
    drive.write()
    drive.save()


# -- browsing and search -------------------------------------------------------------------------


@service.tool("read", intent="find", phrases=("list what is in {folder_id}", "look through the folder {folder_id}"))
def list_folder_items(
    ctx: ToolContext,
    folder_id: FolderId | None = None,
    order_by: FileOrder = "name",
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[File]:
    """List what a folder holds (subfolders first, then files). Without folder_id, lists the root folder.

    Items in the trash are not listed (see list_trash), except when the folder itself is in the trash.

    Args:
        folder_id: The folder to list, e.g. folder_0002; omit for the root folder ("All Files").
        order_by: name (A-Z, default), modified_at or created_at (newest first), or size (largest first).
        limit: Maximum number of items to return (1-100).
        cursor: next_cursor from a previous page.
    """
    folder = _folder(ctx, folder_id)
    items = _sorted(_children(ctx, folder, live=not folder.trashed), order_by)
    items.sort(key=lambda i: 0 if isinstance(i, Folder) else 1)
    page = page_of(items, limit, cursor)
    return _as_items(page)


@service.tool(
    "read",
    intent="find",
    phrases=("look for {query} in the drive", "find the files about {company_name}"),
)
def search_files(
    ctx: ToolContext,
    query: str | None = None,
    name: str | None = None,
    company_name: CompanyName | None = None,
    person_name: PersonName | None = None,
    owner_email: EmailAddress | None = None,
    shared_with_email: EmailAddress | None = None,
    mime_type: str | None = None,
    folder_id: FolderId | None = None,
    modified_after: Date | None = None,
    modified_before: Date | None = None,
    in_trash: bool = False,
    order_by: FileOrder = "modified_at",
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[File]:
    """Search files (not folders) by words in their name or text, owner, who they are shared with, type, folder or date.

    All filters combine (AND). Newest first by default.

    Args:
        query: Words that must all appear in the file's name or text content (case-insensitive), e.g. "invoice overdue".
        name: Text the file name must contain (case-insensitive), e.g. "Proposal".
        company_name: Only files whose name or text mentions this company, e.g. a customer from the CRM.
        person_name: Only files whose name or text mentions this person's full name, e.g. a CRM contact.
        owner_email: Only files owned by this team member.
        shared_with_email: Only files shared directly with this person.
        mime_type: Only files of this type, e.g. application/pdf or text/csv; "image/*" matches every image type.
        folder_id: Only files inside this folder or any of its subfolders.
        modified_after: Only files modified on or after this date (YYYY-MM-DD).
        modified_before: Only files modified before this date (YYYY-MM-DD).
        in_trash: Search the trash instead of the live files.
        order_by: modified_at (newest first, default), created_at (newest first), name (A-Z) or size (largest first).
        limit: Maximum number of files to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(File).where(trashed=in_trash).contains("name", name)
    for word in (check_search_text(query).split() if query else ()):
        _where_text(q, word)
    for mentioned in (company_name, person_name):
        if mentioned and mentioned.strip():
            _where_text(q, check_search_text(mentioned))
    q.filter(owner_email=owner_email.lower() if owner_email else None)
    if shared_with_email:
        q.where_in("id", [s.item_id for s in ctx.query(Share).where(email=shared_with_email.lower()).all()])
    if mime_type and mime_type.strip():
        mime = mime_type.strip().lower()
        if mime.endswith("/*"):
            q.where_sql("substr(mime_type, 1, ?) = ?", len(mime) - 1, mime[:-1])
        else:
            q.where(mime_type=mime)
    if folder_id is not None:
        folder = _folder(ctx, folder_id)
        q.where_in("parent_id", [folder.id, *_descendants(ctx, folder.id)[0]])
    q.compare("modified_at", ">=", f"{modified_after}T00:00:00Z" if modified_after else None)
    q.compare("modified_at", "<", f"{modified_before}T00:00:00Z" if modified_before else None)
    if order_by == "name":
        page: Page[Any] = page_of(_sorted(q.all(), "name"), limit, cursor)
    else:
        page = q.order_by(f"-{order_by}").page(limit, cursor)
    return _as_items(page)


@service.tool("read", intent="find", phrases=("find the {query} folder on the drive", "look for the folder of {query}"))
def search_folders(
    ctx: ToolContext,
    query: str | None = None,
    parent_id: FolderId | None = None,
    include_trashed: bool = False,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Folder]:
    """Find folders by name, e.g. a client's folder by the company's name.

    Args:
        query: Text the folder name must contain (case-insensitive), e.g. a company name or "Invoices".
        parent_id: Only folders directly inside this folder.
        include_trashed: Also return folders that are in the trash.
        limit: Maximum number of folders to return (1-100).
        cursor: next_cursor from a previous page.
    """
    q = ctx.query(Folder).contains("name", query)
    if parent_id is not None:
        q.where(parent_id=_folder(ctx, parent_id).id)
    if not include_trashed:
        q.where(trashed=False)
    page: Page[Any] = page_of(_sorted(q.all(), "name"), limit, cursor)
    return page


@service.tool("read", intent="get", phrases=("check the details of {file_id}", "see who owns {file_id}"))
def get_file(ctx: ToolContext, file_id: FileId) -> File:
    """Get a file's or folder's metadata: name, path, type, size, owner, dates, version, who it is shared with.

    Args:
        file_id: The file's (or folder's) id, e.g. file_0042.
    """
    return _as_item(_item(ctx, file_id))


@service.tool("read", intent="get", phrases=("open {file_id} and read it", "read what {file_id} says"))
def download_file(ctx: ToolContext, file_id: FileId) -> FileContentOut:
    """Read a file's text content (for PDFs and Office documents, their extracted text). Images have no text.

    Args:
        file_id: The file to read, e.g. file_0042.
    """
    item = _file(ctx, file_id)
    content = _text(ctx, item.id)
    if content is None:
        raise ToolError.invalid_argument(
            f"File {file_id} ({item.name!r}, {item.mime_type}) has no text content; use get_file for its metadata."
        )
    return FileContentOut(
        id=item.id, name=item.name, path=_paths(ctx, [item])[0], mime_type=item.mime_type or "text/plain",
        size=item.size, version=item.version, modified_at=item.modified_at, content=content,
    )


@service.tool("read", intent="find", phrases=("find the file behind the link {url}", "open the shared link {url}"))
def find_file_by_shared_link(ctx: ToolContext, url: URL) -> File:
    """Find the file or folder a shared link points to, e.g. a link someone pasted into an email or chat.

    Args:
        url: The shared link, e.g. https://files.example/s/3f9a1c0d2b7e4a61.
    """
    wanted = url.strip().rstrip("/")
    item: Item | None = ctx.find(File, shared_link_url=wanted) or ctx.find(Folder, shared_link_url=wanted)
    if item is None or item.trashed:
        raise ToolError.not_found(
            "shared link",
            url,
            "It may have been removed, or its file trashed. Ask the sender for a new link, or use search_files.",
        )
    if item.shared_link_expires_on is not None and item.shared_link_expires_on < ctx.now_iso[:10]:
        raise ToolError.invalid_state(
            f"The shared link {url} expired on {item.shared_link_expires_on}; "
            f"the owner ({item.owner_email}) can renew it with create_shared_link."
        )
    return _as_item(item)


@service.tool("read", intent="find", phrases=("check what is in the trash",))
def list_trash(ctx: ToolContext, limit: Limit = 20, cursor: Cursor = None) -> Page[File]:
    """List the files and folders in the trash, most recently trashed first.

    Items trashed along with their folder are not listed separately: restore the folder.

    Args:
        limit: Maximum number of items to return (1-100).
        cursor: next_cursor from a previous page.
    """
    items: list[Item] = [*ctx.query(Folder).where(explicitly_trashed=True).all(),
                         *ctx.query(File).where(explicitly_trashed=True).all()]
    items.sort(key=lambda i: i.id)
    items.sort(key=lambda i: i.trashed_at or "", reverse=True)
    page = page_of(items, limit, cursor)
    return _as_items(page)


@service.tool("read", intent="find", phrases=("check who has access to {file_id}", "see who {file_id} is shared with"))
def list_shares(ctx: ToolContext, file_id: FileId, limit: Limit = 20, cursor: Cursor = None) -> Page[Share]:
    """List the people a file or folder is shared with, and their roles.

    Args:
        file_id: The file or folder, e.g. file_0042.
        limit: Maximum number of shares to return (1-100).
        cursor: next_cursor from a previous page.
    """
    item = _item(ctx, file_id)
    page = ctx.query(Share).where(item_id=item.id).order_by("email").page(limit, cursor)
    return page


# -- creating and editing ------------------------------------------------------------------------


@service.tool(
    "write",
    intent="create",
    phrases=("save a file called {name} saying {content}", "put a note named {name} in {folder_id}"),
)
def create_file(
    ctx: ToolContext,
    name: FileName,
    content: Text,
    folder_id: FolderId | None = None,
    mime_type: TextMimeType | None = None,
    description: Text | None = None,
) -> File:
    """Upload a new text file (notes, CSV, Markdown, JSON...) into a folder. You become its owner.

    The name must be free in that folder. Binary types (PDF, Office, images) cannot be created from text.

    Args:
        name: The file name with its extension, e.g. "Call notes 2025-01-14.md".
        content: The file's text.
        folder_id: The folder to put it in; omit for the root folder.
        mime_type: The type; by default it follows the extension (.txt, .md, .csv, .json, .html), else text/plain.
        description: A short description shown with the file.
    """
    name = _clean_name(name)
    folder = _open_folder(ctx, folder_id, "add files to")
    guessed = _mime_for_name(name)
    if guessed is not None and guessed not in TEXT_MIME_TYPES:
        raise ToolError.invalid_argument(
            f"{name!r} names a {guessed} file, which cannot be created from text; "
            "use a text extension such as .txt, .md, .csv or .json."
        )
    _check_name_free(ctx, folder, name)
    me = ctx.world.user
    item = ctx.insert(
        File(
            id=ctx.new_id("file"), name=name, parent_id=folder.id, mime_type=mime_type or guessed or "text/plain",
            size=len(content.encode()),
            description=description.strip() if description and description.strip() else None,
            owner_email=me.email, owner_name=me.name, created_at=ctx.now_iso, modified_at=ctx.now_iso,
            modified_by_email=me.email,
        )
    )
    ctx.insert(FileText(id=item.id, content=content))
    return _as_item(item)


@service.tool(
    "write",
    intent="create",
    phrases=("make a folder called {name}", "create a folder {name} inside {parent_id}"),
)
def create_folder(ctx: ToolContext, name: FileName, parent_id: FolderId | None = None) -> Folder:
    """Create an empty folder. The name must be free in the parent folder.

    Args:
        name: The new folder's name, e.g. "Contracts 2025".
        parent_id: The folder to create it in; omit for the root folder.
    """
    name = _clean_name(name)
    parent = _open_folder(ctx, parent_id, "add folders to")
    _check_name_free(ctx, parent, name)
    me = ctx.world.user
    folder = Folder(
        id=ctx.new_id("folder"), name=name, parent_id=parent.id, owner_email=me.email, owner_name=me.name,
        created_at=ctx.now_iso, modified_at=ctx.now_iso, modified_by_email=me.email,
    )
    return ctx.insert(folder)


@service.tool("write", intent="update", phrases=("rewrite {file_id} to say {content}", "update the text of {file_id}"))
def update_file_content(ctx: ToolContext, file_id: FileId, content: Text) -> File:
    """Replace a text file's content with new text (a new version). PDFs, Office files and images cannot be edited here.

    Args:
        file_id: The text file to overwrite.
        content: The complete new text of the file.
    """
    item = _file(ctx, file_id)
    _not_trashed(item, "edited")
    if item.mime_type not in TEXT_MIME_TYPES:
        raise ToolError.invalid_argument(
            f"File {file_id} is {item.mime_type}; only text files ({', '.join(TEXT_MIME_TYPES)}) can be edited. "
            "Create a new text file with create_file instead."
        )
    text = ctx.fetch(FileText, item.id)
    if text is None:
        ctx.insert(FileText(id=item.id, content=content))
    else:
        ctx.update(text, content=content)
    return _as_item(_touched(ctx, item, size=len(content.encode()), version=item.version + 1))


@service.tool(
    "write",
    intent="update",
    phrases=("rename {file_id} to {new_name}", "call {file_id} {new_name} from now on"),
)
def rename_file(ctx: ToolContext, file_id: FileId, new_name: FileName) -> File:
    """Rename a file or folder. The new name must be free in its folder.

    Args:
        file_id: The file or folder to rename.
        new_name: The new name (keep the extension for files), e.g. "Acme - Proposal final.docx".
    """
    item = _item(ctx, file_id)
    _not_root(item, "renamed")
    _not_trashed(item, "renamed")
    new_name = _clean_name(new_name)
    if new_name == item.name:
        raise ToolError.invalid_argument(f"{_kind(item).capitalize()} {file_id} is already named {new_name!r}.")
    _check_name_free(ctx, _folder(ctx, item.parent_id), new_name, exclude_id=item.id)
    return _as_item(_touched(ctx, item, name=new_name))


@service.tool("write", intent="update", phrases=("move {file_id} into {folder_id}", "file {file_id} under {folder_id}"))
def move_file(ctx: ToolContext, file_id: FileId, folder_id: FolderId) -> File:
    """Move a file or folder (with everything in it) into another folder.

    Args:
        file_id: The file or folder to move.
        folder_id: The destination folder; it must not be the item itself or inside it.
    """
    item = _item(ctx, file_id)
    _not_root(item, "moved")
    _not_trashed(item, "moved")
    target = _open_folder(ctx, folder_id, "move items into")
    if target.id == item.id or (isinstance(item, Folder) and target.id in _descendants(ctx, item.id)[0]):
        raise ToolError.invalid_argument(f"Folder {item.id} cannot be moved into itself or one of its own subfolders.")
    if item.parent_id == target.id:
        raise ToolError.invalid_state(
            f"{_kind(item).capitalize()} {item.id} is already in folder {target.id} ({target.name!r})."
        )
    _check_name_free(ctx, target, item.name)
    return _as_item(_touched(ctx, item, parent_id=target.id))


@service.tool("write", intent="create", phrases=("make a copy of {file_id}", "copy {file_id} into {folder_id}"))
def copy_file(
    ctx: ToolContext, file_id: FileId, folder_id: FolderId | None = None, new_name: FileName | None = None
) -> File:
    """Copy a file (folders cannot be copied). The copy is yours, with no shares and no shared link.

    Args:
        file_id: The file to copy.
        folder_id: The folder for the copy; omit to copy into the same folder.
        new_name: The copy's name; by default the same name, or "Copy of <name>" in the same folder.
    """
    item = _item(ctx, file_id)
    if isinstance(item, Folder):
        raise ToolError.invalid_argument(f"{file_id} is a folder; folders cannot be copied. Copy its files one by one.")
    _not_trashed(item, "copied")
    target = _open_folder(ctx, folder_id if folder_id is not None else item.parent_id, "copy files into")
    if new_name is not None:
        name = _clean_name(new_name)
    else:
        name = f"Copy of {item.name}" if target.id == item.parent_id else item.name
    _check_name_free(ctx, target, name)
    me = ctx.world.user
    copy = ctx.insert(
        File(
            id=ctx.new_id("file"), name=name, parent_id=target.id, mime_type=item.mime_type, size=item.size,
            description=item.description, owner_email=me.email, owner_name=me.name, created_at=ctx.now_iso,
            modified_at=ctx.now_iso, modified_by_email=me.email,
        )
    )
    content = _text(ctx, item.id)
    if content is not None:
        ctx.insert(FileText(id=copy.id, content=content))
    return _as_item(copy)


# -- sharing -------------------------------------------------------------------------------------


@service.tool(
    "write",
    intent="share",
    phrases=("share {file_id} with {email}", "give {email} {role} access to {file_id}"),
)
def share_file(ctx: ToolContext, file_id: FileId, email: EmailAddress, role: ShareRole = "viewer") -> Share:
    """Share a file or folder with a person by email as viewer, commenter or editor.

    If the person already has access with another role, their role changes. You cannot share with
    yourself or with the owner, nor share an item that is in the trash.

    Args:
        file_id: The file or folder to share.
        email: The person's email address, e.g. a customer contact from the CRM.
        role: viewer (read only, default), commenter (read and comment) or editor (read and change).
    """
    item = _item(ctx, file_id)
    _not_trashed(item, "shared")
    email = email.strip().lower()
    me = ctx.world.user.email
    if email == me:
        raise ToolError.invalid_argument("You cannot share a file with yourself; give another person's email.")
    if email == item.owner_email:
        raise ToolError.invalid_argument(f"{email} owns {item.name!r} and already has full access.")
    share = ctx.find(Share, item_id=item.id, email=email)
    if share is not None:
        if share.role == role:
            raise ToolError.conflict(f"{email} already has {role} access to {item.name!r} (share {share.id}).")
        share = ctx.update(share, role=role, updated_at=ctx.now_iso)
    else:
        share = ctx.insert(
            Share(id=ctx.new_id("share"), item_id=item.id, email=email, person_name=_name_of(ctx.world, email),
                  role=role, shared_by_email=me, created_at=ctx.now_iso, updated_at=ctx.now_iso)
        )
    return share


@service.tool(
    "write",
    intent="remove",
    phrases=("take away the access of {share_id}", "stop sharing through {share_id}"),
)
def remove_share(ctx: ToolContext, share_id: ShareId) -> Share:
    """Stop sharing: remove one person's access to a file or folder. Returns the removed share.

    Args:
        share_id: The share to remove, from list_shares, e.g. share_0012.
    """
    share = ctx.get(Share, share_id, "share", "Use list_shares on the file to find share ids.")
    ctx.delete(share)
    return share  # presented after the call: its file is still there


@service.tool(
    "write",
    intent="share",
    phrases=("make a shared link for {file_id}", "get a link to {file_id} that works until {expires_on}"),
)
def create_shared_link(
    ctx: ToolContext, file_id: FileId, access: LinkAccess = "anyone", expires_on: Date | None = None
) -> SharedLinkOut:
    """Create a shared link (URL) to a file or folder, or change the settings of its existing link (the URL stays).

    Args:
        file_id: The file or folder to link to.
        access: anyone (anyone with the link, default) or organization (only people at our company).
        expires_on: The last day the link works (YYYY-MM-DD), in the future; omit for a link that never expires.
    """
    item = _item(ctx, file_id)
    _not_root(item, "shared by link")
    _not_trashed(item, "shared by link")
    if expires_on is not None and expires_on <= ctx.now_iso[:10]:
        raise ToolError.invalid_argument(f"expires_on must be after today ({ctx.now_iso[:10]}); got {expires_on}.")
    url = item.shared_link_url or _link_url(ctx, item.id)
    ctx.update(item, shared_link_url=url, shared_link_access=access, shared_link_expires_on=expires_on)
    return SharedLinkOut(file_id=item.id, file_name=item.name, url=url, access=access, expires_on=expires_on)


@service.tool(
    "write",
    intent="remove",
    phrases=("remove the shared link of {file_id}", "turn off the link to {file_id}"),
)
def remove_shared_link(ctx: ToolContext, file_id: FileId) -> File:
    """Remove a file's or folder's shared link, so the URL stops working.

    Args:
        file_id: The file or folder whose link to remove.
    """
    item = _item(ctx, file_id)
    if item.shared_link_url is None:
        raise ToolError.invalid_state(f"{_kind(item).capitalize()} {file_id} ({item.name!r}) has no shared link.")
    return _as_item(ctx.update(item, shared_link_url=None, shared_link_access=None, shared_link_expires_on=None))


# -- trash ---------------------------------------------------------------------------------------


def _load(ctx: ToolContext, folder_ids: Iterable[str], file_ids: Iterable[str]) -> list[Item]:
    return [*ctx.fetch_many(Folder, folder_ids).values(), *ctx.fetch_many(File, file_ids).values()]


@service.tool("write", intent="delete", phrases=("trash {file_id}", "move {file_id} to the trash"))
def trash_file(ctx: ToolContext, file_id: FileId) -> File:
    """Move a file or folder to the trash; a folder's contents go with it. Restore it with restore_file.

    Args:
        file_id: The file or folder to trash.
    """
    item = _item(ctx, file_id)
    _not_root(item, "trashed")
    if item.trashed:
        raise ToolError.invalid_state(f"{_kind(item).capitalize()} {file_id} ({item.name!r}) is already in the trash.")
    item = ctx.update(item, trashed=True, explicitly_trashed=True, trashed_at=ctx.now_iso)
    if isinstance(item, Folder):
        for child in _load(ctx, *_descendants(ctx, item.id)):
            if not child.trashed:  # items trashed earlier keep their own trash entry
                ctx.update(child, trashed=True, explicitly_trashed=False, trashed_at=ctx.now_iso)
    return _as_item(item)


def _restore_contents(ctx: ToolContext, folder: Folder) -> None:
    """Bring back what was trashed along with a folder; items trashed on their own stay in the trash."""
    for child in _children(ctx, folder, live=False):
        if child.trashed and not child.explicitly_trashed:
            ctx.update(child, trashed=False, trashed_at=None)
            if isinstance(child, Folder):
                _restore_contents(ctx, child)


@service.tool(
    "write",
    intent="restore",
    phrases=("restore {file_id} from the trash", "bring {file_id} back into {folder_id}"),
)
def restore_file(ctx: ToolContext, file_id: FileId, folder_id: FolderId | None = None) -> File:
    """Restore a file or folder from the trash, with everything that was trashed along with it.

    It goes back to its folder; if that folder is itself in the trash (or you want it elsewhere), pass folder_id.

    Args:
        file_id: The trashed file or folder, from list_trash.
        folder_id: Restore into this folder instead of the original one.
    """
    item = _item(ctx, file_id)
    if not item.trashed:
        raise ToolError.invalid_state(f"{_kind(item).capitalize()} {file_id} ({item.name!r}) is not in the trash.")
    if folder_id is None:
        target = _folder(ctx, item.parent_id)
        if target.trashed:
            raise ToolError.invalid_state(
                f"{item.name!r} was in folder {target.id} ({target.name!r}), which is in the trash. "
                "Restore that folder, or pass folder_id to restore into another folder."
            )
    else:
        target = _open_folder(ctx, folder_id, "restore items into")
        if isinstance(item, Folder) and (target.id == item.id or target.id in _descendants(ctx, item.id)[0]):
            raise ToolError.invalid_argument(f"Folder {item.id} cannot be restored into itself or its own subfolders.")
    _check_name_free(ctx, target, item.name)
    item = ctx.update(item, parent_id=target.id, trashed=False, explicitly_trashed=False, trashed_at=None)
    if isinstance(item, Folder):
        _restore_contents(ctx, item)
    return _as_item(item)


@service.tool("write", intent="delete", phrases=("delete {file_id} for good", "permanently delete {file_id}"))
def delete_file_permanently(ctx: ToolContext, file_id: FileId) -> DeletedOut:
    """Permanently delete a trashed file or folder, with a folder's contents and all their shares. Cannot be undone.

    Args:
        file_id: The trashed file or folder to delete; trash it first with trash_file.
    """
    item = _item(ctx, file_id)
    if not item.trashed:
        raise ToolError.invalid_state(
            f"{_kind(item).capitalize()} {file_id} ({item.name!r}) is not in the trash; "
            "move it there with trash_file first."
        )
    folders, files = _descendants(ctx, item.id) if isinstance(item, Folder) else ([], [])
    ids = [item.id, *folders, *files]
    shares = ctx.query(Share).where_in("item_id", ids).all()
    for share in shares:
        ctx.delete(share)
    for text in ctx.fetch_many(FileText, [*files, item.id]).values():
        ctx.delete(text)
    # Files first, then folders deepest first, so no row ever points at a deleted folder.
    below = ctx.fetch_many(Folder, folders)
    for record in [*ctx.fetch_many(File, files).values(), *(below[f] for f in reversed(folders)), item]:
        ctx.delete(record)
    return DeletedOut(id=item.id, type=_kind(item), name=item.name, deleted_items=len(ids), removed_shares=len(shares))


# -- world events (what arrives from outside; the composer plants task triggers with them) ---------


@service.event("document_added")
def document_added(ctx: ToolContext, name: str, content: str, folder: str, owner_email: str, days_ago: float = 30.0) -> str:
    """A colleague put a document in a top-level folder (made if missing); returns the file id."""
    root = _root(ctx)
    at = ctx.days_from_now(-days_ago)
    owner = next((p for p in ctx.world.people if p.email == owner_email), ctx.world.user)
    parent = ctx.find(Folder, parent_id=root.id, name=folder) or ctx.insert(
        Folder(id=ctx.new_id("folder"), name=folder, parent_id=root.id, owner_email=owner.email, owner_name=owner.name,
               created_at=at, modified_at=at, modified_by_email=owner.email)
    )
    item = ctx.insert(
        File(id=ctx.new_id("file"), name=name, parent_id=parent.id, mime_type="text/markdown", size=len(content.encode()),
             owner_email=owner.email, owner_name=owner.name, created_at=at, modified_at=at, modified_by_email=owner.email)
    )
    ctx.insert(FileText(id=item.id, content=content))
    return item.id
