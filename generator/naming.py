"""Names: snake_case, singular and plural nouns, and the tool/service/parameter names the kernel accepts.

Real specifications name things every way there is (``getActionsByIdAction``, ``chat.postMessage``,
``page[size]``, ``X-Request-Id``); everything the generator emits goes through this module, so a
service's tables, columns, tools and parameters follow one convention.
"""

from __future__ import annotations

import hashlib
import re

from mcp_services.kernel.tools import TOOL_NAME_PATTERN

#: MCP 2025-11-25 tool names: 1-128 characters from this set (case-sensitive).
MCP_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")
#: Property names every major tool-calling API accepts (Anthropic's rule is the strictest).
PARAM_NAME = re.compile(r"^[A-Za-z0-9_]{1,64}$")
MAX_TOOL_NAME = 48
MAX_SERVICE_NAME = 40

_CAMEL_1 = re.compile(r"([A-Z]+)([A-Z][a-z])")
_CAMEL_2 = re.compile(r"([a-z0-9])([A-Z])")
_NON_WORD = re.compile(r"[^A-Za-z0-9]+")

_IRREGULAR_SINGULAR = {
    "people": "person",
    "children": "child",
    "men": "man",
    "women": "woman",
    "data": "data",
    "media": "media",
    "series": "series",
    "news": "news",
    "species": "species",
    "analyses": "analysis",
    "indices": "index",
    "indexes": "index",
    "matrices": "matrix",
    "vertices": "vertex",
    "criteria": "criterion",
    "statuses": "status",
    "campuses": "campus",
    "buses": "bus",
    "bonuses": "bonus",
    "viruses": "virus",
    "aliases": "alias",
    "quizzes": "quiz",
    "leaves": "leave",
    "movies": "movie",
    "cookies": "cookie",
    "metadata": "metadata",
    "feedback": "feedback",
    "settings": "settings",
    "analytics": "analytics",
    "stats": "stats",
    "details": "details",
}
_INVARIANT = {"status", "address", "access", "business", "class", "process", "canvas", "alias", "analysis",
              "bus", "campus", "bonus", "virus", "news", "series", "species", "gas", "lens", "atlas", "basis",
              "chassis", "census", "corpus", "diagnosis", "axis", "thesis", "synopsis", "ids", "dns", "sms",
              "mms", "sos", "os", "https", "this", "has", "is", "was", "yes", "plus", "bias", "progress",
              "success", "loss", "boss", "pass", "glass", "mass", "cross", "less", "express", "kiss"}


def snake(text: str) -> str:
    """``getActionsByIdAction`` -> ``get_actions_by_id_action``; ``page[size]`` -> ``page_size``."""
    text = _CAMEL_1.sub(r"\1_\2", text)
    text = _CAMEL_2.sub(r"\1_\2", text)
    return _NON_WORD.sub("_", text).strip("_").lower()


def words(text: str) -> list[str]:
    """The lowercase words of a name in any convention."""
    return [w for w in snake(text).split("_") if w]


def singular(noun: str) -> str:
    """A best-effort singular of an English noun (the last word of a snake name)."""
    head, sep, last = noun.rpartition("_")
    word = last.lower()
    if word in _IRREGULAR_SINGULAR:
        single = _IRREGULAR_SINGULAR[word]
    elif word in _INVARIANT or len(word) <= 3 or not word.endswith("s"):
        single = word
    elif word.endswith("ies") and len(word) > 4:
        single = word[:-3] + "y"
    elif word.endswith(("sses", "shes", "ches", "xes", "zzes")):
        single = word[:-2]
    elif word.endswith("ss") or word.endswith("us") or word.endswith("is"):
        single = word
    else:
        single = word[:-1]
    return f"{head}{sep}{single}"


def plural(noun: str) -> str:
    """The plural used for table names (``category`` -> ``categories``)."""
    head, sep, last = noun.rpartition("_")
    if last in ("data", "media", "series", "news", "metadata", "feedback", "settings", "analytics", "stats",
                "details", "species"):
        return noun
    if last.endswith("y") and len(last) > 1 and last[-2] not in "aeiou":
        return f"{head}{sep}{last[:-1]}ies"
    if last.endswith(("s", "x", "z", "ch", "sh")):
        return f"{head}{sep}{last}es"
    if last == "person":
        return f"{head}{sep}people"
    return f"{head}{sep}{last}s"


def is_plural(word: str) -> bool:
    return singular(word) != word


def identifier(text: str, *, fallback: str = "x") -> str:
    """A lowercase identifier that starts with a letter."""
    name = snake(text)
    if not name:
        return fallback
    if not name[0].isalpha():
        name = f"{fallback}_{name}"
    return name


def shorten(name: str, limit: int) -> str:
    """``name`` cut to ``limit`` characters, with a stable hash suffix when it had to be cut."""
    if len(name) <= limit:
        return name
    digest = hashlib.sha1(name.encode()).hexdigest()[:6]
    return f"{name[: limit - 7].rstrip('_')}_{digest}"


def tool_name(raw: str) -> str:
    """The kernel's form of a tool name (``^[a-z][a-z0-9_]{0,47}$``)."""
    name = shorten(identifier(raw, fallback="tool"), MAX_TOOL_NAME)
    assert TOOL_NAME_PATTERN.match(name), name
    return name


def param_name(raw: str) -> str:
    """A parameter/column name: ``[A-Za-z0-9_]``, case kept (``idBoard`` stays ``idBoard``)."""
    name = _NON_WORD.sub("_", raw).strip("_")
    if not name:
        return ""
    if name[0].isdigit():
        name = f"p_{name}"
    return name[:64]


_VERSION = re.compile(r"^(v\d+(\.\d+)*[a-z]*\d*|\d+(\.\d+)*)$")
_TLD = {"com", "org", "net", "io", "gov", "in", "uk", "co", "local", "team", "ms", "app", "dev", "de", "fr",
        "me", "us", "ai", "info", "biz", "cloud", "tech", "eu", "space", "run", "sh", "ly", "to", "at", "ch",
        "nl", "se", "no", "fi", "it", "es", "au", "ca", "jp", "tv", "fm", "gg", "xyz", "site", "online",
        "herokuapp", "azurewebsites", "github", "world", "rest", "edu", "ru", "nz", "be", "pl", "cz", "dk"}
_HOST_NOISE = {"api", "apis", "www", "developer", "developers", "rest", "openapi", "public", "v1", "v2", "v3"}


def service_name(raw: str) -> str:
    """A service name from a spec's name: ``slack.com`` -> ``slack``, ``atlassian.com:jira`` -> ``atlassian_jira``."""
    host, _, api = raw.partition(":")
    labels = [label for label in host.lower().split(".") if label]
    core = [label for label in labels if label not in _TLD and label not in _HOST_NOISE] or labels[:1]
    provider = snake(core[-1]) if core else "service"
    if api:
        api_name = snake(api)
        name = api_name if api_name.startswith(provider) or provider in ("composio",) else f"{provider}_{api_name}"
    else:
        name = provider
    name = re.sub(r"_+", "_", name).strip("_")
    if not name or not name[0].isalpha():
        name = f"svc_{name}"
    name = name.replace("__", "_")
    return shorten(name, MAX_SERVICE_NAME)


def is_version_segment(segment: str) -> bool:
    return bool(_VERSION.match(segment.lower()))
