"""JSON Schema hygiene for imported tools: normalise what can be fixed, reject the rest with a reason.

Real input schemas break JSON Schema in known ways (OpenAPI 3.0's ``nullable`` and boolean
``exclusiveMinimum``, ``\\p{L}`` regexes that Python's ``re`` cannot compile, Swagger's ``type:
file``, dangling ``required`` names, unresolvable ``$ref``s). ``normalise_input_schema`` returns a
Draft 2020-12 schema that validates, plus notes on what it changed; or raises ``SchemaRejected``
whose message is the reason a tool is rejected.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from generator.naming import PARAM_NAME, param_name

MAX_SCHEMA_BYTES = 48_000
MAX_DEPTH = 7
MAX_DESCRIPTION = 400
#: The MCP schema the gate checks tools against: the repository's fixture, else the packaged extract.
MCP_SCHEMA_PATH = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "mcp-schema-2025-11-25.json"
_MCP_SCHEMA_EXTRACT = Path(__file__).resolve().parent / "data" / "mcp-tool-schema-2025-11-25.json"

_KEEP = {
    "type", "properties", "required", "items", "enum", "const", "format", "pattern", "minimum", "maximum",
    "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "minItems", "maxItems", "uniqueItems",
    "multipleOf", "description", "default", "examples", "anyOf", "oneOf", "allOf", "additionalProperties",
    "minProperties", "maxProperties", "x-semantic-type",
}
_JSON_TYPES = {"string", "integer", "number", "boolean", "object", "array", "null"}
_TYPE_ALIASES = {"int": "integer", "long": "integer", "int32": "integer", "int64": "integer", "float": "number",
                 "double": "number", "decimal": "number", "bool": "boolean", "str": "string", "text": "string",
                 "date": "string", "datetime": "string", "date-time": "string", "file": "string", "list": "array",
                 "dict": "object", "map": "object", "any": None, "byte": "string", "binary": "string"}
#: Parameters that carry credentials or transport options, never domain data.
_AUTH = {"token", "accesstoken", "apikey", "oauthtoken", "authorization", "xapikey", "sessiontoken", "authtoken",
         "bearertoken", "clientsecret", "apisecret", "secretkey", "xauthtoken", "apitoken", "authkey", "xaccesstoken"}
_TRANSPORT = {"$.xgafv", "alt", "callback", "prettyPrint", "quotaUser", "upload_protocol", "uploadType", "jsonp",
              "pretty", "_", "suppress_response_codes"}

_UNICODE_CLASSES = {
    "L": "a-zA-Z\u00c0-\u024f\u0370-\u03ff\u0400-\u04ff",
    "Letter": "a-zA-Z\u00c0-\u024f\u0370-\u03ff\u0400-\u04ff",
    "Alpha": "a-zA-Z\u00c0-\u024f",
    "Alphabetic": "a-zA-Z\u00c0-\u024f",
    "IsAlphabetic": "a-zA-Z\u00c0-\u024f",
    "IsLetter": "a-zA-Z\u00c0-\u024f",
    "Lu": "A-Z\u00c0-\u00de",
    "Ll": "a-z\u00df-\u00ff",
    "Lt": "A-Z",
    "Lm": "a-zA-Z",
    "Lo": "a-zA-Z\u00c0-\u024f",
    "N": "0-9",
    "Nd": "0-9",
    "Digit": "0-9",
    "IsDigit": "0-9",
    "Z": " \u00a0\u2000-\u200a",
    "Zs": " \u00a0\u2000-\u200a",
    "P": "!-\\/:-@\\[-`{-~",
    "Punct": "!-\\/:-@\\[-`{-~",
    "S": "$+<->^`|~",
    "M": "\u0300-\u036f",
    "Mn": "\u0300-\u036f",
    "Cc": "\\x00-\\x1f",
}
_UNICODE_PROPERTY = re.compile(r"\\([pP])\{\^?([A-Za-z_]+)\}")


#: What a credential's description says it is for: making, authenticating or authorising the call.
_FOR_THE_CALL = re.compile(r"\b(to|for)\s+(make|making|authenticate|authorize|authorise)\s+(the|this|an?|each|every)\s+"
                           r"(api\s+)?(call|request)s?\b", re.I)


def _prefixed_credential(squashed: str, description: str) -> bool:
    """A credential under a vendor's prefix (Exavault's ``ev_api_key``: "API Key required to make the API call"):
    the name ends in a compound credential word and the description says it serves the call itself."""
    return any(squashed.endswith(word) for word in _AUTH if word != "token") and bool(_FOR_THE_CALL.search(description))


#: Parameters named like a credential, whatever their vendor prefix (``X_VO_Api_Key``, ``WM_SEC_ACCESS_TOKEN``).
_CREDENTIAL_END = re.compile(r"(token|secret|apikey|key|password|appid|consumerid|customerid|customerchildid)$")
#: Names ending like a credential that page or sync instead (``pageToken``, ``nextSyncToken``).
_NOT_CREDENTIAL = re.compile(r"(page|next|sync|continuation|cursor|resume|idempotency|sort|partition|primary|"
                             r"foreign|license|public|ssh|gpg|deploy)(token|key)$")


#: A name spelled as HTTP headers are (``Xero-Tenant-Id``, ``WM_SEC.AUTH_SIGNATURE``): words joined by hyphens or
#: dots, which query and body parameters do not use.
_HEADER_SPELLING = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(?:[-.][A-Za-z0-9_]+)+$")


def service_plumbing(tools: list[dict[str, Any]], in_paths: frozenset[str] = frozenset(),
                     spelled: dict[str, str] | None = None) -> frozenset[str]:
    """Parameters that carry a service's credentials or transport headers, not domain data: named like a
    header (``X_Postmark_Server_Token``, ``x_apideck_consumer_id``; spelled as HTTP headers are in the source,
    ``spelled``: parameter -> its name there, such as Xero's ``xero-tenant-id``, Walmart's ``WM_SEC.TIMESTAMP``,
    ``Accept-Language``, ``Idempotency-Key``) or a credential (Mandrill's ``key``, Plaid's ``secret``), and taken
    by at least half of the service's tools (three or more), as a credential is. ``tools`` are the tools'
    ``properties``; ``in_paths`` names the path parameters (Ideal Postcodes' ``/keys/{key}`` addresses a row by
    its key: never plumbing)."""
    if len(tools) < 3:
        return frozenset()
    counts: dict[str, int] = {}
    for properties in tools:
        for name in properties:
            counts[name] = counts.get(name, 0) + 1
    out = set()
    for name, count in counts.items():
        if count * 2 < len(tools) or name in in_paths:
            continue
        squashed = re.sub(r"[^a-z]", "", name.lower())
        header = re.match(r"(?i)^x[-_]", name) is not None or _HEADER_SPELLING.match((spelled or {}).get(name, "")) is not None
        credential = bool(_CREDENTIAL_END.search(squashed)) and not _NOT_CREDENTIAL.search(squashed) and (
            header or squashed in ("key", "apikey", "secret") or name.isupper() or squashed in _AUTH)
        if header or credential:
            out.add(name)
    return frozenset(out)


class SchemaRejected(ValueError):
    """A schema the generator cannot use; the message is the reason shown in the gate report."""


@dataclass
class NormalisedSchema:
    schema: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    renamed: dict[str, str] = field(default_factory=dict)  # new parameter name -> name in the spec
    dropped: list[str] = field(default_factory=list)  # credential/transport parameters removed


def clean_text(text: Any, limit: int = MAX_DESCRIPTION) -> str:
    """Plain text from a description that may hold HTML or Markdown links, cut at ``limit``."""
    if not isinstance(text, str):
        return ""
    text = re.sub(r"<[^>]{0,200}>", " ", text)
    text = html.unescape(text)
    text = re.sub(r"\s+", " ", text).strip()
    if len(text) > limit:
        cut = text[: limit - 1]
        text = (cut[: cut.rfind(" ")] if " " in cut[limit // 2 :] else cut).rstrip(" ,;:") + "…"
    return text


def normalise_input_schema(raw: Any, *, max_bytes: int = MAX_SCHEMA_BYTES) -> NormalisedSchema:
    """The tool's input schema as Draft 2020-12 with parameter names every client accepts."""
    if raw is None:
        raw = {"type": "object", "properties": {}}
    if not isinstance(raw, dict):
        raise SchemaRejected(f"input schema is a {type(raw).__name__}, not a JSON object")
    if raw.get("type") not in (None, "object") and raw.get("type") != ["object"]:
        raise SchemaRejected(f"input schema has type {raw.get('type')!r}; a tool's arguments must be an object")
    result = NormalisedSchema(schema={})
    defs = {**(raw.get("definitions") or {}), **(raw.get("$defs") or {})}
    walker = _Walker(defs, result.notes)
    props = raw.get("properties") or {}
    if not isinstance(props, dict):
        raise SchemaRejected("input schema 'properties' is not an object")
    required_in = raw.get("required") or []
    if not isinstance(required_in, list):
        required_in = []
    properties: dict[str, Any] = {}
    required: list[str] = []
    lowered: dict[str, str] = {}
    for original, sub in props.items():
        if not isinstance(original, str) or not original:
            raise SchemaRejected("input schema has a property with an empty name")
        squashed = re.sub(r"[^a-z]", "", original.lower())
        is_required = original in required_in or (isinstance(sub, dict) and sub.get("required") is True)
        description = str(sub.get("description", "")) if isinstance(sub, dict) else ""
        if squashed in _AUTH or original in _TRANSPORT or _prefixed_credential(squashed, description) or (
            original in ("key", "fields", "oauth_token", "access_token") and not is_required
            and re.search(r"API key|OAuth|Selector specifying|access token", description, re.I)
        ):
            result.dropped.append(original)
            continue
        name = original if PARAM_NAME.match(original) else param_name(_spell_comparison(original))
        if not name:
            raise SchemaRejected(f"parameter {original!r} has no usable name")
        if name.lower() in lowered:  # "DateSent" beside "Date Sent": the second gets a number
            base, n = name, 2
            while f"{base}_{n}".lower() in lowered:
                n += 1
            name = f"{base}_{n}"
            result.notes.append(f"parameter {original!r} renamed {name!r} ({lowered[base.lower()]!r} took {base!r})")
        lowered[name.lower()] = original
        if name != original:
            result.renamed[name] = original
            result.notes.append(f"parameter {original!r} renamed {name!r}")
        properties[name] = walker.node(sub, f"properties.{original}", 1)
        if is_required:
            required.append(name)
    properties, required = _unwrap(properties, required, result.notes)
    dangling = [r for r in required_in if isinstance(r, str) and r not in props]
    if dangling:
        result.notes.append(f"dropped required names with no property: {', '.join(map(str, dangling))}")
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    description = clean_text(raw.get("description"))
    if description:
        schema["description"] = description
    check_schema(schema)
    size = len(json.dumps(schema, ensure_ascii=False))
    if size > max_bytes:
        raise SchemaRejected(f"input schema is too large ({size // 1000} KB; the limit is {max_bytes // 1000} KB)")
    result.schema = schema
    return result


#: Parameters that only wrap the request's real fields (``body: {name, email}``, JSON:API ``data``).
WRAPPERS = frozenset({"body", "data", "payload", "request", "requestbody", "request_body", "input", "params",
                      "attributes", "resource", "object", "item", "record", "fields_body"})
#: Fields a server sets on its own: they stay inside the wrapper rather than become arguments.
_SERVER_SET = frozenset({"id", "createdat", "updatedat", "created", "updated", "object", "version"})
_COMPARISONS = ((">=", "_from"), ("<=", "_to"), (">", "_after"), ("<", "_before"))


def _spell_comparison(name: str) -> str:
    """``DateSent<`` -> ``DateSent_before``: comparison suffixes of range filters (Twilio) keep their meaning."""
    for symbol, word in _COMPARISONS:
        if name.endswith(symbol):
            return name[: -len(symbol)] + word
    return name


def hoist_wrappers(schema: dict[str, Any], names: set[str]) -> tuple[dict[str, Any], list[str]]:
    """A normalised input schema with object parameters called one of ``names`` (lowercase) unwrapped.

    The planner passes the resource nouns of the tool's path: Square's ``{"group": {...}}`` body is the group."""
    notes: list[str] = []
    properties, required = _unwrap(dict(schema.get("properties", {})), list(schema.get("required", [])), notes, names)
    if not notes:
        return schema, notes
    out = {**schema, "properties": properties}
    if required:
        out["required"] = required
    else:
        out.pop("required", None)
    return out, notes


def _unwrap(properties: dict[str, Any], required: list[str], notes: list[str],
            wrappers: frozenset[str] | set[str] = WRAPPERS) -> tuple[dict[str, Any], list[str]]:
    """Hoist the fields of request wrappers (``body``, ``data``...) to parameters of their own.

    A wrapper is not a thing the service stores: its fields are. Fields that would clash with a
    parameter already there stay inside the wrapper (nothing is lost)."""
    for _ in range(3):  # data -> attributes -> fields
        wrapper = next((name for name, sub in properties.items() if name.lower() in wrappers and isinstance(sub, dict)
                        and sub.get("type") in (None, "object") and isinstance(sub.get("properties"), dict)
                        and sub["properties"]), None)
        if wrapper is None:
            break
        inner = properties[wrapper]
        taken = {name.lower() for name in properties if name != wrapper}
        hoisted = {k: v for k, v in inner["properties"].items()
                   if k.lower() not in taken and PARAM_NAME.match(k) and k.lower().replace("_", "") not in _SERVER_SET}
        left = {k: v for k, v in inner["properties"].items() if k not in hoisted}
        out: dict[str, Any] = {}
        for name, sub in properties.items():
            if name != wrapper:
                out[name] = sub
            else:
                out.update(hoisted)
                if left:
                    out[wrapper] = {**inner, "properties": left,
                                    "required": [r for r in inner.get("required", []) if r in left]}
        inner_required = [r for r in inner.get("required", []) if r in hoisted]
        still = any(r in left for r in inner.get("required", []))  # the wrapper stays required for what it still holds
        required = [r for r in required if r != wrapper or still] + (inner_required if wrapper in required else [])
        if wrapper in out and not out[wrapper].get("required"):
            out[wrapper].pop("required", None)
        notes.append(f"the fields of request wrapper {wrapper!r} became parameters")
        properties = out
    return properties, list(dict.fromkeys(required))


def normalise_schema(raw: Any, notes: list[str] | None = None) -> dict[str, Any]:
    """Any (output) schema normalised the same way; ``SchemaRejected`` when it cannot be."""
    if not isinstance(raw, dict):
        raise SchemaRejected(f"schema is a {type(raw).__name__}, not a JSON object")
    defs = {**(raw.get("definitions") or {}), **(raw.get("$defs") or {})}
    schema = _Walker(defs, notes if notes is not None else []).node(raw, "", 0)
    check_schema(schema)
    return schema


class _Walker:
    def __init__(self, defs: dict[str, Any], notes: list[str]) -> None:
        self.defs = defs
        self.notes = notes

    def node(self, raw: Any, where: str, depth: int, refs: tuple[str, ...] = ()) -> dict[str, Any]:
        if raw is True or raw is None:
            return {}
        if raw is False:
            return {"not": {}}
        if not isinstance(raw, dict):
            raise SchemaRejected(f"schema at {where or 'the root'} is a {type(raw).__name__}, not an object")
        if "$ref" in raw:
            ref = raw["$ref"]
            name = str(ref).rsplit("/", 1)[-1]
            if not isinstance(ref, str) or not ref.startswith("#/") or name not in self.defs:
                raise SchemaRejected(f"unresolvable reference {ref!r} at {where or 'the root'}")
            if ref in refs or depth >= MAX_DEPTH:
                return {"type": "object", "description": "(recursive schema omitted)"}
            merged = {**self.defs[name], **{k: v for k, v in raw.items() if k != "$ref"}}
            return self.node(merged, where, depth, refs + (ref,))
        if depth >= MAX_DEPTH:
            return {"description": "(nested schema omitted)"}
        out: dict[str, Any] = {}
        kind = raw.get("type")
        if kind is not None:
            kind = self._type(kind, where)
        if raw.get("nullable") is True and kind is not None:
            kind = sorted(set(kind if isinstance(kind, list) else [kind]) | {"null"}, key=_type_order)
        if kind is not None:
            out["type"] = kind if not (isinstance(kind, list) and len(kind) == 1) else kind[0]
        if raw.get("type") == "file":
            out["format"] = "binary"
        for key, value in raw.items():
            if key not in _KEEP or key == "type":
                continue
            if key == "properties":
                if isinstance(value, dict):
                    out["properties"] = {
                        str(k): self.node(v, f"{where}.{k}", depth + 1, refs) for k, v in list(value.items())[:200]
                    }
            elif key == "items":
                if isinstance(value, list):  # draft-4 tuple form
                    out["prefixItems"] = [self.node(v, f"{where}[]", depth + 1, refs) for v in value]
                else:
                    out["items"] = self.node(value, f"{where}[]", depth + 1, refs)
            elif key in ("anyOf", "oneOf", "allOf"):
                if isinstance(value, list) and value:
                    out[key] = [self.node(v, f"{where}.{key}", depth + 1, refs) for v in value[:20]]
            elif key == "additionalProperties":
                if isinstance(value, dict):
                    out[key] = self.node(value, f"{where}.*", depth + 1, refs)
                elif isinstance(value, bool):
                    out[key] = value
            elif key == "description":
                text = clean_text(value)
                if text:
                    out[key] = text
            elif key == "pattern":
                fixed = self._pattern(value, where)
                if fixed is not None:
                    out[key] = fixed
            elif key in ("exclusiveMinimum", "exclusiveMaximum"):
                if isinstance(value, bool):
                    bound = "minimum" if key == "exclusiveMinimum" else "maximum"
                    if value and isinstance(raw.get(bound), (int, float)):
                        out[key] = raw[bound]
                elif isinstance(value, (int, float)):
                    out[key] = value
            elif key in ("minimum", "maximum"):
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    exclusive = raw.get("exclusiveMinimum" if key == "minimum" else "exclusiveMaximum")
                    if exclusive is not True:
                        out[key] = value
            elif key == "required":
                if isinstance(value, list):
                    names = [r for r in value if isinstance(r, str)]
                    if isinstance(raw.get("properties"), dict):
                        names = [r for r in names if r in raw["properties"]]
                    if names:
                        out[key] = sorted(set(names), key=names.index)
            elif key == "enum":
                if isinstance(value, list) and value:
                    out[key] = value[:200]
            elif key == "examples":
                out[key] = value if isinstance(value, list) else [value]
            elif key in ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"):
                if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                    out[key] = value
            elif key == "multipleOf":
                if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
                    out[key] = value
            elif key == "format":
                if isinstance(value, str):
                    out[key] = value
            else:
                out[key] = value
        if "example" in raw and "examples" not in out and raw["example"] is not None:
            out["examples"] = [raw["example"]]
        _merge_all_of(out)
        if "type" not in out and "properties" in out:
            out["type"] = "object"
        self._drop_bad_values(out, where)
        if isinstance(out.get("minLength"), int) and isinstance(out.get("maxLength"), int) and out["minLength"] > out["maxLength"]:
            del out["minLength"]
        return out

    def _type(self, kind: Any, where: str) -> Any:
        kinds = kind if isinstance(kind, list) else [kind]
        fixed: list[str] = []
        for k in kinds:
            if not isinstance(k, str):
                raise SchemaRejected(f"schema at {where or 'the root'} has a non-string type {k!r}")
            name = k.strip().lower()
            if name in _JSON_TYPES:
                fixed.append(name)
            elif name in _TYPE_ALIASES:
                alias = _TYPE_ALIASES[name]
                if alias is None:
                    return None
                fixed.append(alias)
            else:
                raise SchemaRejected(f"schema at {where or 'the root'} has unknown type {k!r}")
        unique = sorted(set(fixed), key=fixed.index)
        return unique if len(unique) > 1 else unique[0]

    def _pattern(self, value: Any, where: str) -> str | None:
        if not isinstance(value, str):
            return None
        fixed = translate_pattern(value)
        if fixed is None:
            self.notes.append(f"dropped pattern {value[:60]!r} at {where.lstrip('.')}: not a regular expression Python can run")
            return None
        if backtracks(fixed):
            self.notes.append(f"dropped pattern {value[:60]!r} at {where.lstrip('.')}: a repeated group of repeats "
                              "can take exponential time to match")
            return None
        if fixed != value:
            self.notes.append(f"translated pattern {value[:60]!r} at {where.lstrip('.')}")
        return fixed

    def _drop_bad_values(self, out: dict[str, Any], where: str) -> None:
        """Defaults, examples and enums that do not validate against their own schema are dropped."""
        bare = {k: v for k, v in out.items() if k not in ("default", "examples", "enum", "description")}
        if not bare:
            return
        try:
            validator = Draft202012Validator(bare)
        except Exception:  # noqa: BLE001 - checked as a whole later
            return
        if "default" in out and not validator.is_valid(out["default"]):
            del out["default"]
        if "examples" in out:
            good = [e for e in out["examples"] if validator.is_valid(e)]
            if good:
                out["examples"] = good[:3]
            else:
                del out["examples"]
        if "enum" in out:
            good = [e for e in out["enum"] if validator.is_valid(e)]
            if good:
                out["enum"] = good
            else:
                del out["enum"]
                self.notes.append(f"dropped an enum at {where.lstrip('.')}: none of its values has the declared type")


def _type_order(name: str) -> int:
    return ["string", "integer", "number", "boolean", "object", "array", "null"].index(name)


def translate_pattern(pattern: str) -> str | None:
    """``pattern`` in Python ``re`` syntax (``\\p{L}`` and ``(?<name>`` translated), or None."""
    fixed = pattern.replace("(?<", "(?P<").replace("(?P<=", "(?<=").replace("(?P<!", "(?<!")
    if _UNICODE_PROPERTY.search(fixed):
        translated = _translate_properties(fixed)
        if translated is None:
            return None
        fixed = translated
    try:
        re.compile(fixed)
    except (re.error, RecursionError, OverflowError):
        return None
    return fixed


def _translate_properties(pattern: str) -> str | None:
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            match = _UNICODE_PROPERTY.match(pattern, i)
            if match:
                negated = match.group(1) == "P" or match.group(0).startswith("\\p{^")
                chars = _UNICODE_CLASSES.get(match.group(2))
                if chars is None or (negated and in_class):
                    return None
                if in_class:
                    out.append(chars)
                else:
                    out.append(f"[^{chars}]" if negated else f"[{chars}]")
                i = match.end()
                continue
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if ch == "[" and not in_class:
            in_class = True
        elif ch == "]" and in_class:
            in_class = False
        out.append(ch)
        i += 1
    return "".join(out)


def check_schema(schema: dict[str, Any]) -> None:
    """Raise ``SchemaRejected`` unless ``schema`` is valid Draft 2020-12 whose patterns Python can run.

    The meta-schema check is the official one, applied node by node and cached: validity is
    compositional (each subschema is checked as a schema on its own), and real services repeat the
    same parameter and row schemas across hundreds of tools.
    """
    for where, node in _nodes(schema, ""):
        problem = _meta_problem(json.dumps(node, sort_keys=True, ensure_ascii=False))
        if problem is not None:
            raise SchemaRejected(f"not a valid JSON Schema at {where}{problem}")
    for pattern in _patterns(schema):
        try:
            re.compile(pattern)
        except re.error as exc:
            raise SchemaRejected(f"pattern {pattern[:60]!r} is not a valid regular expression ({exc})") from None


_NESTED_MAPS = ("properties", "$defs", "patternProperties", "dependentSchemas")
def _merge_all_of(node: dict[str, Any]) -> None:
    """``allOf`` of object schemas as one object schema: closed parts (``additionalProperties: false``) would
    otherwise refuse each other's properties, and no value could match (ShipEngine's bodies)."""
    parts = node.get("allOf")
    if not isinstance(parts, list) or not parts or not all(
            isinstance(p, dict) and (p.get("type") in (None, "object")) and "properties" in p
            and not set(p) & {"anyOf", "oneOf", "allOf", "not", "if"} for p in parts):
        return
    properties: dict[str, Any] = dict(node.get("properties") or {})
    required: list[str] = list(node.get("required") or [])
    closed = node.get("additionalProperties") is False or any(p.get("additionalProperties") is False for p in parts)
    for part in parts:
        for name, sub in part["properties"].items():
            properties.setdefault(name, sub)
        required += [r for r in part.get("required", []) if r not in required]
        for key, value in part.items():
            if key not in ("properties", "required", "additionalProperties", "type"):
                node.setdefault(key, value)
    del node["allOf"]
    node.update(type="object", properties=properties)
    if required:
        node["required"] = required
    if closed:
        node["additionalProperties"] = False


_NESTED_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_NESTED_ONE = ("items", "additionalProperties", "not", "contains", "if", "then", "else", "propertyNames")


def _nodes(schema: Any, where: str) -> list[tuple[str, Any]]:
    """(location, node with its subschemas emptied) for ``schema`` and every subschema in it."""
    if not isinstance(schema, dict):
        return [(where, schema)]
    shell = dict(schema)
    found: list[tuple[str, Any]] = []
    for key in _NESTED_MAPS:
        if isinstance(schema.get(key), dict):
            shell[key] = {name: {} for name in schema[key]}
            for name, sub in schema[key].items():
                found.extend(_nodes(sub, f"{where}{key}/{name}/"))
    for key in _NESTED_LISTS:
        if isinstance(schema.get(key), list):
            shell[key] = [{} for _ in schema[key]]
            for index, sub in enumerate(schema[key]):
                found.extend(_nodes(sub, f"{where}{key}/{index}/"))
    for key in _NESTED_ONE:
        if isinstance(schema.get(key), dict):
            shell[key] = {}
            found.extend(_nodes(schema[key], f"{where}{key}/"))
    return [(where, shell), *found]


@cache
def _meta_validator() -> Draft202012Validator:
    return Draft202012Validator(Draft202012Validator.META_SCHEMA)


@lru_cache(maxsize=50_000)
def _meta_problem(text: str) -> str | None:
    error = best_match(_meta_validator().iter_errors(json.loads(text)))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.path) or "the root"
    return f"{where}: {error.message[:160]}"


#: A group whose body repeats, repeated itself (``([\w-]*)*``): matching it can take exponential time.
_NESTED_REPEAT = re.compile(r"\((?:[^()\\]|\\.)*(?<!\\)[*+}](?:\?)?\)[*+{]")


def backtracks(pattern: str) -> bool:
    r"""Whether ``pattern`` nests repeats (``(a+)+``, ``([\w .-]*)*``), so that a failing match can take
    exponential time: such a pattern in a schema would let one argument stall a tool call."""
    return bool(_NESTED_REPEAT.search(pattern))


def _patterns(node: Any) -> list[str]:
    found: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "pattern" and isinstance(value, str):
                found.append(value)
            elif key not in ("enum", "const", "default", "examples"):
                found.extend(_patterns(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(_patterns(item))
    return found


@cache
def _mcp_tool_validator() -> Draft202012Validator:
    path = MCP_SCHEMA_PATH if MCP_SCHEMA_PATH.exists() else _MCP_SCHEMA_EXTRACT
    document = json.loads(path.read_text())
    schema = {"$schema": document.get("$schema"), "$defs": document["$defs"], "$ref": "#/$defs/Tool"}
    return Draft202012Validator(schema)


def mcp_tool_problems(tool: dict[str, Any]) -> list[str]:
    """Why ``tool`` (as ``tools/list`` returns it) is not a valid MCP ``Tool``; empty when it is."""
    validator = _mcp_tool_validator()
    return [f"{'/'.join(map(str, e.path)) or 'tool'}: {e.message[:160]}" for e in validator.iter_errors(tool)]
