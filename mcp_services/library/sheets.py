"""Sheets: spreadsheets with tabs of rows under named columns (modelled on Google Sheets and Airtable).

The tables the company's workflows consult live here, from the policy plan
(``mcp_services.kernel.plans.policies``): the Account hierarchy (each customer organisation with its
tier, region, parent account and account manager), the Price list (this year's tab and last year's)
and the Routing tables (which team member takes which kind of ticket, which salesperson owns each
region's leads), and each customer event's guest list, which agrees with its registration form in
``forms``.

A sheet has a header row of column names (row 1); its data rows start at row 2 and keep their order.
Cells hold text, as a sheet shows it (no formulas). Rows are found by a cell's value (``find_rows``),
read whole or by A1 range (``get_values``), appended, updated by column name and deleted; deleting a
row moves the rows below it up, as in Google Sheets.

Who may do what (the acting user is ``world.user``): everyone at the company may open and read every
spreadsheet (link sharing within the organisation); only its owner and the people it is shared with as
``writer`` may change it (rows, tabs, columns) or share it. A ``reader``, or a colleague it is not shared
with, is refused with ``permission_denied`` and nothing changes: they ask the owner or a writer.
"""

from __future__ import annotations

import builtins
import json
import re
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from mcp_services.kernel import Cursor, Limit, Page, Service, ToolContext, ToolError, derived, field, joined
from mcp_services.kernel.pagination import page_of
from mcp_services.kernel.plans.policies import policy_plan
from mcp_services.kernel.records import RecordAccess
from mcp_services.kernel.semantic import DateTime, EmailAddress, EntityId, Subject

SpreadsheetId = EntityId("sheets.spreadsheet")
SheetId = EntityId("sheets.sheet")
RowId = EntityId("sheets.row")

#: What one cell holds: text as the sheet shows it.
Cell = Annotated[str, Field(max_length=2000)]
ColumnName = Annotated[str, Field(min_length=1, max_length=100)]
ShareRole = Literal["reader", "writer"]
#: Columns A to Z.
MAX_COLUMNS = 26

service = Service(
    "sheets",
    "Spreadsheets: tabs of rows under named columns, found by a cell's value, appended and updated; "
    "where the account hierarchy, the price list and the routing tables live.",
    title="Sheets",
)


def _tabs(db: RecordAccess, spreadsheets: Sequence[Spreadsheet]) -> list[list[dict[str, Any]]]:
    ids = [s.id for s in spreadsheets]
    marks = ", ".join("?" for _ in ids)
    counts = dict(db.sql("SELECT sheet_id, COUNT(*) FROM sheet_rows GROUP BY 1"))
    tabs: dict[str, list[dict[str, Any]]] = {i: [] for i in ids}
    for sheet_id, spreadsheet_id, title in db.sql(
        f"SELECT id, spreadsheet_id, title FROM sheets WHERE spreadsheet_id IN ({marks}) ORDER BY position, id", *ids
    ):
        tabs[spreadsheet_id].append({"sheet_id": sheet_id, "title": title, "row_count": int(counts.get(sheet_id, 0))})
    return [tabs[i] for i in ids]


@service.entity(table="spreadsheets", prefix="ss", label="title", search=("title",))
class Spreadsheet:
    """A spreadsheet: a file with one or more sheets (tabs)."""

    id: SpreadsheetId
    title: Subject = field(index=True)
    owner_email: EmailAddress = field(role="owner")
    access: dict[EmailAddress, str] = field(
        role="shared with", description="Who else may open it: email -> reader or writer"
    )
    created_at: DateTime
    updated_at: DateTime

    sheets = derived(list[dict[str, Any]], batch=_tabs, description="Its tabs in order: sheet_id, title, row_count")


def _row_counts(db: RecordAccess, sheets: Sequence[Sheet]) -> list[int]:
    counts = dict(db.sql("SELECT sheet_id, COUNT(*) FROM sheet_rows GROUP BY 1"))
    return [int(counts.get(s.id, 0)) for s in sheets]


@service.entity(table="sheets", prefix="sh", label="title", search=("title",))
class Sheet:
    """One tab of a spreadsheet: its column names (the header row) and its rows."""

    id: SheetId
    spreadsheet_id: SpreadsheetId = field(index=True)
    title: str
    columns: list[str]
    position: int
    created_at: DateTime

    spreadsheet_title = joined(str, via="spreadsheet_id", field="title")
    row_count = derived(int, batch=_row_counts, description="Data rows (the header row not counted)")


def _row_numbers(db: RecordAccess, rows: Sequence[Row]) -> list[int]:
    order: dict[str, int] = {}
    for sheet_id in sorted({r.sheet_id for r in rows}):
        ranked = db.sql("SELECT id FROM sheet_rows WHERE sheet_id = ? ORDER BY position, id", sheet_id)
        order.update({rid: n for n, (rid,) in enumerate(ranked, 2)})
    return [order.get(r.id, 0) for r in rows]


def _values(db: RecordAccess, rows: Sequence[Row]) -> list[dict[str, str]]:
    sheets = sorted({r.sheet_id for r in rows})
    marks = ", ".join("?" for _ in sheets)
    columns = {
        sid: _json_list(text) for sid, text in db.sql(f"SELECT id, columns FROM sheets WHERE id IN ({marks})", *sheets)
    }
    return [_as_values(columns.get(r.sheet_id, []), r.cells) for r in rows]


def _json_list(text: Any) -> list[str]:
    return list(json.loads(text)) if isinstance(text, str) else list(text or [])


def _as_values(columns: Sequence[str], cells: Sequence[str]) -> dict[str, str]:
    return {name: (cells[i] if i < len(cells) else "") for i, name in enumerate(columns)}


@service.entity(table="sheet_rows", prefix="rw", label="key", search=("key",))
class Row:
    """A data row of a sheet: its cells in column order."""

    id: RowId
    sheet_id: SheetId = field(index=True)
    position: int
    cells: list[str]
    key: str = field(index=True, description="The row's first cell (its primary field)")
    created_at: DateTime
    updated_at: DateTime

    sheet_title = joined(str, via="sheet_id", field="title")
    spreadsheet_id = joined(str, via="sheet_id", field="spreadsheet_id")
    row_number = derived(int, batch=_row_numbers, description="Where it is in the sheet (the header is row 1)")
    values = derived(dict[str, str], batch=_values, description="Its cells by column name")


class RangeValues(BaseModel):
    """The cells of an A1 range, row by row (row 1 is the header row)."""

    sheet_id: str
    range: str
    values: list[list[str]]


# -- rules shared by the tools -------------------------------------------------------------------

_SHEET_HINT = "Use get_spreadsheet or list_sheets to find sheet ids."
_ROW_HINT = "Use find_rows or list_rows to find row ids."


def _sheet(ctx: ToolContext, sheet_id: str) -> Sheet:
    return ctx.get(Sheet, sheet_id, hint=_SHEET_HINT)


def access_of(spreadsheet: Spreadsheet, email: str) -> Literal["owner", "writer", "reader"] | None:
    """What ``email`` may do on a spreadsheet: owner, writer, reader, or None (not shared with them)."""
    address = email.strip().lower()
    if address == spreadsheet.owner_email:
        return "owner"
    role = spreadsheet.access.get(address)
    return "writer" if role == "writer" else "reader" if role == "reader" else None


def _editable(ctx: ToolContext, spreadsheet: Spreadsheet, action: str) -> Spreadsheet:
    """The spreadsheet, if the user may change it (its owner or a writer); else permission_denied."""
    role = access_of(spreadsheet, ctx.world.user.email)
    if role in ("owner", "writer"):
        return spreadsheet
    standing = "only a reader of" if role == "reader" else "not among the people who may edit"
    writers = [e for e, r in sorted(spreadsheet.access.items()) if r == "writer"]
    ask = f"{spreadsheet.owner_email} (its owner)" + (f" or {', '.join(writers)} (writer)" if writers else "")
    raise ToolError.permission_denied(
        f"You are {standing} {spreadsheet.title!r}, so you cannot {action}; ask {ask} to do it or to make you a writer."
    )


def _editable_sheet(ctx: ToolContext, sheet_id: str, action: str) -> Sheet:
    sheet = _sheet(ctx, sheet_id)
    _editable(ctx, ctx.get(Spreadsheet, sheet.spreadsheet_id), action)
    return sheet


def _column_index(sheet: Sheet, name: str) -> int:
    wanted = " ".join(name.split()).casefold()
    for i, column in enumerate(sheet.columns):
        if column.casefold() == wanted:
            return i
    raise ToolError.invalid_argument(
        f"Sheet {sheet.title!r} has no column {name[:60]!r}; its columns: {', '.join(sheet.columns)}."
    )


def _columns(names: Sequence[str]) -> list[str]:
    clean = [" ".join(n.split()) for n in names]
    if not clean or any(not n for n in clean):
        raise ToolError.invalid_argument("Give at least one column, and no blank column names.")
    if len(clean) > MAX_COLUMNS:
        raise ToolError.invalid_argument(f"A sheet has at most {MAX_COLUMNS} columns (A to Z).")
    if len({n.casefold() for n in clean}) != len(clean):
        raise ToolError.invalid_argument("Column names must differ from each other.")
    return clean


def _cell(value: str) -> str:
    return " ".join(value.split()) if "\n" not in value else value.strip()


def _touch(ctx: ToolContext, sheet: Sheet) -> None:
    spreadsheet = ctx.get(Spreadsheet, sheet.spreadsheet_id)
    ctx.update(spreadsheet, updated_at=ctx.now_iso)


def _new_row(ctx: ToolContext, sheet: Sheet, cells: list[str], at: str | None = None) -> Row:
    if not any(c for c in cells):
        raise ToolError.invalid_argument("The row would be empty; give at least one non-blank value.")
    (last,) = ctx.sql("SELECT COALESCE(MAX(position), 0) FROM sheet_rows WHERE sheet_id = ?", sheet.id)[0]
    moment = at or ctx.now_iso
    return ctx.insert(
        Row(
            id=ctx.new_id("rw"),
            sheet_id=sheet.id,
            position=int(last) + 1,
            cells=cells,
            key=cells[0] if cells else "",
            created_at=moment,
            updated_at=moment,
        )
    )


def _cells_from(sheet: Sheet, values: list[str] | None, fields: dict[str, str] | None) -> list[str]:
    if (values is None) == (fields is None):
        raise ToolError.invalid_argument(
            "Pass either values (the cells in column order) or fields (cells by column name), not both and not neither."
        )
    if values is not None:
        if len(values) > len(sheet.columns):
            raise ToolError.invalid_argument(
                f"Sheet {sheet.title!r} has {len(sheet.columns)} columns ({', '.join(sheet.columns)}) but "
                f"{len(values)} "
                "values were given."
            )
        return [_cell(v) for v in values] + [""] * (len(sheet.columns) - len(values))
    cells = [""] * len(sheet.columns)
    for name, value in (fields or {}).items():
        cells[_column_index(sheet, name)] = _cell(value)
    return cells


# -- seed ----------------------------------------------------------------------------------------


def _money(value: float) -> str:
    return f"{value:.2f}"


@service.seeder
def seed(ctx: ToolContext) -> None:
    """The Account hierarchy, Price list and Routing spreadsheets of the policy plan, the events' guest lists, and a
    couple of everyday sheets."""
    world = ctx.world
    plan = policy_plan(world)
    team = {p.job_title: p for p in world.team}
    spreadsheets: list[Spreadsheet] = []
    sheets: list[Sheet] = []
    rows: list[Row] = []

    def book(title: str, owner: str, shared: Sequence[str], days_ago: int) -> Spreadsheet:
        # The first colleague it is shared with may edit it; the others read it.
        made = Spreadsheet(
            id=ctx.new_id("ss"),
            title=title,
            owner_email=team[owner].email,
            access={team[r].email: "writer" if n == 0 else "reader" for n, r in enumerate(shared)},
            created_at=ctx.days_from_now(-days_ago - 200),
            updated_at=ctx.days_from_now(-days_ago),
        )
        spreadsheets.append(made)
        return made

    def tab(book_: Spreadsheet, title: str, columns: Sequence[str], data: Sequence[Sequence[str]]) -> Sheet:
        made = Sheet(
            id=ctx.new_id("sh"),
            spreadsheet_id=book_.id,
            title=title,
            columns=list(columns),
            position=sum(1 for s in sheets if s.spreadsheet_id == book_.id),
            created_at=book_.created_at,
        )
        sheets.append(made)
        for n, cells in enumerate(data, 1):
            rows.append(
                Row(
                    id=ctx.new_id("rw"),
                    sheet_id=made.id,
                    position=n,
                    cells=list(cells),
                    key=cells[0],
                    created_at=book_.created_at,
                    updated_at=book_.updated_at,
                )
            )
        return made

    accounts = book("Account hierarchy", "sales lead", ("account executive", "support lead", "operations manager"), 9)
    tab(
        accounts,
        "Accounts",
        ("Company", "Domain", "Parent account", "Tier", "Region", "Account manager", "Account manager email"),
        [
            (a.company, a.domain, a.parent or "", a.tier, a.region, a.manager_name, a.manager_email)
            for a in plan.accounts
        ],
    )
    prices = book("Price list", "finance lead", ("sales lead", "account executive", "accountant"), 30)
    columns = ("SKU", "Product", "Category", "List price (USD)", "Max discount (%)")
    tab(
        prices,
        f"{plan.year} prices",
        columns,
        [(p.sku, p.product, p.category, _money(p.list_price), str(p.max_discount)) for p in plan.price_list],
    )
    tab(
        prices,
        f"{plan.year - 1} prices",
        columns,
        [
            (p.sku, p.product, p.category, _money(p.last_year_price), str(p.last_year_max_discount))
            for p in plan.price_list
        ],
    )
    routing = book("Routing", "support lead", ("support agent", "sales lead", "operations manager"), 20)
    tab(
        routing,
        "Support queues",
        ("Category", "Covers", "Assignee", "Assignee email", "Default priority", "Escalation contact"),
        [
            (q.category, q.covers, q.assignee_name, q.assignee_email, q.priority, q.escalation_email)
            for q in plan.queues
        ],
    )
    tab(
        routing,
        "Lead routing",
        ("Region", "Owner", "Owner email"),
        [(r.region, r.owner_name, r.owner_email) for r in plan.lead_routes],
    )
    for event in plan.events:
        # The operations manager runs the guest lists with the office manager; sales only reads them.
        guests = book(event.guest_list_title, "office manager", ("operations manager", "sales lead"), 1)
        tab(
            guests,
            "Guests",
            ("Name", "Email", "Company", "Status", "Registered at"),
            [(r.name, r.email, r.company, r.status, r.registered_at) for r in event.registrations],
        )
    supplies = book("Office supplies order", "office manager", ("operations manager",), 4)
    tab(
        supplies,
        "This month",
        ("Item", "Quantity", "Requested by", "Status"),
        [
            (p.name, str(q), team[role].name, status)
            for p, q, role, status in (
                (next(x for x in world.products if x.category == "supplies"), 4, "office manager", "Ordered"),
                (next(x for x in world.products if x.category == "pantry"), 6, "operations manager", "Requested"),
                (next(x for x in world.products if x.name == "USB-C cable 2m"), 10, "engineering lead", "Requested"),
            )
        ],
    )
    rota = book("Support rota", "support lead", ("support agent",), 3)
    tab(
        rota,
        "Weekend cover",
        ("Week starting", "Primary", "Backup"),
        [
            (ctx.days_from_now(7 * n - world.now_dt.weekday())[:10], team[a].name, team[b].name)
            for n, (a, b) in enumerate(
                (
                    ("support agent", "support lead"),
                    ("support lead", "support agent"),
                    ("support agent", "support lead"),
                )
            )
        ],
    )
    ctx.insert_many(spreadsheets)
    ctx.insert_many(sheets)
    ctx.insert_many(rows)


# -- spreadsheets and sheets ---------------------------------------------------------------------


@service.tool("read", intent="find", phrases=("look for the {query} spreadsheet", "find the sheet called {query}"))
def list_spreadsheets(
    ctx: ToolContext, query: str | None = None, limit: Limit = 20, cursor: Cursor = None
) -> Page[Spreadsheet]:
    """List spreadsheets by words in their title, most recently changed first, with their tabs.

    Args:
        query: Words to find in the title (every word must appear, case-insensitive).
        limit: Maximum number of spreadsheets to return (1-100).
        cursor: next_cursor from a previous page.
    """
    return ctx.query(Spreadsheet).search(query).order_by("-updated_at").page(limit, cursor)


@service.tool(
    "read", intent="get", phrases=("open the spreadsheet {spreadsheet_id}", "look at the tabs of {spreadsheet_id}")
)
def get_spreadsheet(ctx: ToolContext, spreadsheet_id: SpreadsheetId) -> Spreadsheet:
    """Get a spreadsheet with its tabs (sheet ids, titles and row counts), its owner and who it is shared with.

    Everyone at the company may read it; only the owner and its writers may change it.

    Args:
        spreadsheet_id: The spreadsheet's id, e.g. ss_0002 (see list_spreadsheets).
    """
    return ctx.get(Spreadsheet, spreadsheet_id, hint="Use list_spreadsheets to find spreadsheet ids.")


@service.tool(
    "read", intent="find", phrases=("list the tabs of {spreadsheet_id}", "check the columns of {spreadsheet_id}")
)
def list_sheets(ctx: ToolContext, spreadsheet_id: SpreadsheetId) -> list[Sheet]:
    """The tabs of a spreadsheet in order, with each one's column names and row count.

    Args:
        spreadsheet_id: The spreadsheet.
    """
    spreadsheet = ctx.get(Spreadsheet, spreadsheet_id, hint="Use list_spreadsheets to find spreadsheet ids.")
    return ctx.query(Sheet).where(spreadsheet_id=spreadsheet.id).order_by("position").all()


@service.tool(
    "write",
    intent="create",
    phrases=("start a spreadsheet called {title}", "create a new sheet {title} with the columns {columns}"),
)
def create_spreadsheet(
    ctx: ToolContext, title: Subject, columns: list[ColumnName], sheet_title: ColumnName = "Sheet1"
) -> Spreadsheet:
    """Create a spreadsheet, owned by you, with one tab and its header row.

    Args:
        title: The spreadsheet's title.
        columns: The first tab's column names, in order (at most 26).
        sheet_title: The first tab's title (default Sheet1).
    """
    clean = " ".join(title.split())
    if not clean:
        raise ToolError.invalid_argument("title must not be empty.")
    made = ctx.insert(
        Spreadsheet(
            id=ctx.new_id("ss"),
            title=clean,
            owner_email=ctx.world.user.email,
            access={},
            created_at=ctx.now_iso,
            updated_at=ctx.now_iso,
        )
    )
    ctx.insert(
        Sheet(
            id=ctx.new_id("sh"),
            spreadsheet_id=made.id,
            title=" ".join(sheet_title.split()) or "Sheet1",
            columns=_columns(columns),
            position=0,
            created_at=ctx.now_iso,
        )
    )
    return made


@service.tool(
    "write",
    intent="create",
    phrases=("add a tab {title} to {spreadsheet_id}", "create a new sheet {title} in {spreadsheet_id}"),
)
def add_sheet(ctx: ToolContext, spreadsheet_id: SpreadsheetId, title: ColumnName, columns: list[ColumnName]) -> Sheet:
    """Add a tab at the end of a spreadsheet. Tab titles are unique within a spreadsheet. Owner and writers only.

    Args:
        spreadsheet_id: The spreadsheet.
        title: The new tab's title.
        columns: Its column names, in order (at most 26).
    """
    spreadsheet = ctx.get(Spreadsheet, spreadsheet_id, hint="Use list_spreadsheets to find spreadsheet ids.")
    _editable(ctx, spreadsheet, "add a tab to it")
    clean = " ".join(title.split())
    if not clean:
        raise ToolError.invalid_argument("title must not be empty.")
    tabs = ctx.query(Sheet).where(spreadsheet_id=spreadsheet.id).all()
    if any(t.title.casefold() == clean.casefold() for t in tabs):
        raise ToolError.conflict(f"Spreadsheet {spreadsheet.title!r} already has a tab {clean!r}.")
    made = ctx.insert(
        Sheet(
            id=ctx.new_id("sh"),
            spreadsheet_id=spreadsheet.id,
            title=clean,
            columns=_columns(columns),
            position=len(tabs),
            created_at=ctx.now_iso,
        )
    )
    ctx.update(spreadsheet, updated_at=ctx.now_iso)
    return made


@service.tool(
    "write", intent="update", phrases=("add a column {name} to {sheet_id}", "put a new {name} column on {sheet_id}")
)
def add_column(ctx: ToolContext, sheet_id: SheetId, name: ColumnName) -> Sheet:
    """Add a column at the right end of a sheet; its cells start empty. Owner and writers only.

    Args:
        sheet_id: The sheet (tab).
        name: The new column's name (unique in the sheet).
    """
    sheet = _editable_sheet(ctx, sheet_id, "add a column to it")
    updated = ctx.update(sheet, columns=_columns([*sheet.columns, name]))
    _touch(ctx, sheet)
    return updated


@service.tool(
    "write",
    intent="share",
    phrases=("share {spreadsheet_id} with {email}", "give {email} access to the spreadsheet {spreadsheet_id}"),
)
def share_spreadsheet(
    ctx: ToolContext, spreadsheet_id: SpreadsheetId, email: EmailAddress, role: ShareRole = "reader"
) -> Spreadsheet:
    """Share a spreadsheet with someone by email (reader: view only; writer: may edit), or change their access.

    Only its owner and its writers may share it (see get_spreadsheet for who they are).

    Args:
        spreadsheet_id: The spreadsheet.
        email: Who to share it with.
        role: reader (default) or writer.
    """
    spreadsheet = ctx.get(Spreadsheet, spreadsheet_id, hint="Use list_spreadsheets to find spreadsheet ids.")
    _editable(ctx, spreadsheet, "share it")
    address = email.strip().lower()
    if address == spreadsheet.owner_email:
        raise ToolError.invalid_state(f"{address} owns {spreadsheet.title!r} already.")
    if spreadsheet.access.get(address) == role:
        raise ToolError.invalid_state(f"{address} is already a {role} of {spreadsheet.title!r}.")
    return ctx.update(spreadsheet, access={**spreadsheet.access, address: role}, updated_at=ctx.now_iso)


# -- rows ----------------------------------------------------------------------------------------




@service.tool("read", intent="find", phrases=("go through the rows of {sheet_id}", "read the sheet {sheet_id}"))
def list_rows(ctx: ToolContext, sheet_id: SheetId, limit: Limit = 50, cursor: Cursor = None) -> Page[Row]:
    """The data rows of a sheet, top to bottom, each with its cells by column name and its row number.

    Args:
        sheet_id: The sheet (tab), e.g. sh_0003 (see get_spreadsheet).
        limit: Maximum number of rows to return (1-100).
        cursor: next_cursor from a previous page.
    """
    sheet = _sheet(ctx, sheet_id)
    return ctx.query(Row).where(sheet_id=sheet.id).order_by("position").page(limit, cursor)


@service.tool(
    "read",
    intent="find",
    phrases=("look up {value} in the {column} column of {spreadsheet_id}", "find the row for {value} in {sheet_id}"),
)
def find_rows(
    ctx: ToolContext,
    value: Cell,
    sheet_id: SheetId | None = None,
    spreadsheet_id: SpreadsheetId | None = None,
    column: ColumnName | None = None,
    match: Literal["exact", "contains"] = "exact",
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Page[Row]:
    """Find rows by a cell's value, in one sheet or in every tab of a spreadsheet (the lookup people do by hand).

    Comparison ignores case and extra spaces. Each row says which tab it is in (sheet_title).

    Args:
        value: The value to look for, e.g. a company name or a SKU.
        sheet_id: Look in this sheet (tab) only.
        spreadsheet_id: Look in every tab of this spreadsheet (when sheet_id is not given).
        column: Only compare this column (by name); default: every column.
        match: exact (default: the whole cell equals the value) or contains (the cell contains it).
        limit: Maximum number of rows to return (1-100).
        cursor: next_cursor from a previous page.
    """
    wanted = " ".join(value.split()).casefold()
    if not wanted:
        raise ToolError.invalid_argument("value must not be blank.")
    if sheet_id is not None:
        tabs = [_sheet(ctx, sheet_id)]
    elif spreadsheet_id is not None:
        spreadsheet = ctx.get(Spreadsheet, spreadsheet_id, hint="Use list_spreadsheets to find spreadsheet ids.")
        tabs = ctx.query(Sheet).where(spreadsheet_id=spreadsheet.id).order_by("position").all()
    else:
        raise ToolError.invalid_argument("Pass sheet_id (one tab) or spreadsheet_id (all its tabs).")
    found: list[Row] = []
    for tab in tabs:
        if column is not None:
            try:
                where = [_column_index(tab, column)]
            except ToolError:
                if sheet_id is not None:
                    raise
                continue  # a tab without that column has no match in it
        else:
            where = list(range(len(tab.columns)))
        for row in ctx.query(Row).where(sheet_id=tab.id).order_by("position").all():
            cells = [" ".join(row.cells[i].split()).casefold() for i in where if i < len(row.cells)]
            if any(c == wanted if match == "exact" else wanted in c for c in cells):
                found.append(row)
    return page_of(found, limit, cursor)


@service.tool("read", intent="get", phrases=("open the row {row_id}", "pull up the row {row_id}"))
def get_row(ctx: ToolContext, row_id: RowId) -> Row:
    """Get one row with its cells by column name, its tab and its row number.

    Args:
        row_id: The row's id, e.g. rw_0042 (see find_rows).
    """
    return ctx.get(Row, row_id, hint=_ROW_HINT)


_A1 = re.compile(r"^([A-Z]{1,2})?(\d+)?(?::([A-Z]{1,2})?(\d+)?)?$")


def _column_number(letters: str) -> int:
    number = 0
    for char in letters:
        number = number * 26 + (ord(char) - 64)
    return number


@service.tool(
    "read", intent="check", phrases=("read the range {range} of {sheet_id}", "look at the cells {range} in {sheet_id}")
)
def get_values(
    ctx: ToolContext, sheet_id: SheetId, range: Annotated[str, Field(max_length=20)] = "A1:Z1000"
) -> RangeValues:  # noqa: A002 - the Sheets API's name
    """Read the cells of an A1 range as rows of text, the header being row 1 (e.g. "A1:D10", "B:B", "A2:E2").

    Args:
        sheet_id: The sheet (tab).
        range: An A1 range within the sheet: columns A-Z, rows from 1 (default: everything).
    """
    sheet = _sheet(ctx, sheet_id)
    text = range.strip().upper()
    parsed = _A1.match(text)
    if not text or parsed is None or not any(parsed.groups()):
        raise ToolError.invalid_argument(f"{range[:20]!r} is not an A1 range; write it like A1:D10, B:B or A2.")
    first_col, first_row, last_col, last_row = parsed.groups()
    single = ":" not in text
    c1 = _column_number(first_col) if first_col else 1
    c2 = _column_number(last_col) if last_col else (c1 if single and first_col else len(sheet.columns))
    r1 = int(first_row) if first_row else 1
    r2 = int(last_row) if last_row else (r1 if single and first_row else 1_000_000)
    if c1 < 1 or r1 < 1 or c2 < c1 or r2 < r1:
        raise ToolError.invalid_argument(f"{range[:20]!r} is not a valid range: its end comes before its start.")
    if c1 > MAX_COLUMNS:
        raise ToolError.invalid_argument(f"Column {first_col} is beyond Z; sheets have columns A to Z.")
    table = [list(sheet.columns)] + [
        r.cells for r in ctx.query(Row).where(sheet_id=sheet.id).order_by("position").all()
    ]
    width = len(sheet.columns)
    out = [
        [(line[c] if c < len(line) else "") for c in builtins.range(c1 - 1, min(c2, width))]
        for line in table[r1 - 1 : min(r2, len(table))]
    ]
    return RangeValues(sheet_id=sheet.id, range=text, values=out)


@service.tool(
    "write",
    intent="create",
    phrases=("add a row to {sheet_id} with {fields}", "append {values} to the sheet {sheet_id}"),
)
def append_row(
    ctx: ToolContext,
    sheet_id: SheetId,
    values: list[Cell] | None = None,
    fields: dict[ColumnName, Cell] | None = None,
) -> Row:
    """Add a row below the last row of a sheet.

    Give the cells either in column order (values) or by column name (fields); cells you leave out stay empty.
    Only the spreadsheet's owner and writers may add rows; a reader is refused (see get_spreadsheet's access).

    Args:
        sheet_id: The sheet (tab) to add to (see get_spreadsheet for its columns).
        values: The cells in column order, e.g. ["Ana Ruiz", "ana@brightline.example"].
        fields: The cells by column name, e.g. {"Name": "Ana Ruiz", "Status": "Registered"}.
    """
    sheet = _editable_sheet(ctx, sheet_id, "add rows to it")
    row = _new_row(ctx, sheet, _cells_from(sheet, values, fields))
    _touch(ctx, sheet)
    return row


@service.tool(
    "write",
    intent="update",
    phrases=("update {row_id} with {fields}", "change the row {row_id} to {fields}"),
)
def update_row(ctx: ToolContext, row_id: RowId, fields: dict[ColumnName, Cell]) -> Row:
    """Change cells of a row by column name; the other cells stay as they are. Owner and writers only.

    Args:
        row_id: The row to change (see find_rows).
        fields: The new cell values by column name, e.g. {"Status": "Waitlist"}.
    """
    row = ctx.get(Row, row_id, hint=_ROW_HINT)
    sheet = _editable_sheet(ctx, row.sheet_id, "change its rows")
    if not fields:
        raise ToolError.invalid_argument("Pass at least one column to change in fields.")
    cells = list(row.cells) + [""] * max(0, len(sheet.columns) - len(row.cells))
    for name, value in fields.items():
        cells[_column_index(sheet, name)] = _cell(value)
    if cells == list(row.cells) + [""] * max(0, len(sheet.columns) - len(row.cells)):
        raise ToolError.invalid_argument("Those cells already hold these values; nothing would change.")
    if not any(cells):
        raise ToolError.invalid_argument("The row would be empty; use delete_row to remove it.")
    updated = ctx.update(row, cells=cells, key=cells[0], updated_at=ctx.now_iso)
    _touch(ctx, sheet)
    return updated


class DeletedRow(BaseModel):
    """A row that was deleted: where it was and what it held."""

    row_id: str
    sheet_id: str
    row_number: int
    values: dict[str, str]


@service.tool("write", intent="delete", phrases=("delete the row {row_id}", "remove {row_id} from the sheet"))
def delete_row(ctx: ToolContext, row_id: RowId) -> DeletedRow:
    """Delete a row; the rows below it move up one row number. Returns what the row held. Owner and writers only.

    Args:
        row_id: The row to delete.
    """
    row = ctx.get(Row, row_id, hint=_ROW_HINT)
    sheet = _editable_sheet(ctx, row.sheet_id, "delete its rows")
    number = _row_numbers(ctx, [row])[0]
    ctx.delete(row)
    _touch(ctx, sheet)
    return DeletedRow(row_id=row.id, sheet_id=sheet.id, row_number=number, values=_as_values(sheet.columns, row.cells))


@service.event("row_added")
def row_added(ctx: ToolContext, sheet_id: str, values: list[str], hours_ago: float = 1.0) -> str:
    """Someone adds a row to a sheet ``hours_ago`` (a task's trigger: "I put a request in the order sheet").

    Only adds the row (the spreadsheet's own times stay as they were). Returns the new row's id.
    """
    if not 0 <= hours_ago <= 720:
        raise ToolError.invalid_argument(f"hours_ago must be between 0 and 720, not {hours_ago}.")
    sheet = _sheet(ctx, sheet_id)
    return _new_row(ctx, sheet, _cells_from(sheet, list(values), None), at=ctx.days_from_now(-hours_ago / 24)).id
