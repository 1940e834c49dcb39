"""Google Sheets' values over a typed grid, addressed in A1 notation (``generator.query.a1``).

A service whose tools read and write ``/values/{range}`` (documented as A1 notation) gets a ``grid_cell`` table
(one row per filled cell of a tab: its spreadsheet, tab title, row, column and typed value) and these tools become
built-in custom tools: values get / update / append / clear and their batch forms, and the spreadsheet's
``batchUpdate`` requests that add, rename and delete tabs (kept in the spreadsheet's ``sheets``). Values typed as
USER_ENTERED become numbers and booleans as Sheets parses them; FORMATTED_VALUE shows them as text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from mcp_services.kernel.context import ToolContext
from mcp_services.kernel.errors import ToolError

from generator.compiler.runtime import Row, ServiceRuntime
from generator.query.a1 import A1, a1_text, parse_a1
from generator.query.ast import QueryError
from generator.spec import Behaviour, Binding, EntityDef, ServiceSpec, ToolDef

CELL = "grid_cell"
SHEET = "spreadsheet"
GridFunction = Callable[[ToolContext, dict[str, Any], ServiceRuntime], Any]
_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")
REQUESTS = ("addSheet", "deleteSheet", "updateSheetProperties")


# -- the tabs and cells of a spreadsheet ----------------------------------------------------------------------


def _spreadsheet(rt: ServiceRuntime, ctx: ToolContext, args: dict[str, Any]) -> Row:
    sid = args.get("spreadsheetId")
    return rt.require(ctx, SHEET, {"id": sid}, f"spreadsheetId {sid!r}")


def tabs(row: Row) -> list[dict[str, Any]]:
    """The spreadsheet's tabs as ``{"properties": {"sheetId", "title", "index"}}`` (untitled ones: Sheet1, Sheet2...)."""
    out = []
    for i, tab in enumerate(row.get("sheets") or []):
        props = dict(tab.get("properties") or {}) if isinstance(tab, dict) else {}
        props.setdefault("sheetId", i)
        props.setdefault("title", f"Sheet{i + 1}")
        props["index"] = i
        out.append({**(tab if isinstance(tab, dict) else {}), "properties": props})
    return out or [{"properties": {"sheetId": 0, "title": "Sheet1", "index": 0}}]


def _range(row: Row, text: Any) -> tuple[str, A1]:
    """(tab title, range) of an A1 range on this spreadsheet; an unknown tab is Sheets' 'Unable to parse range'."""
    if not isinstance(text, str):
        raise ToolError.invalid_argument("'range' must be A1 notation such as Sheet1!A1:B2.")
    try:
        a1 = parse_a1(text)
    except QueryError as exc:
        raise ToolError.invalid_argument(f"Unable to parse range: {text}. {exc}") from None
    titles = [t["properties"]["title"] for t in tabs(row)]
    title = a1.sheet if a1.sheet is not None else titles[0]
    if title not in titles:
        raise ToolError.invalid_argument(f"Unable to parse range: {text}. The spreadsheet has no tab {title!r}; its tabs: "
                                         f"{', '.join(titles)} (add one with addSheet).")
    return title, a1


def _cells(rt: ServiceRuntime, ctx: ToolContext, sid: str, title: str) -> dict[tuple[int, int], Row]:
    records = rt.records[CELL]
    found = rt.query(ctx, CELL).where(spreadsheet_id=sid, sheet=title).all()
    return {(r["row"], r["col"]): r for r in (records.dump(x) for x in found)}


def _address(title: str, cell: Row) -> str:
    """A cell's name as people write it: ``Summary!B3``."""
    return a1_text(title, cell["row"], cell["col"], cell["row"], cell["col"])


def _new_cell(rt: ServiceRuntime, ctx: ToolContext, sid: str, title: str, at: tuple[int, int], value: Any) -> None:
    cell = {"spreadsheet_id": sid, "sheet": title, "row": at[0], "col": at[1], "value": value}
    rt.insert(ctx, CELL, {**cell, "address": _address(title, cell)})


def _typed(value: Any, option: str) -> Any:
    """A written value as Sheets stores it: USER_ENTERED parses numbers and TRUE/FALSE; RAW keeps the text."""
    if option != "USER_ENTERED" or not isinstance(value, str):
        return value
    text = value.strip()
    if _NUMBER.match(text):
        return float(text) if "." in text else int(text)
    if text.upper() in ("TRUE", "FALSE"):
        return text.upper() == "TRUE"
    return value


def _shown(value: Any, option: str) -> Any:
    if option in ("UNFORMATTED_VALUE", "FORMULA"):
        return value
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _matrix(values: Any, major: str, where: str) -> list[list[Any]]:
    if values is None:
        return []
    if not isinstance(values, list) or not all(isinstance(r, list) for r in values):
        raise ToolError.invalid_argument(f"'{where}' must be an array of rows, each an array of cell values.")
    if major == "COLUMNS":
        width = max((len(r) for r in values), default=0)
        return [[col[i] if i < len(col) else None for col in values] for i in range(width)]
    return values


def _read(rt: ServiceRuntime, ctx: ToolContext, row: Row, text: Any, render: str, major: str) -> dict[str, Any]:
    title, a1 = _range(row, text)
    cells = _cells(rt, ctx, row["id"], title)
    inside = {(r, c): cell for (r, c), cell in cells.items()
              if (a1.row1 or 1) <= r <= (a1.row2 or r) and (a1.col1 or 1) <= c <= (a1.col2 or c)}
    last_row = max((r for r, _ in inside), default=a1.row1 or 1)
    last_col = max((c for _, c in inside), default=a1.col1 or 1)
    r1, c1 = a1.row1 or 1, a1.col1 or 1
    rows = [[_shown(inside[(r, c)]["value"], render) if (r, c) in inside else "" for c in range(c1, last_col + 1)]
            for r in range(r1, last_row + 1)]
    rows = [r[:max((i + 1 for i, v in enumerate(r) if v != ""), default=0)] for r in rows]
    while rows and not rows[-1]:
        rows.pop()
    shown = a1_text(title, r1, c1, a1.row2 or max(last_row, r1), a1.col2 or max(last_col, c1))
    out: dict[str, Any] = {"range": shown, "majorDimension": major}
    if rows:
        out["values"] = [list(c) for c in zip(*[r + [""] * (max(map(len, rows)) - len(r)) for r in rows])] \
            if major == "COLUMNS" else rows
    return out


def _write(rt: ServiceRuntime, ctx: ToolContext, row: Row, title: str, a1: A1, grid: list[list[Any]], option: str,
           start_row: int | None = None) -> dict[str, Any]:
    """Write ``grid`` from the range's top-left cell (or ``start_row``); a null leaves a cell as it is, "" clears it."""
    r1, c1 = start_row or a1.row1 or 1, a1.col1 or 1
    height, width = len(grid), max((len(r) for r in grid), default=0)
    if a1.row2 is not None and start_row is None and r1 + height - 1 > a1.row2 or \
            a1.col2 is not None and c1 + width - 1 > a1.col2:
        raise ToolError.invalid_argument(
            f"Requested writing within range [{a1_text(title, r1, c1, a1.row2 or r1, a1.col2 or c1)}], but the values "
            f"are {height} rows by {width} columns; nothing was changed.")
    cells = _cells(rt, ctx, row["id"], title)
    written = 0
    for i, values in enumerate(grid):
        for j, value in enumerate(values):
            if value is None:
                continue
            at = (r1 + i, c1 + j)
            written += 1
            if value == "":
                if at in cells:
                    rt.delete(ctx, CELL, cells[at]["id"])
            elif at in cells:
                rt.update(ctx, CELL, cells[at]["id"], {"value": _typed(value, option)})
            else:
                _new_cell(rt, ctx, row["id"], title, at, _typed(value, option))
    last_row, last_col = r1 + max(height, 1) - 1, c1 + max(width, 1) - 1
    return {"spreadsheetId": row["id"], "updatedRange": a1_text(title, r1, c1, last_row, last_col),
            "updatedRows": height, "updatedColumns": width, "updatedCells": written}


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _values_of(args: dict[str, Any]) -> tuple[Any, str]:
    body = _object(args.get("body"))
    values = args.get("values", body.get("values"))
    major = str(args.get("majorDimension") or body.get("majorDimension") or "ROWS")
    return values, major


def _option(args: dict[str, Any]) -> str:
    option = str(args.get("valueInputOption") or "RAW")
    if option not in ("RAW", "USER_ENTERED"):
        raise ToolError.invalid_argument("'valueInputOption' is RAW or USER_ENTERED.")
    return option


# -- the tools ----------------------------------------------------------------------------------------------


def values_get(ctx: ToolContext, args: dict[str, Any], rt: ServiceRuntime) -> dict[str, Any]:
    row = _spreadsheet(rt, ctx, args)
    return _read(rt, ctx, row, args.get("range"), str(args.get("valueRenderOption") or "FORMATTED_VALUE"),
                 str(args.get("majorDimension") or "ROWS"))


def values_update(ctx: ToolContext, args: dict[str, Any], rt: ServiceRuntime) -> dict[str, Any]:
    row = _spreadsheet(rt, ctx, args)
    title, a1 = _range(row, args.get("range"))
    values, major = _values_of(args)
    out = _write(rt, ctx, row, title, a1, _matrix(values, major, "values"), _option(args))
    if args.get("includeValuesInResponse"):
        out["updatedData"] = _read(rt, ctx, row, out["updatedRange"], str(args.get("responseValueRenderOption")
                                                                          or "FORMATTED_VALUE"), "ROWS")
    return out


def values_append(ctx: ToolContext, args: dict[str, Any], rt: ServiceRuntime) -> dict[str, Any]:
    """Find the table the range touches and write the values on the rows after its last one."""
    row = _spreadsheet(rt, ctx, args)
    title, a1 = _range(row, args.get("range"))
    values, major = _values_of(args)
    cells = _cells(rt, ctx, row["id"], title)
    columns = {c for _, c in cells if (a1.col1 or 1) <= c <= (a1.col2 or c)}
    last = max((r for r, c in cells if c in columns and r >= (a1.row1 or 1)), default=(a1.row1 or 1) - 1)
    table = a1_text(title, a1.row1 or 1, a1.col1 or 1, max(last, a1.row1 or 1), a1.col2 or max(columns or {a1.col1 or 1}))
    open_a1 = A1(title, None, a1.col1, None, a1.col2)
    updates = _write(rt, ctx, row, title, open_a1, _matrix(values, major, "values"), _option(args), start_row=last + 1)
    return {"spreadsheetId": row["id"], "tableRange": table, "updates": updates}


def values_clear(ctx: ToolContext, args: dict[str, Any], rt: ServiceRuntime) -> dict[str, Any]:
    row = _spreadsheet(rt, ctx, args)
    return {"spreadsheetId": row["id"], "clearedRange": _clear(rt, ctx, row, args.get("range"))}


def _clear(rt: ServiceRuntime, ctx: ToolContext, row: Row, text: Any) -> str:
    title, a1 = _range(row, text)
    for (r, c), cell in _cells(rt, ctx, row["id"], title).items():
        if (a1.row1 or 1) <= r <= (a1.row2 or r) and (a1.col1 or 1) <= c <= (a1.col2 or c):
            rt.delete(ctx, CELL, cell["id"])
    return str(_read(rt, ctx, row, text, "FORMATTED_VALUE", "ROWS")["range"])


def _listed(args: dict[str, Any], name: str) -> list[Any]:
    value = args.get(name)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ToolError.invalid_argument(f"'{name}' must be a list.")
    return value


def values_batch_get(ctx: ToolContext, args: dict[str, Any], rt: ServiceRuntime) -> dict[str, Any]:
    row = _spreadsheet(rt, ctx, args)
    render, major = str(args.get("valueRenderOption") or "FORMATTED_VALUE"), str(args.get("majorDimension") or "ROWS")
    return {"spreadsheetId": row["id"], "valueRanges": [_read(rt, ctx, row, r, render, major)
                                                        for r in _listed(args, "ranges")]}


def values_batch_update(ctx: ToolContext, args: dict[str, Any], rt: ServiceRuntime) -> dict[str, Any]:
    row = _spreadsheet(rt, ctx, args)
    option = _option(args)
    responses = []
    for i, item in enumerate(_listed(args, "data")):
        if not isinstance(item, dict):
            raise ToolError.invalid_argument(f"'data[{i}]' must be an object with 'range' and 'values'.")
        title, a1 = _range(row, item.get("range"))
        grid = _matrix(item.get("values"), str(item.get("majorDimension") or "ROWS"), f"data[{i}].values")
        responses.append(_write(rt, ctx, row, title, a1, grid, option))
    return {"spreadsheetId": row["id"], "totalUpdatedRows": sum(r["updatedRows"] for r in responses),
            "totalUpdatedColumns": sum(r["updatedColumns"] for r in responses),
            "totalUpdatedCells": sum(r["updatedCells"] for r in responses),
            "totalUpdatedSheets": len({r["updatedRange"].rsplit("!", 1)[0] for r in responses}), "responses": responses}


def values_batch_clear(ctx: ToolContext, args: dict[str, Any], rt: ServiceRuntime) -> dict[str, Any]:
    row = _spreadsheet(rt, ctx, args)
    return {"spreadsheetId": row["id"], "clearedRanges": [_clear(rt, ctx, row, r) for r in _listed(args, "ranges")]}


def batch_update(ctx: ToolContext, args: dict[str, Any], rt: ServiceRuntime) -> dict[str, Any]:
    """The spreadsheet's tab requests, in order: addSheet, updateSheetProperties (a new title), deleteSheet."""
    row = _spreadsheet(rt, ctx, args)
    sheets = tabs(row)
    replies: list[dict[str, Any]] = []
    for i, request in enumerate(_listed(args, "requests")):
        kind = next(iter(request), None) if isinstance(request, dict) and len(request) == 1 else None
        if kind not in REQUESTS:
            raise ToolError.invalid_argument(f"'requests[{i}]' is not a request this spreadsheet supports "
                                             f"({', '.join(REQUESTS)}); nothing was changed.")
        body = _object(request[kind])
        props = _object(body.get("properties"))
        titles = [s["properties"]["title"] for s in sheets]
        if kind == "addSheet":
            title = str(props.get("title") or f"Sheet{len(sheets) + 1}")
            if title in titles:
                raise ToolError.invalid_argument(f"A sheet with the name \"{title}\" already exists. Please enter another "
                                                 "name; nothing was changed.")
            new_id = props.get("sheetId", max((int(s["properties"]["sheetId"]) for s in sheets), default=0) + 1)
            added = {**props, "sheetId": new_id, "title": title, "index": len(sheets)}
            sheets.append({"properties": added})
            replies.append({"addSheet": {"properties": added}})
            continue
        wanted = body.get("sheetId", props.get("sheetId"))
        found = next((s for s in sheets if s["properties"]["sheetId"] == wanted), None)
        if found is None:
            raise ToolError.invalid_argument(f"'requests[{i}]': no tab has sheetId {wanted!r}; nothing was changed.")
        if kind == "deleteSheet":
            if len(sheets) == 1:
                raise ToolError.invalid_argument("A spreadsheet keeps at least one tab; nothing was changed.")
            for cell in _cells(rt, ctx, row["id"], found["properties"]["title"]).values():
                rt.delete(ctx, CELL, cell["id"])
            sheets.remove(found)
        elif props.get("title") and props["title"] != found["properties"]["title"]:
            if props["title"] in titles:
                raise ToolError.invalid_argument(f"A sheet with the name \"{props['title']}\" already exists.")
            for cell in _cells(rt, ctx, row["id"], found["properties"]["title"]).values():
                rt.update(ctx, CELL, cell["id"], {"sheet": props["title"], "address": _address(props["title"], cell)})
            found["properties"]["title"] = props["title"]
        replies.append({})
    for index, sheet in enumerate(sheets):
        sheet["properties"]["index"] = index
    rt.update(ctx, SHEET, row["id"], {"sheets": sheets})
    return {"spreadsheetId": row["id"], "replies": replies}


def seed_grid(rt: ServiceRuntime, ctx: ToolContext) -> None:
    """Each spreadsheet's first tab holds a small typed table: a header row, then customers with a number each."""
    if CELL not in rt.entities:
        return
    customers = ctx.world.customers
    header = ["Name", "Email", "City", "Open amount"]
    for n, record in enumerate(rt.query(ctx, SHEET).all()):
        row = rt.records[SHEET].dump(record)
        title = tabs(row)[0]["properties"]["title"]
        people = [customers[(n * 3 + i) % len(customers)] for i in range(3)] if customers else []
        table: list[list[Any]] = [header, *([p.name, p.email, p.city, 250 * (n + i + 1)] for i, p in enumerate(people))]
        for r, values in enumerate(table, start=1):
            for c, value in enumerate(values, start=1):
                _new_cell(rt, ctx, row["id"], title, (r, c), value)


FUNCTIONS: dict[str, GridFunction] = {f"grid.{f.__name__}": f for f in (
    values_get, values_update, values_append, values_clear, values_batch_get, values_batch_update,
    values_batch_clear, batch_update)}
#: The Sheets API path ends (after ``/v4/spreadsheets/{spreadsheetId}``) and methods of each tool.
_ROUTES = (("GET", r"/values/\{range\}", values_get), ("PUT", r"/values/\{range\}", values_update),
           ("POST", r"/values/\{range\}:append", values_append), ("POST", r"/values/\{range\}:clear", values_clear),
           ("GET", r"/values:batchGet", values_batch_get), ("POST", r"/values:batchUpdate", values_batch_update),
           ("POST", r"/values:batchClear", values_batch_clear), ("POST", r":batchUpdate", batch_update))


def _route(tool: ToolDef) -> GridFunction | None:
    if tool.http is None or "spreadsheetId" not in tool.parameters.get("properties", {}):
        return None
    path = tool.http.path.split("?")[0]
    for method, end, function in _ROUTES:
        if tool.http.method.upper() == method and re.search(r"/spreadsheets/\{spreadsheetId\}" + end + "$", path):
            return function
    return None


def _speaks_a1(spec: ServiceSpec) -> bool:
    return SHEET in {e.name for e in spec.entities} and CELL not in {e.name for e in spec.entities} and any(
        "A1 notation" in str((t.parameters.get("properties", {}).get("range") or {}).get("description", ""))
        for t in spec.tools)


def with_grid(spec: ServiceSpec) -> ServiceSpec:
    """``spec`` with a typed grid behind its A1-addressed values tools (the same spec when it has none)."""
    if not _speaks_a1(spec):
        return spec
    routed = {t.name: f for t in spec.tools if (f := _route(t)) is not None}
    if not routed:
        return spec
    cell = EntityDef.model_validate({
        "name": CELL, "table": "grid_cells", "key": {"prefix": "cell"}, "seed_rows": 0, "noun": "cell", "label": "address",
        "fields": [{"name": "spreadsheet_id", "type": "string", "ref": SHEET, "owner": True},
                   {"name": "address", "type": "string"},
                   {"name": "sheet", "type": "string"}, {"name": "row", "type": "integer"},
                   {"name": "col", "type": "integer"}, {"name": "value", "type": "any"}]})
    tools = []
    for tool in spec.tools:
        function = routed.get(tool.name)
        if function is None:
            tools.append(tool)
            continue
        bindings = {"spreadsheetId": Binding(role="parent", entity=SHEET, column="spreadsheet_id")}
        properties = tool.parameters.get("properties", {})
        if "range" in properties:
            bindings["range"] = Binding(role="query", dialect="a1")
        if "values" in properties:
            bindings["values"] = Binding(role="field", column="value")  # the rows it writes
        parameters = tool.parameters
        if function in (values_update, values_append) and "values" in properties:
            # the rows to write: a write of no rows changes nothing, so Sheets' body is required here
            parameters = {**parameters, "required": list(dict.fromkeys([*parameters.get("required", []), "values"]))}
        tools.append(tool.model_copy(update={
            "behaviour": Behaviour(kind="custom", entity=CELL, function=f"grid.{function.__name__}"),
            "bindings": bindings, "parameters": parameters,
            "effect": "read" if function in (values_get, values_batch_get) else "write"}))
    # the rows the planner made of the values (``value_0001`` as a range) go where nothing else uses them
    used = {t.behaviour.entity for t in tools} | {b.entity for t in tools for b in t.bindings.values()} | \
        {f.ref for e in spec.entities for f in e.fields}
    replaced = {spec.tool(name).behaviour.entity for name in routed} - used - {SHEET}
    entities = [e for e in spec.entities if e.name not in replaced]
    return spec.model_copy(update={"entities": [*entities, cell], "tools": tools})
