"""Files: the team's cloud drive of folders and documents (modelled on Box and Google Drive).

One table holds files and folders, as in Google Drive: a folder is an item whose ``type`` is
"folder", and every tool that takes a ``file_id`` (rename, move, trash, restore, share, shared
links, permanent delete) accepts a folder id as well. The drive belongs to the home team; the
acting user is ``world.user``. Seeded documents are contracts, proposals, statements of work and
NDAs naming the world's companies and people (same names and emails as in the CRM), invoices and
reports with amounts, price lists with product SKUs, meeting notes and policies.

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
import random
from collections.abc import Iterable, Sequence
from datetime import timedelta
from typing import Literal

from pydantic import BaseModel
from sqlalchemy import ForeignKey, Select, String, UniqueConstraint, case, delete, func, or_, select
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, paginate
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
from mcp_services.kernel.world import Organisation, Person, Product, World

FileId = EntityId("files.file")
FolderId = EntityId("files.folder")
ShareId = EntityId("files.share")

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


class Base(DeclarativeBase):
    pass


class Item(Base):
    """A file or a folder. ``content`` is the text (extracted text for PDFs and Office files)."""

    __tablename__ = "items"
    id: Mapped[str] = mapped_column(primary_key=True)
    kind: Mapped[str]  # "file" | "folder"
    name: Mapped[str] = mapped_column(String(255), index=True)
    parent_id: Mapped[str | None] = mapped_column(ForeignKey("items.id"), index=True)
    mime_type: Mapped[str | None]
    size: Mapped[int] = mapped_column(default=0)
    content: Mapped[str | None]
    description: Mapped[str | None]
    owner_email: Mapped[str] = mapped_column(index=True)
    created_at: Mapped[str]
    modified_at: Mapped[str]
    modified_by_email: Mapped[str]
    version: Mapped[int] = mapped_column(default=1)
    trashed: Mapped[bool] = mapped_column(default=False)
    # True for the item the user trashed; False for the contents trashed along with a folder.
    explicitly_trashed: Mapped[bool] = mapped_column(default=False)
    trashed_at: Mapped[str | None]
    shared_link_url: Mapped[str | None] = mapped_column(unique=True)
    shared_link_access: Mapped[str | None]
    shared_link_expires_on: Mapped[str | None]


class Share(Base):
    """A person's access to a file or folder (Box collaboration, Drive permission)."""

    __tablename__ = "shares"
    __table_args__ = (UniqueConstraint("item_id", "email"),)
    id: Mapped[str] = mapped_column(primary_key=True)
    item_id: Mapped[str] = mapped_column(ForeignKey("items.id"), index=True)
    email: Mapped[str] = mapped_column(index=True)
    role: Mapped[str]
    shared_by_email: Mapped[str]
    created_at: Mapped[str]
    updated_at: Mapped[str]


service = Service(
    "files",
    "Cloud drive: folders and documents (contracts, proposals, invoices, reports, meeting notes) "
    "with search, text content, sharing with people, shared links and a trash.",
    Base,
    title="Files",
)


# -- results -------------------------------------------------------------------------------------


class FileOut(BaseModel):
    id: FileId
    type: ItemType
    name: FileName
    path: FileRef
    parent_id: FolderId | None
    mime_type: str | None
    size: int
    description: Text | None
    owner_email: EmailAddress
    owner_name: PersonName | None
    created_at: DateTime
    modified_at: DateTime
    modified_by_email: EmailAddress
    version: int
    trashed: bool
    trashed_at: DateTime | None
    shared_with: list[EmailAddress]
    shared_link_url: URL | None


class FolderOut(BaseModel):
    id: FolderId
    name: FileName
    path: FileRef
    parent_id: FolderId | None
    owner_email: EmailAddress
    owner_name: PersonName | None
    item_count: int
    created_at: DateTime
    modified_at: DateTime
    trashed: bool
    shared_with: list[EmailAddress]
    shared_link_url: URL | None


class FileContentOut(BaseModel):
    id: FileId
    name: FileName
    path: FileRef
    mime_type: str
    size: int
    version: int
    modified_at: DateTime
    content: Text


class ShareOut(BaseModel):
    id: ShareId
    file_id: FileId
    file_name: FileName
    email: EmailAddress
    person_name: PersonName | None
    role: ShareRole
    shared_by_email: EmailAddress
    created_at: DateTime
    updated_at: DateTime


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


# -- helpers -------------------------------------------------------------------------------------

FILE_HINT = "Use search_files or list_folder_items to find file ids."
FOLDER_HINT = "Use search_folders or list_folder_items to find folder ids."


def _names_by_email(world: World) -> dict[str, str]:
    return {p.email: p.name for p in world.people}


def _folder_paths(ctx: ToolContext) -> dict[str, str]:
    """Every folder's path ("/" for the root), from one query: folders are few."""
    rows = ctx.db.execute(select(Item.id, Item.name, Item.parent_id).where(Item.kind == "folder")).all()
    by_id = {r.id: r for r in rows}
    paths: dict[str, str] = {}

    def path_of(folder_id: str) -> str:
        if folder_id not in paths:
            row = by_id[folder_id]
            if row.parent_id is None:
                paths[folder_id] = "/"
            else:
                parent = path_of(row.parent_id)
                paths[folder_id] = f"{parent.rstrip('/')}/{row.name}"
        return paths[folder_id]

    for folder_id in by_id:
        path_of(folder_id)
    return paths


def _path(paths: dict[str, str], item: Item) -> str:
    if item.kind == "folder":
        return paths[item.id]
    return f"{paths[item.parent_id].rstrip('/')}/{item.name}" if item.parent_id else f"/{item.name}"


def _shared_with(ctx: ToolContext, item_ids: Sequence[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {i: [] for i in item_ids}
    if item_ids:
        stmt = select(Share.item_id, Share.email).where(Share.item_id.in_(item_ids)).order_by(Share.email)
        for item_id, email in ctx.db.execute(stmt):
            found[item_id].append(email)
    return found


def _file_outs(ctx: ToolContext, items: Sequence[Item]) -> list[FileOut]:
    paths = _folder_paths(ctx)
    shares = _shared_with(ctx, [i.id for i in items])
    names = _names_by_email(ctx.world)
    return [
        FileOut(
            id=i.id,
            type=i.kind,  # type: ignore[arg-type]
            name=i.name,
            path=_path(paths, i),
            parent_id=i.parent_id,
            mime_type=i.mime_type,
            size=i.size,
            description=i.description,
            owner_email=i.owner_email,
            owner_name=names.get(i.owner_email),
            created_at=i.created_at,
            modified_at=i.modified_at,
            modified_by_email=i.modified_by_email,
            version=i.version,
            trashed=i.trashed,
            trashed_at=i.trashed_at,
            shared_with=shares[i.id],
            shared_link_url=i.shared_link_url,
        )
        for i in items
    ]


def _file_out(ctx: ToolContext, item: Item) -> FileOut:
    return _file_outs(ctx, [item])[0]


def _folder_outs(ctx: ToolContext, folders: Sequence[Item]) -> list[FolderOut]:
    paths = _folder_paths(ctx)
    shares = _shared_with(ctx, [f.id for f in folders])
    names = _names_by_email(ctx.world)
    counts: dict[str, int] = {}
    if folders:
        stmt = (
            select(Item.parent_id, func.count())
            .where(Item.parent_id.in_([f.id for f in folders]), Item.trashed.is_(False))
            .group_by(Item.parent_id)
        )
        counts = {parent: n for parent, n in ctx.db.execute(stmt)}
    return [
        FolderOut(
            id=f.id,
            name=f.name,
            path=paths[f.id],
            parent_id=f.parent_id,
            owner_email=f.owner_email,
            owner_name=names.get(f.owner_email),
            item_count=counts.get(f.id, 0),
            created_at=f.created_at,
            modified_at=f.modified_at,
            trashed=f.trashed,
            shared_with=shares[f.id],
            shared_link_url=f.shared_link_url,
        )
        for f in folders
    ]


def _share_out(ctx: ToolContext, share: Share) -> ShareOut:
    item = ctx.get(Item, share.item_id, "file")
    return ShareOut(
        id=share.id,
        file_id=item.id,
        file_name=item.name,
        email=share.email,
        person_name=_names_by_email(ctx.world).get(share.email),
        role=share.role,  # type: ignore[arg-type]
        shared_by_email=share.shared_by_email,
        created_at=share.created_at,
        updated_at=share.updated_at,
    )


def _root(ctx: ToolContext) -> Item:
    root = ctx.db.scalar(select(Item).where(Item.parent_id.is_(None), Item.kind == "folder"))
    if root is None:  # every seeded store has one and no tool can remove it
        raise RuntimeError("the files store has no root folder")
    return root


def _item(ctx: ToolContext, file_id: str) -> Item:
    return ctx.get(Item, file_id, "file or folder", FILE_HINT)


def _file(ctx: ToolContext, file_id: str) -> Item:
    """A file (not a folder)."""
    item = _item(ctx, file_id)
    if item.kind != "file":
        raise ToolError.invalid_argument(
            f"{file_id} is a folder ({item.name!r}), not a file; use list_folder_items to see what it holds."
        )
    return item


def _folder(ctx: ToolContext, folder_id: str | None) -> Item:
    """A folder by id; None means the root folder."""
    if folder_id is None:
        return _root(ctx)
    folder = ctx.get(Item, folder_id, "folder", FOLDER_HINT)
    if folder.kind != "folder":
        raise ToolError.invalid_argument(f"{folder_id} is a file ({folder.name!r}), not a folder. {FOLDER_HINT}")
    return folder


def _not_trashed(item: Item, action: str) -> None:
    if item.trashed:
        raise ToolError.invalid_state(
            f"{item.kind.capitalize()} {item.id} ({item.name!r}) is in the trash and cannot be {action}; "
            "restore_file it first."
        )


def _not_root(item: Item, action: str) -> None:
    if item.parent_id is None:
        raise ToolError.invalid_argument(f"The root folder ({item.id}) cannot be {action}.")


def _open_folder(ctx: ToolContext, folder_id: str | None, action: str) -> Item:
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


def _check_name_free(ctx: ToolContext, folder: Item, name: str, exclude_id: str | None = None) -> None:
    """Names are unique (case-insensitive) among a folder's items that are not in the trash."""
    stmt = select(Item).where(
        Item.parent_id == folder.id, Item.trashed.is_(False), func.lower(Item.name) == name.lower()
    )
    if exclude_id is not None:
        stmt = stmt.where(Item.id != exclude_id)
    clash = ctx.db.scalars(stmt).first()
    if clash is not None:
        raise ToolError.conflict(
            f"Folder {folder.id} ({folder.name!r}) already holds a {clash.kind} named {clash.name!r} ({clash.id}). "
            "Choose another name, or rename or trash the existing item first."
        )


def _children(ctx: ToolContext) -> dict[str, list[str]]:
    children: dict[str, list[str]] = {}
    for item_id, parent_id in ctx.db.execute(select(Item.id, Item.parent_id).where(Item.parent_id.is_not(None))):
        children.setdefault(parent_id, []).append(item_id)
    return children


def _descendants(ctx: ToolContext, folder_id: str) -> list[str]:
    """Every item below a folder (not the folder itself), parents before children."""
    children = _children(ctx)
    found: list[str] = []
    queue = list(children.get(folder_id, ()))
    while queue:
        item_id = queue.pop(0)
        found.append(item_id)
        queue.extend(children.get(item_id, ()))
    return found


def _mime_for_name(name: str) -> str | None:
    if "." not in name:
        return None
    return MIME_BY_EXTENSION.get(name.rsplit(".", 1)[1].lower())


def _link_url(ctx: ToolContext, item_id: str) -> str:
    # A new link sequence number each time, so a removed link's URL is never handed out again.
    seq = ctx.new_id("link")
    token = hashlib.sha256(f"{ctx.world.seed}:{item_id}:{seq}".encode()).hexdigest()[:16]
    return f"https://files.{ctx.world.home.domain}/s/{token}"


def _touch(ctx: ToolContext, item: Item) -> None:
    item.modified_at = ctx.now_iso
    item.modified_by_email = ctx.world.user.email


def _order(stmt: Select[tuple[Item]], order_by: str) -> Select[tuple[Item]]:
    """Names A-Z; dates newest first; size largest first; ids break ties so pages are stable."""
    column = {
        "name": func.lower(Item.name),
        "modified_at": Item.modified_at.desc(),
        "created_at": Item.created_at.desc(),
        "size": Item.size.desc(),
    }[order_by]
    return stmt.order_by(column, Item.id)


# -- seed ----------------------------------------------------------------------------------------


def _money(world: World, amount: float) -> str:
    return f"{world.currency} {amount:,.2f}"


class _Seeder:
    """Builds the seeded drive: folder tree, documents, shares and shared links."""

    def __init__(self, ctx: ToolContext) -> None:
        self.ctx = ctx
        self.world = ctx.world
        self.rng: random.Random = ctx.rng("seed")
        self.user = ctx.world.user
        self.team = list(ctx.world.team)
        self.orgs = list(ctx.world.organisations[1:])
        self.people_by_org: dict[str, list[Person]] = {}
        for person in ctx.world.customers:
            self.people_by_org.setdefault(person.organisation_id, []).append(person)
        self.n_invoices = 0
        self.n_contracts = 0
        self.now = ctx.now  # parsed once: ctx.days_from_now re-parses the clock on every call
        self.taken: set[tuple[str, str]] = set()  # (folder id, lower-case name): names are unique per folder

    def free_name(self, parent: Item | None, name: str) -> str:
        key = parent.id if parent else ""
        stem, dot, ext = name.rpartition(".") if "." in name else (name, "", "")
        candidate, n = name, 1
        while (key, candidate.lower()) in self.taken:
            n += 1
            candidate = f"{stem} ({n}){dot}{ext}"
        self.taken.add((key, candidate.lower()))
        return candidate

    # -- building blocks --

    def role(self, title: str) -> Person:
        return self.world.team_member(title)

    def when(self, min_days: int, max_days: int) -> tuple[str, str]:
        """A (created, modified) pair between max_days and min_days ago, modified after created."""
        created = self.rng.randint(min_days, max_days)
        modified = self.rng.randint(max(0, min_days - 5), created) if created > 0 else 0
        offset = self.rng.randint(0, 8 * 60)
        return self.ago(created + offset / 1440), self.ago(modified + offset / 2880)

    def ago(self, days: float) -> str:
        return self.ctx.iso(self.now - timedelta(days=days))

    def date(self, days: int) -> str:
        return self.ago(-days)[:10]

    def folder(self, name: str, parent: Item | None, owner: Person, age: int = 400) -> Item:
        created, modified = self.when(max(1, age - 60), age)
        item = Item(
            id=self.ctx.new_id("folder"),
            kind="folder",
            name=self.free_name(parent, name),
            parent_id=parent.id if parent else None,
            mime_type=None,
            size=0,
            content=None,
            description=None,
            owner_email=owner.email,
            created_at=created,
            modified_at=modified,
            modified_by_email=owner.email,
        )
        self.ctx.db.add(item)
        return item

    def file(
        self,
        folder: Item,
        name: str,
        content: str | None,
        owner: Person,
        age: tuple[int, int] = (1, 300),
        description: str | None = None,
        size: int | None = None,
    ) -> Item:
        mime = _mime_for_name(name) or "text/plain"
        if size is None:
            text_bytes = len((content or "").encode())
            # Office files and PDFs weigh more than their extracted text.
            factor = {"application/pdf": 9, DOCX: 4, XLSX: 5, PPTX: 12}.get(mime, 1)
            size = text_bytes * factor + (self.rng.randint(2_000, 30_000) if factor > 1 else 0)
        created, modified = self.when(*age)
        editor = owner if self.rng.random() < 0.7 else self.rng.choice(self.team)
        item = Item(
            id=self.ctx.new_id("file"),
            kind="file",
            name=self.free_name(folder, name),
            parent_id=folder.id,
            mime_type=mime,
            size=size,
            content=content,
            description=description,
            owner_email=owner.email,
            created_at=created,
            modified_at=modified,
            modified_by_email=editor.email,
            version=1 if modified == created else self.rng.randint(1, 6),
        )
        self.ctx.db.add(item)
        return item

    def share(self, item: Item, person: Person, role: str, by: Person | None = None) -> None:
        if person.email in (item.owner_email, self.user.email):
            return
        created = self.ago(self.rng.randint(0, 60))
        self.ctx.db.add(
            Share(
                id=self.ctx.new_id("share"),
                item_id=item.id,
                email=person.email,
                role=role,
                shared_by_email=by.email if by else item.owner_email,
                created_at=created,
                updated_at=created,
            )
        )

    def link(self, item: Item, access: str, expires_in_days: int | None = None) -> None:
        item.shared_link_url = _link_url(self.ctx, item.id)
        item.shared_link_access = access
        item.shared_link_expires_on = self.date(expires_in_days) if expires_in_days is not None else None

    def trash(self, item: Item, days_ago: int) -> None:
        item.trashed = True
        item.explicitly_trashed = True
        item.trashed_at = self.ago(days_ago)

    def line_items(self, count: int, services_only: bool = False) -> list[tuple[Product, int]]:
        products = [p for p in self.world.products if not services_only or p.category in ("services", "subscriptions")]
        picked = self.rng.sample(products, count)
        return [(p, self.rng.choice((1, 1, 2, 3, 5, 10, 12))) for p in picked]

    def table(self, lines: list[tuple[Product, int]]) -> tuple[str, float]:
        rows, total = [], 0.0
        for product, qty in lines:
            amount = round(product.unit_price * qty, 2)
            total += amount
            rows.append(
                f"| {product.sku} | {product.name} | {qty} | {_money(self.world, product.unit_price)} "
                f"| {_money(self.world, amount)} |"
            )
        header = "| SKU | Item | Qty | Unit price | Amount |\n|---|---|---|---|---|"
        return header + "\n" + "\n".join(rows), round(total, 2)

    # -- the drive --

    def run(self) -> None:
        world, ctx = self.world, self.ctx
        root = self.folder(ROOT_NAME, None, self.user, age=900)
        sales_lead, ae = self.role("sales lead"), self.role("account executive")
        finance, accountant = self.role("finance lead"), self.role("accountant")
        clients = self.folder("Clients", root, sales_lead, 700)
        finance_dir = self.folder("Finance", root, finance, 700)
        invoices_dir = self.folder("Invoices", finance_dir, accountant, 600)
        reports_dir = self.folder("Reports", finance_dir, finance, 600)
        receipts_dir = self.folder("Receipts", finance_dir, accountant, 500)
        sales_dir = self.folder("Sales", root, sales_lead, 650)
        notes_dir = self.folder("Meeting Notes", root, self.user, 650)
        hr_dir = self.folder("HR", root, self.role("office manager"), 800)
        eng_dir = self.folder("Engineering", root, self.role("engineering lead"), 700)
        marketing_dir = self.folder("Marketing", root, self.role("product manager"), 600)
        ops_dir = self.folder("Operations", root, self.user, 700)
        templates_dir = self.folder("Templates", root, self.user, 850)
        archive_dir = self.folder("Archive", root, self.user, 880)

        for org in self.orgs:
            self.client_folder(clients, org, sales_lead, ae)
        self.invoices(invoices_dir, accountant)
        self.reports(reports_dir, finance)
        for i in range(10):
            self.file(
                receipts_dir,
                f"Receipt {self.date(-self.rng.randint(3, 200))} #{1000 + i}.jpg",
                None,
                self.rng.choice(self.team),
                (3, 200),
                description="Scanned receipt",
                size=self.rng.randint(180_000, 2_400_000),
            )
        self.sales(sales_dir, sales_lead)
        self.meeting_notes(notes_dir)
        self.hr(hr_dir)
        self.engineering(eng_dir)
        self.marketing(marketing_dir)
        self.operations(ops_dir)
        self.templates(templates_dir)
        self.archive(archive_dir)
        ctx.db.flush()

    def client_folder(self, clients: Item, org: Organisation, sales_lead: Person, ae: Person) -> None:
        world = self.world
        people = self.people_by_org.get(org.id, [])
        owner = self.rng.choice((sales_lead, ae, ae))
        folder = self.folder(org.name, clients, owner, self.rng.randint(200, 600))
        contact = people[0] if people else None
        if contact is not None and self.rng.random() < 0.4:
            self.share(folder, contact, "viewer", owner)
        year = self.date(0)[:4]

        # Contract (signed for most clients, a draft for some).
        self.n_contracts += 1
        lines = self.line_items(self.rng.randint(1, 3), services_only=True)
        annual = round(sum(p.unit_price * q for p, q in lines) * self.rng.choice((4, 6, 12)), 2)
        start = -self.rng.randint(30, 500)
        months = self.rng.choice((12, 24, 36))
        signed = self.rng.random() < 0.8
        signatory = contact.name if contact else "Authorised signatory"
        contract = self.file(
            folder,
            f"{org.name} - Master Services Agreement.pdf",
            "\n".join(
                [
                    "MASTER SERVICES AGREEMENT",
                    "",
                    f"Agreement number: MSA-{year}-{self.n_contracts:03d}",
                    f"Effective date: {self.date(start)}",
                    f"Term: {months} months, ending {self.date(start + months * 30)}",
                    "",
                    f'Between {world.home.name}, {world.home.address} ("Provider")',
                    f'and {org.name}, {org.address} ("Customer").',
                    "",
                    "1. Services. Provider will supply: " + "; ".join(f"{p.name} ({p.sku})" for p, _ in lines) + ".",
                    f"2. Fees. Customer will pay {_money(world, annual)} per year, invoiced "
                    f"{self.rng.choice(('monthly', 'quarterly'))}, due within {self.rng.choice((15, 30, 45))} days.",
                    "3. Renewal. The agreement renews for 12 months unless either party gives 60 days' written notice.",
                    "4. Confidentiality. Each party keeps the other's confidential information secret.",
                    "5. Liability. Each party's liability is capped at the fees paid in the previous 12 months.",
                    "",
                    f"Signed for {world.home.name}: {owner.name}, {owner.job_title} ({owner.email})",
                    f"Signed for {org.name}: {signatory}"
                    + (f", {contact.job_title} ({contact.email})" if contact else ""),
                    "Status: "
                    + (f"signed on {self.date(start - 5)}" if signed else "DRAFT - awaiting customer signature"),
                ]
            ),
            owner,
            (max(1, -start - 10), -start + 20),
            description=f"MSA with {org.name}" + ("" if signed else " (draft)"),
        )
        for person in people[:2]:
            self.share(contract, person, "viewer" if signed else "commenter", owner)

        # Proposal.
        lines = self.line_items(self.rng.randint(2, 4))
        table, total = self.table(lines)
        valid_until = self.rng.randint(-20, 45)
        proposal = self.file(
            folder,
            f"{org.name} - Proposal {year}.docx",
            "\n".join(
                [
                    f"Proposal for {org.name}",
                    f"Prepared by {owner.name} ({owner.email}), {world.home.name}",
                    f"Prepared for {contact.name} ({contact.email})" if contact else "",
                    f"Date: {self.date(-self.rng.randint(5, 60))}   Valid until: {self.date(valid_until)}",
                    "",
                    f"{org.name} works in {org.industry}; this proposal covers the tools and services below.",
                    "",
                    table,
                    "",
                    f"Total: {_money(world, total)} (excluding tax)",
                    "Payment terms: 30 days from invoice.",
                ]
            ),
            owner,
            (5, 90),
            description=f"Commercial proposal, total {_money(world, total)}",
        )
        if contact is not None:
            self.share(proposal, contact, self.rng.choice(("viewer", "commenter", "editor")), owner)
            if self.rng.random() < 0.35:
                self.link(proposal, "anyone", self.rng.randint(-5, 30))
        if self.rng.random() < 0.3:
            draft = self.file(
                folder,
                f"{org.name} - Proposal draft v1.docx",
                f"DRAFT proposal for {org.name}. Superseded by the final proposal.\n\n{table}",
                owner,
                (60, 120),
            )
            self.trash(draft, self.rng.randint(1, 25))

        # Statement of work and NDA for some clients.
        if self.rng.random() < 0.6:
            steps = ("Discovery workshop", "Data migration", "Pilot go-live", "Training", "Full rollout", "Handover")
            days = sorted(self.rng.sample(range(-30, 120), 3))
            milestones = [
                f"- Milestone {i + 1}: {name} by {self.date(day)}"
                for i, (name, day) in enumerate(zip(sorted(self.rng.sample(steps, 3), key=steps.index), days))
            ]
            fee = round(self.rng.choice((2400.0, 5200.0, 7800.0, 12500.0, 18000.0)), 2)
            self.file(
                folder,
                f"{org.name} - Statement of Work.pdf",
                "\n".join(
                    [
                        f"STATEMENT OF WORK under the Master Services Agreement with {org.name}",
                        f"Project lead ({world.home.name}): {owner.name} ({owner.email})",
                        f"Customer lead: {contact.name} ({contact.email})" if contact else "",
                        "",
                        *milestones,
                        "",
                        f"Fixed fee: {_money(world, fee)}, 50% on signature and 50% on completion.",
                    ]
                ),
                owner,
                (10, 200),
            )
        if self.rng.random() < 0.5:
            nda = self.file(
                folder,
                f"{org.name} - Mutual NDA.pdf",
                f"MUTUAL NON-DISCLOSURE AGREEMENT between {world.home.name} and {org.name}, "
                f"{org.address}.\nEffective {self.date(-self.rng.randint(200, 700))} for 3 years.\n"
                f"Signed: {self.role('operations manager').name} for {world.home.name}; "
                f"{people[-1].name if people else 'the customer'} for {org.name}.",
                self.user,
                (200, 700),
            )
            if people:
                self.share(nda, people[-1], "viewer", self.user)

        # Meeting notes with the client's people.
        finance = self.role("finance lead")
        for n in range(self.rng.randint(1, 3)):
            day = -self.rng.randint(1, 150)
            ours = self.rng.sample(self.team, 2)
            theirs = people[: self.rng.randint(1, max(1, len(people)))]
            kind = self.rng.choice(("Kickoff", "Quarterly review", "Renewal", "Support escalation", "Pricing"))
            actions = [
                f"- [ ] {ours[0].name} to send the updated pricing to {theirs[0].email if theirs else org.name} "
                f"by {self.date(day + 7)}",
                f"- [ ] {theirs[0].name if theirs else org.name} to confirm the "
                f"{self.rng.choice(lines)[0].name} rollout date",
            ]
            notes = self.file(
                folder,
                f"{org.name} - {kind} call {self.date(day)}.md",
                "\n".join(
                    [
                        f"# {org.name} - {kind} call, {self.date(day)}",
                        "",
                        "Attendees: "
                        + ", ".join(f"{p.name} <{p.email}>" for p in [*ours, *theirs]),
                        "",
                        "## Discussion",
                        f"- {org.name} is happy with {self.rng.choice(self.world.products).name}; "
                        f"asked about {self.rng.choice(('volume discounts', 'a longer contract', 'SSO', 'support'))}.",
                        f"- Open invoice questions go to {finance.name} ({finance.email}).",
                        "",
                        "## Action items",
                        *actions,
                    ]
                ),
                ours[0],
                (-day, -day + 1),
            )
            for person in ours[1:]:
                self.share(notes, person, "editor", ours[0])

    def invoices(self, folder: Item, accountant: Person) -> None:
        world = self.world
        for _ in range(70):
            org = self.rng.choice(self.orgs)
            people = self.people_by_org.get(org.id, [])
            contact = self.rng.choice(people) if people else None
            self.n_invoices += 1
            issued = -self.rng.randint(1, 330)
            due = issued + 30
            lines = self.line_items(self.rng.randint(1, 4))
            table, total = self.table(lines)
            if due > 0:
                status = "Unpaid"
            elif self.rng.random() < 0.8:
                status = f"Paid on {self.date(due - self.rng.randint(0, 25))}"
            else:
                status = "Overdue"
            number = f"INV-{self.date(issued)[:4]}-{self.n_invoices:04d}"
            invoice = self.file(
                folder,
                f"Invoice {number} - {org.name}.pdf",
                "\n".join(
                    [
                        f"INVOICE {number}",
                        f"From: {world.home.name}, {world.home.address}",
                        f"Issued: {self.date(issued)}    Due: {self.date(due)}",
                        "",
                        "Bill to:",
                        contact.name if contact else org.name,
                        org.name,
                        org.address,
                        contact.email if contact else org.website,
                        "",
                        table,
                        "",
                        f"Subtotal: {_money(world, total)}",
                        f"Tax: {_money(world, 0)}",
                        f"Total due: {_money(world, total)}",
                        f"Status: {status}",
                        "",
                        f"Questions: {accountant.name} <{accountant.email}>",
                    ]
                ),
                accountant,
                (-issued, -issued + 1),
                description=f"{number} for {org.name}, {_money(world, total)}, {status.split(' on ')[0].lower()}",
            )
            if contact is not None and self.rng.random() < 0.5:
                self.share(invoice, contact, "viewer", accountant)

    def reports(self, folder: Item, finance: Person) -> None:
        world = self.world
        now = self.ctx.now
        for back in range(1, 13):
            index = now.year * 12 + now.month - 1 - back  # months since year 0, `back` months ago
            month = f"{index // 12:04d}-{index % 12 + 1:02d}"
            rows = []
            total = 0.0
            for org in self.rng.sample(self.orgs, 6):
                amount = round(self.rng.uniform(800, 25_000), 2)
                total += amount
                rows.append(f"{org.name},{amount:.2f}")
            report = self.file(
                folder,
                f"Revenue report {month}.xlsx",
                f"Revenue report {month} ({world.currency})\ncustomer,revenue\n"
                + "\n".join(rows)
                + f"\nTotal,{total:.2f}\nPrepared by {finance.name} <{finance.email}>",
                finance,
                (30 * back - 25, 30 * back - 20),
                description=f"Monthly revenue for {month}: {_money(world, total)}",
            )
            if back <= 3:
                for title in ("accountant", "operations manager", "sales lead"):
                    self.share(report, self.role(title), "viewer" if title != "accountant" else "editor", finance)
        for q in range(1, 5):
            revenue = round(self.rng.uniform(120_000, 400_000), 2)
            costs = round(revenue * self.rng.uniform(0.55, 0.85), 2)
            self.file(
                folder,
                f"Quarterly report Q{q} {int(self.date(0)[:4]) - (1 if q > 2 else 0)}.docx",
                f"Quarterly report Q{q}\nRevenue: {_money(world, revenue)}\nCosts: {_money(world, costs)}\n"
                f"Operating profit: {_money(world, revenue - costs)}\n"
                f"Top customers: {', '.join(o.name for o in self.rng.sample(self.orgs, 3))}\n"
                f"Author: {finance.name}",
                finance,
                (20 + 90 * (q - 1), 40 + 90 * (q - 1)),
            )
        budget_lines = [
            f"{label},{round(self.rng.uniform(5_000, 90_000), 2):.2f}"
            for label in ("Salaries", "Software", "Travel", "Office", "Marketing", "Hardware", "Training")
        ]
        self.file(
            folder,
            f"Budget {self.date(0)[:4]}.xlsx",
            f"Budget {self.date(0)[:4]} ({world.currency})\ncategory,annual_budget\n" + "\n".join(budget_lines),
            finance,
            (60, 120),
            description="Annual budget by category",
        )
        for person in self.rng.sample(self.team, 4):
            lines = [
                f"{self.date(-self.rng.randint(5, 60))},{what},{round(self.rng.uniform(12, 900), 2):.2f}"
                for what in self.rng.sample(("Taxi", "Hotel", "Flight", "Client lunch", "Train", "Conference"), 3)
            ]
            self.file(
                folder,
                f"Expense report - {person.name} - {self.date(-3)[:7]}.xlsx",
                f"Expense report for {person.name} <{person.email}>\ndate,item,amount\n" + "\n".join(lines),
                person,
                (2, 30),
            )

    def sales(self, folder: Item, sales_lead: Person) -> None:
        world = self.world
        year = self.date(0)[:4]
        price_list = self.file(
            folder,
            f"Price list {year}.csv",
            "sku,name,category,unit_price,currency\n"
            + "\n".join(f"{p.sku},{p.name},{p.category},{p.unit_price:.2f},{p.currency}" for p in world.products),
            sales_lead,
            (20, 90),
            description="Current list prices for every product",
        )
        self.link(price_list, "organization")
        self.file(
            folder,
            "Customer contacts.csv",
            "name,email,phone,company,job_title,city\n"
            + "\n".join(
                f"{p.name},{p.email},{p.phone},{world.organisation(p.organisation_id).name},"
                f"\"{p.job_title}\",{p.city}"
                for p in world.customers
            ),
            sales_lead,
            (5, 60),
            description="Export of customer contacts",
        )
        for q in range(1, 4):
            picks = self.rng.sample(self.orgs, 4)
            self.file(
                folder,
                f"Pipeline review {year}-Q{q}.md",
                f"# Pipeline review {year} Q{q}\n\nOwner: {sales_lead.name}\n\n"
                + "\n".join(
                    f"- {o.name}: {self.rng.choice(('proposal sent', 'negotiation', 'verbal yes', 'at risk'))}, "
                    f"est. {_money(world, round(self.rng.uniform(3_000, 60_000), 2))}"
                    for o in picks
                ),
                sales_lead,
                (10 + 90 * (3 - q), 30 + 90 * (3 - q)),
            )
        playbook = self.file(
            folder,
            "Sales playbook.docx",
            f"Sales playbook for {world.home.name}.\nDiscounts above 15% need approval from {sales_lead.name} "
            f"({sales_lead.email}). Contracts above {_money(world, 50_000)} need the finance lead, "
            f"{self.role('finance lead').name}, to sign off.",
            sales_lead,
            (100, 300),
        )
        self.share(playbook, self.role("account executive"), "editor", sales_lead)

    def meeting_notes(self, folder: Item) -> None:
        world = self.world
        topics = (
            "hiring plan", "office move", "Q{q} targets", "customer churn", "pricing update", "support backlog",
            "security audit", "team offsite", "new onboarding flow", "invoice reminders",
        )
        verbs = ("follow up with", "send the contract to", "book a call with", "chase the invoice for")
        for week in range(1, 25):
            day = -7 * week + self.rng.randint(0, 2)
            attendees = self.rng.sample(self.team, self.rng.randint(3, 6))
            org = self.rng.choice(self.orgs)
            owner = attendees[0]
            doc = self.file(
                folder,
                f"Team sync {self.date(day)}.md",
                "\n".join(
                    [
                        f"# Team sync {self.date(day)}",
                        "Attendees: " + ", ".join(p.name for p in attendees),
                        "",
                        "## Topics",
                        *(f"- {t.format(q=self.rng.randint(1, 4))}" for t in self.rng.sample(topics, 3)),
                        f"- Account update: {org.name} ({org.industry})",
                        "",
                        "## Action items",
                        *(
                            f"- [ ] {p.name} ({p.email}): {self.rng.choice(verbs)} {org.name} "
                            f"by {self.date(day + self.rng.randint(2, 10))}"
                            for p in attendees[1:3]
                        ),
                    ]
                ),
                owner,
                (-day, -day + 1),
            )
            for person in attendees[1:]:
                if self.rng.random() < 0.5:
                    self.share(doc, person, "editor", owner)
        place = self.rng.choice(world.places)
        self.file(
            folder,
            f"All-hands {self.date(-20)}.md",
            f"# All-hands {self.date(-20)}\nLocation: {place.name}, {place.address}\n"
            + "\n".join(f"- {p.name} ({p.job_title}) presented" for p in self.team[:5]),
            self.user,
            (20, 21),
        )

    def hr(self, folder: Item) -> None:
        world = self.world
        office = self.role("office manager")
        finance = self.role("finance lead")
        handbook = self.file(
            folder,
            "Employee handbook.pdf",
            f"{world.home.name} employee handbook.\nOffice: {world.home.address}. Phone {world.home.phone}.\n"
            f"Questions about benefits: {office.name} <{office.email}>.",
            office,
            (300, 800),
        )
        self.link(handbook, "organization")
        self.file(
            folder,
            "Travel policy.docx",
            f"Travel policy.\nFlights over {_money(world, 800)} need approval from the finance lead, "
            f"{finance.name} ({finance.email}).\nHotels up to {_money(world, 220)} per night.",
            finance,
            (100, 400),
        )
        self.file(
            folder,
            "Expense policy.md",
            f"# Expense policy\n\n- Keep receipts for anything over {_money(world, 75)}.\n"
            f"- Submit expense reports by the 5th of the month to {self.role('accountant').email}.\n"
            f"- Client meals up to {_money(world, 60)} per person.",
            finance,
            (100, 400),
        )
        self.file(
            folder,
            "Team directory.csv",
            "name,email,phone,role\n" + "\n".join(f"{p.name},{p.email},{p.phone},{p.job_title}" for p in self.team),
            office,
            (10, 90),
        )
        self.file(
            folder,
            "Onboarding checklist.md",
            "# Onboarding checklist\n- Laptop and dock\n- Accounts: mail, chat, files, CRM\n"
            f"- Intro with {self.user.name}\n- Read the employee handbook",
            office,
            (50, 300),
        )
        self.file(
            folder,
            f"Holiday calendar {self.date(0)[:4]}.csv",
            "date,holiday\n"
            + "\n".join(
                f"{self.date(0)[:4]}-{md},{h}"
                for md, h in (("01-01", "New Year"), ("07-04", "Independence Day"), ("12-25", "Christmas"))
            ),
            office,
            (60, 120),
        )

    def engineering(self, folder: Item) -> None:
        lead = self.role("engineering lead")
        for system in ("Billing sync", "Backups", "On-call"):
            self.file(
                folder,
                f"Runbook - {system}.md",
                f"# Runbook: {system}\n\nOwner: {lead.name} <{lead.email}>\n\n1. Check the dashboard.\n"
                "2. Restart the worker if the queue is stuck.\n3. Escalate to the on-call engineer.",
                lead,
                (30, 400),
            )
        for i in range(3):
            day = -self.rng.randint(5, 200)
            org = self.rng.choice(self.orgs)
            self.file(
                folder,
                f"Incident postmortem {self.date(day)}.md",
                f"# Incident {self.date(day)}\n\nImpact: {org.name} could not download invoices for "
                f"{self.rng.randint(15, 180)} minutes.\nRoot cause: expired certificate.\n"
                f"Follow-up owner: {lead.name}.",
                lead,
                (-day, -day + 3),
            )
        for feature in ("Webhooks", "SSO", "Usage export"):
            self.file(
                folder,
                f"API design - {feature}.md",
                f"# API design: {feature}\n\nAuthor: {lead.name}\nReviewers: {self.role('product manager').name}\n"
                f"Status: {self.rng.choice(('draft', 'in review', 'approved'))}",
                self.rng.choice((lead, self.role("product manager"))),
                (10, 150),
            )
        overview = "Architecture overview: API, workers, database, files."
        self.file(folder, "Architecture overview.pptx", overview, lead, (200, 500))

    def marketing(self, folder: Item) -> None:
        world = self.world
        pm = self.role("product manager")
        guidelines = self.file(
            folder,
            "Brand guidelines.pdf",
            f"{world.home.name} brand guidelines: logo clear space, colours, tone of voice. "
            f"Website {world.home.website}.",
            pm,
            (200, 500),
        )
        self.link(guidelines, "anyone")
        self.file(folder, "Logo.png", None, pm, (300, 600), size=48_213)
        self.file(folder, "Logo dark.png", None, pm, (300, 600), size=51_877)
        for org in self.rng.sample(self.orgs, 2):
            people = self.people_by_org.get(org.id, [])
            study = self.file(
                folder,
                f"Case study - {org.name}.docx",
                f"How {org.name} ({org.industry}) saved time with {world.home.name}.\n"
                + (f'"We rolled out in weeks." - {people[0].name}, {people[0].job_title}' if people else ""),
                pm,
                (20, 200),
            )
            if people:
                self.share(study, people[0], "commenter", pm)
            if self.rng.random() < 0.5:
                self.link(study, "anyone", 60)
        for back in range(1, 4):
            draft = self.file(
                folder,
                f"Newsletter draft - {self.date(-30 * back)[:7]}.docx",
                f"Newsletter {self.date(-30 * back)[:7]}: product news, "
                f"{self.rng.choice(world.products).name} now available.",
                pm,
                (30 * back, 30 * back + 5),
            )
            if back == 3:  # a review link that has since expired
                self.link(draft, "anyone", -60)
        attendees = self.rng.sample(list(world.customers), 12)
        self.file(
            folder,
            "Webinar attendees.csv",
            "name,email,company\n"
            + "\n".join(f"{p.name},{p.email},{world.organisation(p.organisation_id).name}" for p in attendees),
            pm,
            (10, 40),
        )

    def operations(self, folder: Item) -> None:
        world = self.world
        office = self.role("office manager")
        supplies = [p for p in world.products if p.category in ("supplies", "pantry", "hardware", "furniture")]
        for back in range(1, 5):
            picks = self.rng.sample(supplies, 4)
            lines = [(p, self.rng.randint(1, 12)) for p in picks]
            total = sum(p.unit_price * q for p, q in lines)
            self.file(
                folder,
                f"Office supplies order {self.date(-30 * back)[:7]}.csv",
                "sku,item,quantity,unit_price,amount\n"
                + "\n".join(f"{p.sku},{p.name},{q},{p.unit_price:.2f},{p.unit_price * q:.2f}" for p, q in lines)
                + f"\nTOTAL,,,,{total:.2f}",
                office,
                (30 * back, 30 * back + 2),
            )
        place = next((p for p in world.places if p.kind == "conference venue"), world.places[0])
        self.file(
            folder,
            f"Team offsite plan {self.date(0)[:4]}.md",
            f"# Team offsite\n\nVenue: {place.name}, {place.address}\nBudget: {_money(world, 5200)}\n"
            f"Organiser: {office.name} <{office.email}>",
            office,
            (5, 40),
        )
        self.file(
            folder,
            "Vendor list.csv",
            "vendor,contact,email,phone\n"
            + "\n".join(
                f"{o.name},{p.name},{p.email},{p.phone}"
                for o in self.rng.sample(self.orgs, 5)
                for p in self.people_by_org.get(o.id, [])[:1]
            ),
            self.user,
            (30, 200),
        )
        self.file(folder, "Office floor plan.png", None, office, (300, 700), size=412_330)

    def templates(self, folder: Item) -> None:
        for name, text in (
            ("Invoice template.docx", "INVOICE {number}\nBill to: {customer}\nTotal due: {amount}"),
            ("NDA template.docx", "MUTUAL NON-DISCLOSURE AGREEMENT between {party_a} and {party_b}."),
            ("Proposal template.docx", "Proposal for {company}\nPrepared by {owner}\nTotal: {amount}"),
            ("Meeting notes template.md", "# {title} {date}\nAttendees:\n## Discussion\n## Action items"),
        ):
            self.file(folder, name, text, self.user, (400, 850))

    def archive(self, folder: Item) -> None:
        world = self.world
        last_year = int(self.date(0)[:4]) - 1
        self.file(
            folder,
            f"Price list {last_year}.csv",
            "sku,name,unit_price\n"
            + "\n".join(f"{p.sku},{p.name},{p.unit_price * 0.95:.2f}" for p in world.products),
            self.role("sales lead"),
            (380, 420),
        )
        old = self.folder("Old proposals", folder, self.role("sales lead"), 500)
        self.trash(old, 12)
        for org in self.rng.sample(self.orgs, 3):
            child = self.file(
                old, f"{org.name} - Proposal {last_year}.docx", f"Proposal for {org.name} ({last_year}).",
                self.role("sales lead"), (380, 480),
            )
            # Trashed along with the folder: restoring "Old proposals" brings them back.
            child.trashed, child.trashed_at = True, old.trashed_at
        stale = self.file(folder, "Untitled document.txt", "", self.user, (30, 60), size=0)
        self.trash(stale, 3)
        self.file(
            folder, f"Revenue report {last_year} summary.xlsx", "Summary of last year's revenue.",
            self.role("finance lead"), (60, 80),
        )


@service.seeder
def seed(ctx: ToolContext) -> None:
    # new_id runs SQL; without no_autoflush every row would be flushed on its own (10x slower).
    with ctx.db.no_autoflush:
        _Seeder(ctx).run()


# -- browsing and search -------------------------------------------------------------------------


@service.tool("read")
def list_folder_items(
    ctx: ToolContext,
    folder_id: FolderId | None = None,
    order_by: FileOrder = "name",
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[FileOut]:
    """List what a folder holds (subfolders first, then files). Without folder_id, lists the root folder.

    Items in the trash are not listed (see list_trash), except when the folder itself is in the trash.

    Args:
        folder_id: The folder to list, e.g. folder_0002; omit for the root folder ("All Files").
        order_by: name (A-Z, default), modified_at or created_at (newest first), or size (largest first).
        limit: Maximum number of items to return (1-100).
        cursor: next_cursor from a previous page.
    """
    folder = _folder(ctx, folder_id)
    stmt = select(Item).where(Item.parent_id == folder.id)
    if not folder.trashed:
        stmt = stmt.where(Item.trashed.is_(False))
    stmt = _order(stmt.order_by(case((Item.kind == "folder", 0), else_=1)), order_by)
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[FileOut](items=_file_outs(ctx, rows), total=total, next_cursor=next_cursor)


@service.tool("read")
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
) -> Page[FileOut]:
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
    stmt = select(Item).where(Item.kind == "file", Item.trashed.is_(in_trash))
    for word in (query or "").split():
        stmt = stmt.where(
            or_(Item.name.icontains(word, autoescape=True), Item.content.icontains(word, autoescape=True))
        )
    if name and name.strip():
        stmt = stmt.where(Item.name.icontains(name.strip(), autoescape=True))
    for mentioned in (company_name, person_name):
        if mentioned and mentioned.strip():
            text = mentioned.strip()
            stmt = stmt.where(
                or_(Item.name.icontains(text, autoescape=True), Item.content.icontains(text, autoescape=True))
            )
    if owner_email:
        stmt = stmt.where(Item.owner_email == owner_email.lower())
    if shared_with_email:
        stmt = stmt.where(Item.id.in_(select(Share.item_id).where(Share.email == shared_with_email.lower())))
    if mime_type and mime_type.strip():
        mime = mime_type.strip().lower()
        if mime.endswith("/*"):
            stmt = stmt.where(Item.mime_type.startswith(mime[:-1], autoescape=True))
        else:
            stmt = stmt.where(Item.mime_type == mime)
    if folder_id is not None:
        folder = _folder(ctx, folder_id)
        folders = [folder.id, *(i for i in _descendants(ctx, folder.id))]
        stmt = stmt.where(Item.parent_id.in_(folders))
    if modified_after:
        stmt = stmt.where(Item.modified_at >= f"{modified_after}T00:00:00Z")
    if modified_before:
        stmt = stmt.where(Item.modified_at < f"{modified_before}T00:00:00Z")
    rows, total, next_cursor = paginate(ctx, _order(stmt, order_by), limit, cursor)
    return Page[FileOut](items=_file_outs(ctx, rows), total=total, next_cursor=next_cursor)


@service.tool("read")
def search_folders(
    ctx: ToolContext,
    query: str | None = None,
    parent_id: FolderId | None = None,
    include_trashed: bool = False,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[FolderOut]:
    """Find folders by name, e.g. a client's folder by the company's name.

    Args:
        query: Text the folder name must contain (case-insensitive), e.g. a company name or "Invoices".
        parent_id: Only folders directly inside this folder.
        include_trashed: Also return folders that are in the trash.
        limit: Maximum number of folders to return (1-100).
        cursor: next_cursor from a previous page.
    """
    stmt = select(Item).where(Item.kind == "folder").order_by(func.lower(Item.name), Item.id)
    if query and query.strip():
        stmt = stmt.where(Item.name.icontains(query.strip(), autoescape=True))
    if parent_id is not None:
        stmt = stmt.where(Item.parent_id == _folder(ctx, parent_id).id)
    if not include_trashed:
        stmt = stmt.where(Item.trashed.is_(False))
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[FolderOut](items=_folder_outs(ctx, rows), total=total, next_cursor=next_cursor)


@service.tool("read")
def get_file(ctx: ToolContext, file_id: FileId) -> FileOut:
    """Get a file's or folder's metadata: name, path, type, size, owner, dates, version, who it is shared with.

    Args:
        file_id: The file's (or folder's) id, e.g. file_0042.
    """
    return _file_out(ctx, _item(ctx, file_id))


@service.tool("read")
def download_file(ctx: ToolContext, file_id: FileId) -> FileContentOut:
    """Read a file's text content (for PDFs and Office documents, their extracted text). Images have no text.

    Args:
        file_id: The file to read, e.g. file_0042.
    """
    item = _file(ctx, file_id)
    if item.content is None:
        raise ToolError.invalid_argument(
            f"File {file_id} ({item.name!r}, {item.mime_type}) has no text content; use get_file for its metadata."
        )
    paths = _folder_paths(ctx)
    return FileContentOut(
        id=item.id,
        name=item.name,
        path=_path(paths, item),
        mime_type=item.mime_type or "text/plain",
        size=item.size,
        version=item.version,
        modified_at=item.modified_at,
        content=item.content,
    )


@service.tool("read")
def find_file_by_shared_link(ctx: ToolContext, url: URL) -> FileOut:
    """Find the file or folder a shared link points to, e.g. a link someone pasted into an email or chat.

    Args:
        url: The shared link, e.g. https://files.example/s/3f9a1c0d2b7e4a61.
    """
    item = ctx.db.scalar(select(Item).where(Item.shared_link_url == url.strip().rstrip("/")))
    if item is None or item.trashed:
        raise ToolError(
            "not_found",
            f"No shared link {url!r} exists (it may have been removed, or its file trashed). "
            "Ask the sender for a new link, or use search_files.",
        )
    if item.shared_link_expires_on is not None and item.shared_link_expires_on < ctx.now_iso[:10]:
        raise ToolError.invalid_state(
            f"The shared link {url} expired on {item.shared_link_expires_on}; "
            f"the owner ({item.owner_email}) can renew it with create_shared_link."
        )
    return _file_out(ctx, item)


@service.tool("read")
def list_trash(ctx: ToolContext, limit: Limit = 20, cursor: Cursor = None) -> Page[FileOut]:
    """List the files and folders in the trash, most recently trashed first.

    Items trashed along with their folder are not listed separately: restore the folder.

    Args:
        limit: Maximum number of items to return (1-100).
        cursor: next_cursor from a previous page.
    """
    stmt = select(Item).where(Item.explicitly_trashed.is_(True)).order_by(Item.trashed_at.desc(), Item.id)
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[FileOut](items=_file_outs(ctx, rows), total=total, next_cursor=next_cursor)


@service.tool("read")
def list_shares(ctx: ToolContext, file_id: FileId, limit: Limit = 20, cursor: Cursor = None) -> Page[ShareOut]:
    """List the people a file or folder is shared with, and their roles.

    Args:
        file_id: The file or folder, e.g. file_0042.
        limit: Maximum number of shares to return (1-100).
        cursor: next_cursor from a previous page.
    """
    item = _item(ctx, file_id)
    stmt = select(Share).where(Share.item_id == item.id).order_by(Share.email, Share.id)
    rows, total, next_cursor = paginate(ctx, stmt, limit, cursor)
    return Page[ShareOut](items=[_share_out(ctx, s) for s in rows], total=total, next_cursor=next_cursor)


# -- creating and editing ------------------------------------------------------------------------


@service.tool("write")
def create_file(
    ctx: ToolContext,
    name: FileName,
    content: Text,
    folder_id: FolderId | None = None,
    mime_type: TextMimeType | None = None,
    description: Text | None = None,
) -> FileOut:
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
    me = ctx.world.user.email
    item = Item(
        id=ctx.new_id("file"),
        kind="file",
        name=name,
        parent_id=folder.id,
        mime_type=mime_type or guessed or "text/plain",
        size=len(content.encode()),
        content=content,
        description=description.strip() if description and description.strip() else None,
        owner_email=me,
        created_at=ctx.now_iso,
        modified_at=ctx.now_iso,
        modified_by_email=me,
        version=1,
    )
    ctx.db.add(item)
    ctx.db.flush()
    return _file_out(ctx, item)


@service.tool("write")
def create_folder(ctx: ToolContext, name: FileName, parent_id: FolderId | None = None) -> FolderOut:
    """Create an empty folder. The name must be free in the parent folder.

    Args:
        name: The new folder's name, e.g. "Contracts 2025".
        parent_id: The folder to create it in; omit for the root folder.
    """
    name = _clean_name(name)
    parent = _open_folder(ctx, parent_id, "add folders to")
    _check_name_free(ctx, parent, name)
    me = ctx.world.user.email
    folder = Item(
        id=ctx.new_id("folder"),
        kind="folder",
        name=name,
        parent_id=parent.id,
        mime_type=None,
        size=0,
        content=None,
        description=None,
        owner_email=me,
        created_at=ctx.now_iso,
        modified_at=ctx.now_iso,
        modified_by_email=me,
        version=1,
    )
    ctx.db.add(folder)
    ctx.db.flush()
    return _folder_outs(ctx, [folder])[0]


@service.tool("write")
def update_file_content(ctx: ToolContext, file_id: FileId, content: Text) -> FileOut:
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
    item.content = content
    item.size = len(content.encode())
    item.version += 1
    _touch(ctx, item)
    return _file_out(ctx, item)


@service.tool("write")
def rename_file(ctx: ToolContext, file_id: FileId, new_name: FileName) -> FileOut:
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
        raise ToolError.invalid_argument(f"{item.kind.capitalize()} {file_id} is already named {new_name!r}.")
    _check_name_free(ctx, _folder(ctx, item.parent_id), new_name, exclude_id=item.id)
    item.name = new_name
    _touch(ctx, item)
    return _file_out(ctx, item)


@service.tool("write")
def move_file(ctx: ToolContext, file_id: FileId, folder_id: FolderId) -> FileOut:
    """Move a file or folder (with everything in it) into another folder.

    Args:
        file_id: The file or folder to move.
        folder_id: The destination folder; it must not be the item itself or inside it.
    """
    item = _item(ctx, file_id)
    _not_root(item, "moved")
    _not_trashed(item, "moved")
    target = _open_folder(ctx, folder_id, "move items into")
    if target.id == item.id or (item.kind == "folder" and target.id in _descendants(ctx, item.id)):
        raise ToolError.invalid_argument(f"Folder {item.id} cannot be moved into itself or one of its own subfolders.")
    if item.parent_id == target.id:
        raise ToolError.invalid_state(
            f"{item.kind.capitalize()} {item.id} is already in folder {target.id} ({target.name!r})."
        )
    _check_name_free(ctx, target, item.name)
    item.parent_id = target.id
    _touch(ctx, item)
    return _file_out(ctx, item)


@service.tool("write")
def copy_file(
    ctx: ToolContext, file_id: FileId, folder_id: FolderId | None = None, new_name: FileName | None = None
) -> FileOut:
    """Copy a file (folders cannot be copied). The copy is yours, with no shares and no shared link.

    Args:
        file_id: The file to copy.
        folder_id: The folder for the copy; omit to copy into the same folder.
        new_name: The copy's name; by default the same name, or "Copy of <name>" in the same folder.
    """
    item = _item(ctx, file_id)
    if item.kind == "folder":
        raise ToolError.invalid_argument(f"{file_id} is a folder; folders cannot be copied. Copy its files one by one.")
    _not_trashed(item, "copied")
    target = _open_folder(ctx, folder_id if folder_id is not None else item.parent_id, "copy files into")
    if new_name is not None:
        name = _clean_name(new_name)
    else:
        name = f"Copy of {item.name}" if target.id == item.parent_id else item.name
    _check_name_free(ctx, target, name)
    me = ctx.world.user.email
    copy = Item(
        id=ctx.new_id("file"),
        kind="file",
        name=name,
        parent_id=target.id,
        mime_type=item.mime_type,
        size=item.size,
        content=item.content,
        description=item.description,
        owner_email=me,
        created_at=ctx.now_iso,
        modified_at=ctx.now_iso,
        modified_by_email=me,
        version=1,
    )
    ctx.db.add(copy)
    ctx.db.flush()
    return _file_out(ctx, copy)


# -- sharing -------------------------------------------------------------------------------------


@service.tool("write")
def share_file(ctx: ToolContext, file_id: FileId, email: EmailAddress, role: ShareRole = "viewer") -> ShareOut:
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
    if email == ctx.world.user.email:
        raise ToolError.invalid_argument("You cannot share a file with yourself; give another person's email.")
    if email == item.owner_email:
        raise ToolError.invalid_argument(f"{email} owns {item.name!r} and already has full access.")
    share = ctx.db.scalar(select(Share).where(Share.item_id == item.id, Share.email == email))
    if share is not None:
        if share.role == role:
            raise ToolError.conflict(f"{email} already has {role} access to {item.name!r} (share {share.id}).")
        share.role = role
        share.updated_at = ctx.now_iso
    else:
        share = Share(
            id=ctx.new_id("share"),
            item_id=item.id,
            email=email,
            role=role,
            shared_by_email=ctx.world.user.email,
            created_at=ctx.now_iso,
            updated_at=ctx.now_iso,
        )
        ctx.db.add(share)
        ctx.db.flush()
    return _share_out(ctx, share)


@service.tool("write")
def remove_share(ctx: ToolContext, share_id: ShareId) -> ShareOut:
    """Stop sharing: remove one person's access to a file or folder. Returns the removed share.

    Args:
        share_id: The share to remove, from list_shares, e.g. share_0012.
    """
    share = ctx.get(Share, share_id, "share", "Use list_shares on the file to find share ids.")
    out = _share_out(ctx, share)
    ctx.db.delete(share)
    return out


@service.tool("write")
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
    if item.shared_link_url is None:
        item.shared_link_url = _link_url(ctx, item.id)
    item.shared_link_access = access
    item.shared_link_expires_on = expires_on
    return SharedLinkOut(
        file_id=item.id, file_name=item.name, url=item.shared_link_url, access=access, expires_on=expires_on
    )


@service.tool("write")
def remove_shared_link(ctx: ToolContext, file_id: FileId) -> FileOut:
    """Remove a file's or folder's shared link, so the URL stops working.

    Args:
        file_id: The file or folder whose link to remove.
    """
    item = _item(ctx, file_id)
    if item.shared_link_url is None:
        raise ToolError.invalid_state(f"{item.kind.capitalize()} {file_id} ({item.name!r}) has no shared link.")
    item.shared_link_url = None
    item.shared_link_access = None
    item.shared_link_expires_on = None
    return _file_out(ctx, item)


# -- trash ---------------------------------------------------------------------------------------


@service.tool("write")
def trash_file(ctx: ToolContext, file_id: FileId) -> FileOut:
    """Move a file or folder to the trash; a folder's contents go with it. Restore it with restore_file.

    Args:
        file_id: The file or folder to trash.
    """
    item = _item(ctx, file_id)
    _not_root(item, "trashed")
    if item.trashed:
        raise ToolError.invalid_state(f"{item.kind.capitalize()} {file_id} ({item.name!r}) is already in the trash.")
    item.trashed, item.explicitly_trashed, item.trashed_at = True, True, ctx.now_iso
    if item.kind == "folder":
        for child in _load(ctx, _descendants(ctx, item.id)):
            if not child.trashed:  # items trashed earlier keep their own trash entry
                child.trashed, child.explicitly_trashed, child.trashed_at = True, False, ctx.now_iso
    return _file_out(ctx, item)


def _load(ctx: ToolContext, ids: Iterable[str]) -> list[Item]:
    ids = list(ids)
    return list(ctx.db.scalars(select(Item).where(Item.id.in_(ids)))) if ids else []


def _restore_contents(ctx: ToolContext, folder: Item) -> None:
    """Bring back what was trashed along with a folder; items trashed on their own stay in the trash."""
    children = list(ctx.db.scalars(select(Item).where(Item.parent_id == folder.id)))
    for child in children:
        if child.trashed and not child.explicitly_trashed:
            child.trashed, child.trashed_at = False, None
            if child.kind == "folder":
                _restore_contents(ctx, child)


@service.tool("write")
def restore_file(ctx: ToolContext, file_id: FileId, folder_id: FolderId | None = None) -> FileOut:
    """Restore a file or folder from the trash, with everything that was trashed along with it.

    It goes back to its folder; if that folder is itself in the trash (or you want it elsewhere), pass folder_id.

    Args:
        file_id: The trashed file or folder, from list_trash.
        folder_id: Restore into this folder instead of the original one.
    """
    item = _item(ctx, file_id)
    if not item.trashed:
        raise ToolError.invalid_state(f"{item.kind.capitalize()} {file_id} ({item.name!r}) is not in the trash.")
    if folder_id is None:
        target = _folder(ctx, item.parent_id)
        if target.trashed:
            raise ToolError.invalid_state(
                f"{item.name!r} was in folder {target.id} ({target.name!r}), which is in the trash. "
                "Restore that folder, or pass folder_id to restore into another folder."
            )
    else:
        target = _open_folder(ctx, folder_id, "restore items into")
        if item.kind == "folder" and (target.id == item.id or target.id in _descendants(ctx, item.id)):
            raise ToolError.invalid_argument(f"Folder {item.id} cannot be restored into itself or its own subfolders.")
    _check_name_free(ctx, target, item.name)
    item.parent_id = target.id
    item.trashed, item.explicitly_trashed, item.trashed_at = False, False, None
    if item.kind == "folder":
        _restore_contents(ctx, item)
    return _file_out(ctx, item)


@service.tool("write")
def delete_file_permanently(ctx: ToolContext, file_id: FileId) -> DeletedOut:
    """Permanently delete a trashed file or folder, with a folder's contents and all their shares. Cannot be undone.

    Args:
        file_id: The trashed file or folder to delete; trash it first with trash_file.
    """
    item = _item(ctx, file_id)
    if not item.trashed:
        raise ToolError.invalid_state(
            f"{item.kind.capitalize()} {file_id} ({item.name!r}) is not in the trash; "
            "move it there with trash_file first."
        )
    ids = [item.id, *(_descendants(ctx, item.id) if item.kind == "folder" else [])]
    removed = ctx.scalar_count(select(Share.id).where(Share.item_id.in_(ids)))
    kind: ItemType = "folder" if item.kind == "folder" else "file"
    out = DeletedOut(id=item.id, type=kind, name=item.name, deleted_items=len(ids), removed_shares=removed)
    ctx.db.execute(delete(Share).where(Share.item_id.in_(ids)))
    # Children first, so no row ever points at a deleted parent.
    for item_id in reversed(ids):
        ctx.db.execute(delete(Item).where(Item.id == item_id))
    ctx.db.expunge_all()
    return out
