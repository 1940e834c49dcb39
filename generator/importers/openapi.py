"""OpenAPI 3 and Swagger 2 documents (JSON or YAML): one tool per HTTP operation.

Each operation's input schema merges its path, query, header and form parameters with the JSON
request body (as the shared specs file does); its output schema is the JSON schema of its success
response, which the planner reads for the entity's fields. Local ``$ref``s are expanded with cycle
and depth limits; an unresolvable one makes that operation a rejected tool, never a failed import.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from generator.importers.raw import RawService, RawTool, SourceError
from generator.importers.text import read_text
from generator.naming import snake

_METHODS = ("get", "post", "put", "patch", "delete")
_MAX_REF_DEPTH = 6
_SKIP_HEADERS = {"authorization", "accept", "content-type", "user-agent", "x-api-key", "cookie", "accept-language"}


class _Unresolvable(Exception):
    pass


def read_openapi(path: Path) -> list[RawService]:
    text = read_text(path)
    document = parse_document(text, path.name)
    return [service_from_openapi(document, default_name=path.stem.split(".")[0])]


def parse_document(text: str, source: str) -> dict[str, Any]:
    stripped = text.lstrip()
    try:
        if stripped.startswith("{"):
            document = json.loads(text)
        else:
            try:
                import yaml  # optional: YAML documents need PyYAML
            except ImportError:
                raise SourceError(f"{source} is YAML; install PyYAML to read it, or convert it to JSON") from None
            document = yaml.safe_load(text)
    except (json.JSONDecodeError, ValueError) as exc:
        raise SourceError(f"{source} is not a JSON/YAML document ({str(exc).splitlines()[0][:120]})") from None
    except Exception as exc:  # noqa: BLE001 - yaml's errors: one line for the user
        raise SourceError(f"{source} is not a JSON/YAML document ({type(exc).__name__})") from None
    if not isinstance(document, dict) or not ("openapi" in document or "swagger" in document):
        raise SourceError(f"{source} is not an OpenAPI 3 or Swagger 2 document (no 'openapi' or 'swagger' field)")
    return document


def is_openapi(document: Any) -> bool:
    return isinstance(document, dict) and ("openapi" in document or "swagger" in document) and "paths" in document


def service_from_openapi(document: dict[str, Any], *, default_name: str) -> RawService:
    info = document.get("info") if isinstance(document.get("info"), dict) else {}
    provider = info.get("x-providerName")
    api = info.get("x-serviceName")
    name = f"{provider}:{api}" if provider and api else provider or default_name or snake(str(info.get("title", "")))
    swagger = "swagger" in document
    license_info = info.get("license") if isinstance(info.get("license"), dict) else {}
    service = RawService(
        name=str(name),
        tools=[],
        title=str(info.get("title") or ""),
        description=str(info.get("description") or info.get("title") or ""),
        source=str(info.get("x-origin", "") if not isinstance(info.get("x-origin"), list) else ""),
        license=None,
        upstream_license=license_info.get("name"),
        format="swagger-2" if swagger else "openapi-3",
        version=str(info.get("version")) if info.get("version") is not None else None,
        categories=[str(c) for c in info.get("x-apisguru-categories") or []],
    )
    paths = document.get("paths")
    if not isinstance(paths, dict):
        service.problem = "the document has no 'paths'"
        return service
    resolver = _Resolver(document)
    for path, item in paths.items():
        if not isinstance(item, dict):
            continue
        shared = item.get("parameters") if isinstance(item.get("parameters"), list) else []
        for method in _METHODS:
            operation = item.get(method)
            if isinstance(operation, dict):
                service.tools.append(_tool(resolver, str(path), method, operation, shared, swagger))
    return service


def _tool(
    resolver: _Resolver, path: str, method: str, op: dict[str, Any], shared: list[Any], swagger: bool
) -> RawTool:
    name = str(op.get("operationId") or f"{method}_{snake(path) or 'root'}")
    description = str(op.get("summary") or op.get("description") or "")
    if op.get("summary") and op.get("description") and op["description"] != op["summary"]:
        description = f"{op['summary']}. {op['description']}"
    tool = RawTool(
        name=name,
        description=description,
        method=method.upper(),
        path=path,
        path_params=tuple(re.findall(r"\{([^}/]+)\}", path)),
    )
    try:
        tool.input_schema = _input_schema(resolver, op, shared, swagger)
        tool.output_schema = _output_schema(resolver, op, swagger)
    except _Unresolvable as exc:
        tool.problem = f"unresolvable reference {exc}"
    return tool


def _input_schema(resolver: _Resolver, op: dict[str, Any], shared: list[Any], swagger: bool) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    params: dict[tuple[str, str], dict[str, Any]] = {}
    for raw in [*shared, *(op.get("parameters") or [])]:
        param = resolver.deref(raw)
        if isinstance(param, dict) and isinstance(param.get("name"), str):
            params[(str(param.get("in")), param["name"])] = param  # operation-level overrides path-level
    for (where, name), param in params.items():
        if where == "header" and name.lower() in _SKIP_HEADERS:
            continue
        if where == "cookie":
            continue
        if where == "body":  # Swagger 2 body parameter
            _merge_body(properties, required, resolver.expand(param.get("schema") or {}))
            continue
        if swagger:
            schema = {k: v for k, v in param.items() if k not in ("name", "in", "required", "collectionFormat")}
        else:
            schema = dict(param.get("schema") or {})
            if param.get("description") and "description" not in schema:
                schema["description"] = param["description"]
        properties[name] = resolver.expand(schema)
        if param.get("required") or where == "path":
            required.append(name)
    body = op.get("requestBody")
    if body is not None and not swagger:
        body = resolver.deref(body)
        content = body.get("content") if isinstance(body, dict) else None
        if isinstance(content, dict):
            media = next((content[m] for m in content if "json" in m), None) or next(
                (content[m] for m in content if "form" in m), None
            )
            if isinstance(media, dict) and media.get("schema") is not None:
                _merge_body(properties, required, resolver.expand(media["schema"]), body_required=bool(body.get("required")))
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = sorted(set(required), key=required.index)
    return schema


def _merge_body(properties: dict[str, Any], required: list[str], body: Any, body_required: bool = True) -> None:
    if isinstance(body, dict) and (body.get("type") == "object" or "properties" in body) and body.get("properties"):
        for name, sub in body["properties"].items():
            key = name if name not in properties else f"body_{name}"
            properties[key] = sub
            if name in (body.get("required") or []) and body_required:
                required.append(key)
    elif isinstance(body, dict) and body:
        properties["body"] = body
        if body_required:
            required.append("body")


def _output_schema(resolver: _Resolver, op: dict[str, Any], swagger: bool) -> dict[str, Any] | None:
    responses = op.get("responses") if isinstance(op.get("responses"), dict) else {}
    for code in ("200", "201", "202", 200, 201, 202, "default"):
        response = responses.get(code)
        if response is None:
            continue
        response = resolver.deref(response)
        if not isinstance(response, dict):
            continue
        if swagger:
            schema = response.get("schema")
        else:
            content = response.get("content") if isinstance(response.get("content"), dict) else {}
            media = next((content[m] for m in content if "json" in m), None)
            schema = media.get("schema") if isinstance(media, dict) else None
        if isinstance(schema, dict):
            try:
                return resolver.expand(schema)
            except _Unresolvable:
                return None  # an output we cannot read only costs us field hints
    return None


class _Resolver:
    """Local ``$ref`` expansion: cycles and depth beyond ``_MAX_REF_DEPTH`` become a placeholder."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document

    def lookup(self, ref: str) -> Any:
        if not ref.startswith("#/"):
            raise _Unresolvable(repr(ref))
        node: Any = self.document
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or part not in node:
                raise _Unresolvable(repr(ref))
            node = node[part]
        return node

    def deref(self, node: Any, depth: int = 0) -> Any:
        while isinstance(node, dict) and "$ref" in node and depth < 16:
            node = self.lookup(str(node["$ref"]))
            depth += 1
        return node

    def expand(self, node: Any, trail: tuple[str, ...] = ()) -> Any:
        if isinstance(node, list):
            return [self.expand(item, trail) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            ref = str(node["$ref"])
            if ref in trail or len(trail) >= _MAX_REF_DEPTH:
                return {"type": "object", "description": "(nested schema omitted)"}
            target = self.lookup(ref)
            return self.expand(target, trail + (ref,))
        return {key: (value if key in ("example", "examples", "default", "enum") else self.expand(value, trail))
                for key, value in node.items()}
