"""One dialect per product language: how to recognise the parameter that speaks it, how to parse it, and
what its fields mean on the rows of the product's entity."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from generator.query.ast import And, Cond, Node, Query, QueryError
from generator.query.evaluate import Row, _text
from generator.query.gmail import SUPPORTED as GMAIL_SUPPORTED
from generator.query.gmail import parse_gmail
from generator.query.infix import Syntax, parse_infix
from generator.spec import ServiceSpec, ToolDef


@dataclass(frozen=True)
class Dialect:
    """A product's query language."""

    name: str
    title: str  # as errors say it ("Drive query")
    parse: Callable[[Any], Query]
    recognise: Callable[[ServiceSpec, ToolDef, str, Mapping[str, Any]], bool]
    entities: tuple[str, ...] = ()  # the entity it searches when the tool was planned on another (JQL: issue)
    synonyms: Mapping[str, Sequence[str]] = field(default_factory=dict)
    getters: Mapping[str, Callable[[Row], list[Any]]] = field(default_factory=dict)
    supported: str = ""
    #: Rows found through rows of another entity: a Gmail thread matches when one of its messages does
    #: ({"thread": ("message", "threadId")}).
    through: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    everything: str = ""  # a query that selects every row (the gate's example of a required query)


def _description(schema: Mapping[str, Any]) -> str:
    return str(schema.get("description") or "") + " " + " ".join(str(e) for e in schema.get("examples") or [])


def _is_text(schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    return kind == "string" or isinstance(kind, list) and "string" in kind


def _reads(tool: ToolDef) -> bool:
    return tool.effect == "read"


def _service_says(spec: ServiceSpec, *words: str) -> bool:
    text = f"{spec.name} {spec.title} {spec.source}".lower()
    return any(w in text for w in words)


# -- Drive -------------------------------------------------------------------------------------------------

DRIVE_SYNTAX = Syntax("Drive query", frozenset({"=", "!=", "<", "<=", ">", ">=", "contains", "in", "has"}),
                      value_in_field=True)
DRIVE_TERMS = ("name", "fullText", "mimeType", "modifiedTime", "viewedByMeTime", "trashed", "starred", "parents",
               "owners", "writers", "readers", "sharedWithMe", "createdTime", "hidden", "memberCount", "organizerCount")


def _drive(spec: ServiceSpec, tool: ToolDef, param: str, schema: Mapping[str, Any]) -> bool:
    """Drive's ``q``: on a Drive service, or documented with Drive's own syntax (``name contains '...'``)."""
    if param != "q" or not _is_text(schema) or not _reads(tool):
        return False
    said = _description(schema)
    return _service_says(spec, "drive") or "search for files" in said.lower() or \
        re.search(r"name contains '", said) is not None


def _full_text(row: Row) -> list[Any]:
    hints = row.get("contentHints")
    indexable = hints.get("indexableText") if isinstance(hints, Mapping) else None
    return [_text([row.get("name"), row.get("title"), row.get("description"), row.get("originalFilename"), indexable])]


def _shared_with_me(row: Row) -> list[Any]:
    return [row.get("sharedWithMeTime") is not None or bool(row.get("sharedWithMe"))]


DRIVE = Dialect(
    "drive", "Drive query", lambda text: parse_infix(DRIVE_SYNTAX, text), _drive,
    synonyms={"writers": ("permissions",), "readers": ("permissions",), "owners": ("owners",)},
    getters={"fullText": _full_text, "sharedWithMe": _shared_with_me},
    supported=DRIVE_SYNTAX.supported() + "; fields " + ", ".join(DRIVE_TERMS), everything="name != ''",
)

def _drive_order(spec: ServiceSpec, tool: ToolDef, param: str, schema: Mapping[str, Any]) -> bool:
    """Drive's ``orderBy`` ("modifiedTime desc,name"), beside a Drive ``q``."""
    return param == "orderBy" and _is_text(schema) and _reads(tool) and _drive(spec, tool, "q", {
        **dict(tool.parameters.get("properties", {}).get("q") or {}), "type": "string"})


def parse_order(title: str, text: str) -> Query:
    """A comma-separated list of sort keys, each ascending unless followed by ``desc``."""
    order: list[tuple[str, bool]] = []
    for part in text.split(","):
        words = part.split()
        if not words:
            continue
        if len(words) > 2 or len(words) == 2 and words[1].lower() not in ("asc", "desc"):
            raise QueryError(title, part.strip(), "a sort key is a field, then 'desc' or nothing",
                             "a comma-separated list of sort keys, e.g. 'modifiedTime desc,name'")
        order.append((words[0], len(words) == 2 and words[1].lower() == "desc"))
    return Query(None, tuple(order))


DRIVE_ORDER = Dialect("drive_order", "Drive orderBy", lambda text: parse_order("Drive orderBy", text), _drive_order,
                      synonyms={"name_natural": ("name",), "folder": ("mimeType",), "recency": ("modifiedTime",)},
                      getters=DRIVE.getters, supported="a comma-separated list of sort keys, e.g. 'modifiedTime desc,name'")

# -- JQL ---------------------------------------------------------------------------------------------------

JQL_SYNTAX = Syntax("JQL", frozenset({"=", "!=", "<", "<=", ">", ">=", "contains", "!contains", "in", "not in", "empty",
                                      "not empty"}),
                    bare_values=True, order_by=True, tilde=True, shown="=, !=, <, <=, >, >=, ~, !~, in, not in",
                    functions=("currentUser", "now", "startOfDay", "startOfWeek", "startOfMonth", "startOfYear"))
JQL_FIELDS = {
    "key": ("key", "issueKey", "issue_key", "id"), "issuekey": ("key", "issueKey", "issue_key", "id"),
    "id": ("id",), "project": ("project", "project_key", "projectKey", "project_id"),
    "summary": ("summary", "subject", "title", "name"), "description": ("description", "body"),
    "status": ("status", "status_name"), "issuetype": ("issuetype", "issue_type", "issueType", "type"),
    "type": ("issuetype", "issue_type", "issueType", "type"), "priority": ("priority",),
    "assignee": ("assignee", "assignee_id", "assigneeAccountId"), "reporter": ("reporter", "reporter_id"),
    "created": ("created", "createdAt", "created_at", "createdDate"), "createddate": ("created", "created_at"),
    "updated": ("updated", "updatedAt", "updated_at", "updatedDate"), "updateddate": ("updated", "updated_at"),
    "duedate": ("duedate", "due_date", "dueDate", "due"), "due": ("duedate", "due_date", "dueDate", "due"),
    "labels": ("labels",), "resolution": ("resolution",), "component": ("components",), "fixversion": ("fixVersions",),
}


def _jql(spec: ServiceSpec, tool: ToolDef, param: str, schema: Mapping[str, Any]) -> bool:
    """A JQL parameter of a read: named ``jql``, or documented as a JQL query."""
    if not _is_text(schema) or not _reads(tool) or param.lower() in ("currentjql",):
        return False
    return param.lower() == "jql" or re.search(r"\bJQL\b", _description(schema)) is not None and param.lower() in (
        "q", "query", "jql_query", "filter")


def _jql_text(row: Row) -> list[Any]:
    held = row.get("fields")
    fields: Mapping[str, Any] = held if isinstance(held, Mapping) else {}
    return [_text([row.get(k) or fields.get(k) for k in ("summary", "subject", "title", "description", "environment",
                                                        "comment")])]


JQL = Dialect(
    "jql", "JQL", lambda text: parse_infix(JQL_SYNTAX, text), _jql, entities=("issue",),
    synonyms=JQL_FIELDS, getters={"text": _jql_text},
    supported=JQL_SYNTAX.supported() + "; fields " + ", ".join(sorted({*JQL_FIELDS, "text"})),
    everything="id is not empty",
)

# -- Gmail -------------------------------------------------------------------------------------------------


def _gmail(spec: ServiceSpec, tool: ToolDef, param: str, schema: Mapping[str, Any]) -> bool:
    """Gmail's ``q``: on a Gmail service, or documented as the Gmail search box's format."""
    if param != "q" or not _is_text(schema) or not _reads(tool):
        return False
    return _service_says(spec, "gmail") or "gmail search box" in _description(schema).lower()


def _headers(row: Row) -> list[Mapping[str, Any]]:
    found: list[Mapping[str, Any]] = []
    for holder in (row, row.get("payload"), row.get("message")):
        if isinstance(holder, Mapping) and isinstance(holder.get("headers"), list):
            found += [h for h in holder["headers"] if isinstance(h, Mapping)]
    return found


def _header(*names: str) -> Callable[[Row], list[Any]]:
    def values(row: Row) -> list[Any]:
        out = [h.get("value") for h in _headers(row) if str(h.get("name", "")).lower() in names]
        out += [row.get(n) for n in names if isinstance(row.get(n), (str, list))]
        return [v for v in out if v]
    return values


def _labels(row: Row) -> list[Any]:
    labels = list(row.get("labelIds") or [])
    if row.get("trashed") in (1, True) and "TRASH" not in labels:
        labels.append("TRASH")
    return labels


def _attachments(row: Row) -> list[Any]:
    parts = [p for holder in (row, row.get("payload")) if isinstance(holder, Mapping)
             for p in holder.get("parts") or [] if isinstance(p, Mapping)]
    names = [p.get("filename") for p in parts if p.get("filename")]
    return names + [row.get(k) for k in ("filename", "attachmentId", "attachments") if row.get(k)]


def _filename(row: Row) -> list[Any]:
    return [n for n in _attachments(row) if isinstance(n, str)]


def _mail_text(row: Row) -> list[Any]:
    header_text = " ".join(str(h.get("value", "")) for h in _headers(row))
    return [_text([row.get(k) for k in ("snippet", "subject", "body", "text", "from", "to")]) + " " + header_text
            + " " + " ".join(_filename(row))]


def _date(row: Row) -> list[Any]:
    for name in ("internalDate", "date", "sent_at", "created_at", "createdTime"):
        if row.get(name) is not None:
            return [row[name]]
    return _header("date")(row)


GMAIL = Dialect(
    "gmail", "Gmail search", parse_gmail, _gmail,
    synonyms={"sizeEstimate": ("sizeEstimate", "size")},
    getters={**{n: _header(n) for n in ("from", "to", "cc", "bcc", "subject", "deliveredto", "list", "rfc822msgid")},
             "deliveredto": _header("delivered-to", "deliveredto"), "rfc822msgid": _header("message-id"),
             "filename": _filename, "labelIds": _labels, "attachment": _attachments, "text": _mail_text, "date": _date},
    supported=GMAIL_SUPPORTED, through={"thread": ("message", "threadId")}, everything="in:anywhere",
)

# -- a filter object (Apideck's ``filter: {"email": ..., "company_name": ...}``) ------------------------------------


def _fields_filter(spec: ServiceSpec, tool: ToolDef, param: str, schema: Mapping[str, Any]) -> bool:
    """An object parameter named ``filter`` whose keys are fields of the rows the read lists."""
    if param not in ("filter", "filters") or schema.get("type") != "object" or not _reads(tool):
        return False
    entity = next((e for e in spec.entities if e.name == tool.behaviour.entity), None)
    keys = set((schema.get("properties") or {}))
    return entity is not None and bool(keys) and bool(keys & {f.name for f in entity.fields})


def parse_fields(value: Any) -> Query:
    """``{"email": "ana@", "is_active": true}``: every key holds; text is found in the field, ids and other values
    are equal."""
    if not isinstance(value, Mapping):
        raise QueryError("filter", str(value)[:40], "a filter is an object of field: value",
                         "an object whose keys are the listed rows' fields")
    parts: list[Node] = []
    for key, wanted in value.items():
        if wanted is None:
            continue
        text = isinstance(wanted, str) and not re.search(r"(?i)(^|_)id$|Id$", key)
        parts.append(Cond(key, "contains" if text else "=", wanted if not isinstance(wanted, list) else None)
                     if not isinstance(wanted, list) else Cond(key, "in", tuple(wanted)))
    return Query(None if not parts else parts[0] if len(parts) == 1 else And(tuple(parts)))


FIELDS = Dialect("fields", "filter", parse_fields, _fields_filter,
                 supported="an object whose keys are the listed rows' fields")

DIALECTS: dict[str, Dialect] = {d.name: d for d in (DRIVE, DRIVE_ORDER, JQL, GMAIL, FIELDS)}


def dialect_for(spec: ServiceSpec, tool: ToolDef, param: str) -> Dialect | None:
    """The language ``tool``'s parameter ``param`` speaks, read from its documentation (None: plain text)."""
    schema = tool.parameters.get("properties", {}).get(param)
    if not isinstance(schema, Mapping):
        return None
    for dialect in (JQL, GMAIL, DRIVE, DRIVE_ORDER, FIELDS):  # Gmail before Drive: a Gmail ``q`` never shows Drive's syntax
        if dialect.recognise(spec, tool, param, schema):
            return dialect
    return None


def parse(dialect: str, text: Any) -> Query:
    """``text`` in ``dialect`` (``drive``, ``jql``, ``gmail``) as a ``Query``; ``QueryError`` when it cannot be read."""
    return DIALECTS[dialect].parse(text)


def example_query(dialect: str | None) -> str | None:
    """A query of ``dialect`` every row answers (a required query parameter's example), or None."""
    if dialect == "a1":
        return "Sheet1"  # the whole first tab
    spoken = DIALECTS.get(dialect or "")
    return spoken.everything if spoken is not None else None
