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


#: How a provider is called where its host says it otherwise (``googleapis.com`` is Google's).
PROVIDER_NAMES = {"googleapis": "Google", "ebay": "eBay", "hubapi": "HubSpot", "nexmo": "Vonage (Nexmo)",
                  "youneedabudget": "YNAB", "atlassian": "Atlassian", "sendgrid": "SendGrid", "getgo": "GoTo", "citrixonline": "GoTo",
                  "izettle": "Zettle", "twinehealth": "Twine Health", "visualstudio": "Azure DevOps (Visual Studio)",
                  "letmc": "agentOS", "lufthansa": "Lufthansa", "openbanking": "Open Banking UK", "tomtom": "TomTom",
                  "apideck": "Apideck", "walmart": "Walmart", "personio": "Personio", "ticketmaster": "Ticketmaster",
                  "d7networks": "D7 Networks", "inboxroute": "InboxRoute", "interactivebrokers": "Interactive Brokers",
                  "shop-pro": "Color Me Shop", "xero": "Xero", "adyen": "Adyen", "clever": "Clever", "bigoven": "BigOven",
                  "envoice": "Envoice", "formapi": "FormAPI", "circuitsandbox": "Circuit", "transavia": "Transavia",
                  "listennotes": "Listen Notes", "idtbeyond": "IDT Beyond", "payments": "GOV.UK Pay"}
#: Toolkits that wrap other products' APIs: the product is the API they wrap, not them.
AGGREGATORS = frozenset({"composio", "cloud-elements"})
#: Names of better-known products that an unrelated spec's host shares: name -> (their domain, what they are).
BETTER_KNOWN = {"brex": ("brex.com", "Brex Inc.'s corporate cards and spend management"),
                "square": ("squareup.com", "Square's payments and point of sale"),
                "stripe": ("stripe.com", "Stripe's payments"),
                "box": ("box.com", "Box's cloud file storage")}
_GENERIC_TITLE = re.compile(r"(?i)\b(api|apis|rest|documentation|docs|endpoints?|reference|interface|version|v\d[\w.]*|"
                            r"active|for|the|/v\d+|\d[\d.]*)\b")


def provider_name(source_name: str) -> str:
    """The product's maker as people call it: ``googleapis.com:drive`` -> ``Google``, ``brex.io`` -> ``brex.io``."""
    host = source_name.partition(":")[0].lower()
    labels = [label for label in host.split(".") if label]
    core = [label for label in labels if label not in _TLD and label not in _HOST_NOISE] or labels[:1]
    key = core[-1] if core else host
    if key in BETTER_KNOWN and BETTER_KNOWN[key][0] != host:
        return host  # brex.io, not Brex Inc.
    return PROVIDER_NAMES.get(key) or key.replace("-", " ").title()


def product_title(title: str | None, source_name: str) -> str:
    """A title that names the product its spec describes: a title that does not name its provider gets it
    ("Fulfillment API" of ebay.com -> "eBay Fulfillment API"; "KYC API Documentation" of brex.io -> "brex.io
    KYC API"); one that is only generic words ("API v1.0.0") becomes the provider's name and "API"."""
    provider = provider_name(source_name)
    text = re.sub(r"^(?i:the)\s+", "", (title or "").strip())
    host = source_name.partition(":")[0].lower()
    api = source_name.partition(":")[2]
    if any(label in AGGREGATORS for label in host.split(".")) and api:  # Composio's google_admin is Google Admin's
        return text if squash_words(api) in squash_words(text) else f"{api.replace('_', ' ').title()} {text}".strip()
    labels = [squash_words(x) for x in host.split(".") if x and x not in _TLD and x not in _HOST_NOISE]
    names = [n for n in [squash_words(provider), *labels] if n]
    said = [squash_words(w) for w in _GENERIC_TITLE.sub(" ", text).split() if len(squash_words(w)) >= 3]
    if text and (any(n in squash_words(text) for n in names) or any(w in n for w in said for n in labels)):
        return text
    text = re.sub(r"(?i)\s*\b(documentation|docs)\b", "", text).strip(" ,:-")
    if not _GENERIC_TITLE.sub("", text).strip(" ,:-()/"):
        return f"{provider} API"
    return f"{provider} {text}" if text else provider


def collision_note(source_name: str) -> str:
    """For a spec whose name collides with a better-known product: which product it is, and which it is not."""
    host = source_name.partition(":")[0].lower()
    for name, (domain, what) in BETTER_KNOWN.items():
        if name in [label for label in host.split(".")] and host != domain:
            return f"{host}'s API, not {what} ({domain})."
    return ""


def squash_words(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())
