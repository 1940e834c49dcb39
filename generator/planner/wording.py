"""A generated tool's intent and phrases, read from its summary and description (never from its name).

The composer verbalises tasks from each tool's declared intent (``mcp_services.kernel.intents``) and
phrases ("refund the charge {charge}"), so a generated tool must say, in a person's words, what it does.
The description's first sentence gives the verb and its object ("Sets the topic for a conversation." ->
"set the topic for a conversation {channel}"); the behaviour the planner chose gives the parameter a
phrase names and, where the description says nothing usable, the verb. Every intent agrees with the
tool's effect and every placeholder names a parameter (``intent_problems`` is empty).
"""

from __future__ import annotations

import re
from typing import Any

from mcp_services.kernel.intents import INTENTS, intent_problems

from generator.naming import is_plural, plural, singular, words
from generator.schemas import clean_text
from generator.spec import Behaviour, Binding, EntityDef

#: A verb of a description -> the intent it names (the kernel's vocabulary).
VERB_INTENTS: dict[str, str] = {
    **dict.fromkeys(("list", "search", "query", "browse", "find", "filter", "enumerate"), "find"),
    **dict.fromkeys(("get", "retrieve", "fetch", "read", "show", "view", "describe", "lookup", "obtain", "return",
                     "download", "load", "display", "see"), "get"),
    **dict.fromkeys(("check", "count", "calculate", "estimate", "preview", "report", "compute", "summarize",
                     "summarise", "analyze", "analyse"), "check"),
    **dict.fromkeys(("create", "add", "insert", "make", "register", "upload", "generate", "build", "import",
                     "record", "log", "open", "place", "issue", "duplicate", "copy", "clone", "new"), "create"),
    **dict.fromkeys(("update", "edit", "modify", "patch", "change", "rename", "replace", "set", "configure",
                     "move", "save", "adjust", "reorder", "upsert", "rotate", "reset", "mark", "toggle"), "update"),
    **dict.fromkeys(("delete", "destroy", "purge", "erase", "trash", "archive", "discard", "clear"), "delete"),
    **dict.fromkeys(("restore", "unarchive", "undelete", "recover"), "restore"),
    **dict.fromkeys(("link", "associate", "attach", "connect", "merge"), "link"),
    **dict.fromkeys(("tag", "label", "untag", "unlabel"), "tag"),
    **dict.fromkeys(("notify", "email", "text", "sms", "message", "call", "dial", "ping", "remind", "alert",
                     "fax"), "notify"),
    **dict.fromkeys(("reply", "respond", "answer"), "reply"),
    **dict.fromkeys(("post", "tweet", "broadcast", "announce"), "post"),
    "forward": "forward", "draft": "draft",
    **dict.fromkeys(("comment", "annotate", "note"), "note"),
    **dict.fromkeys(("assign", "reassign", "delegate"), "assign"),
    **dict.fromkeys(("invite", "enroll", "enrol"), "invite"),
    **dict.fromkeys(("remove", "unassign", "kick", "detach", "dissociate", "disassociate", "unlink", "leave",
                     "withdraw"), "remove"),
    **dict.fromkeys(("share", "grant"), "share"),
    **dict.fromkeys(("unsubscribe", "optout"), "opt_out"),
    **dict.fromkeys(("activate", "deactivate", "enable", "disable", "pause", "resume", "start", "stop", "suspend",
                     "unsuspend", "lock", "unlock", "pin", "unpin", "star", "unstar", "flag", "unflag", "block",
                     "unblock", "escalate", "hold", "release", "snooze", "dismiss", "acknowledge", "mute",
                     "unmute", "follow", "unfollow", "subscribe", "watch", "unwatch", "like", "unlike", "hide",
                     "unhide", "retry", "trigger", "run", "execute", "deploy", "install", "uninstall"), "transition"),
    **dict.fromkeys(("close", "resolve", "complete", "finish", "done"), "close"),
    "reopen": "reopen",
    **dict.fromkeys(("approve", "accept", "confirm", "authorize", "authorise", "verify", "sign"), "approve"),
    **dict.fromkeys(("reject", "decline", "deny", "revoke"), "reject"),
    **dict.fromkeys(("submit", "finalize", "finalise"), "submit"),
    **dict.fromkeys(("publish", "unpublish"), "publish"),
    "send": "send",
    **dict.fromkeys(("schedule", "plan"), "schedule"),
    **dict.fromkeys(("reschedule", "postpone"), "reschedule"),
    **dict.fromkeys(("cancel", "void", "abort", "terminate", "end", "expire"), "cancel"),
    **dict.fromkeys(("book", "reserve"), "book"),
    **dict.fromkeys(("charge", "capture", "bill"), "charge"),
    "refund": "refund", "invoice": "invoice",
    **dict.fromkeys(("pay", "payout", "settle"), "pay"),
    **dict.fromkeys(("ship", "fulfil", "fulfill", "dispatch", "deliver"), "ship"),
}
#: The noun a create makes -> the intent (creating a refund is refunding).
NOUN_INTENTS = {"refund": "refund", "payment": "pay", "payout": "pay", "invoice": "invoice", "shipment": "ship",
                "fulfillment": "ship", "fulfilment": "ship", "label": "ship", "comment": "note", "note": "note",
                "reply": "reply", "invitation": "invite", "invite": "invite", "meeting": "schedule",
                "event": "schedule", "appointment": "schedule", "booking": "book", "reservation": "book",
                "message": "notify", "email": "notify", "sms": "notify", "notification": "notify", "fax": "notify",
                "call": "notify", "charge": "charge", "tag": "tag", "post": "post"}
_MESSAGE_NOUNS = frozenset({"message", "email", "sms", "text", "notification", "chat", "mail", "fax", "call", "mms"})
#: A transition's target state -> the intent.
STATE_INTENTS = {"closed": "close", "resolved": "close", "completed": "close", "done": "close", "open": "reopen",
                 "approved": "approve", "accepted": "approve", "confirmed": "approve", "authorized": "approve",
                 "rejected": "reject", "declined": "reject", "denied": "reject", "revoked": "reject",
                 "cancelled": "cancel", "voided": "cancel", "expired": "cancel", "ended": "cancel",
                 "published": "publish", "submitted": "submit", "finalized": "submit", "archived": "delete",
                 "refunded": "refund", "captured": "charge", "shipped": "ship", "fulfilled": "ship",
                 "delivered": "ship", "settled": "pay", "assigned": "assign", "sent": "send"}
_KIND_INTENTS = {"link": "invite", "unlink": "remove",
                 "get": "get", "list": "find", "search": "find", "create": "create", "update": "update",
                 "delete": "delete", "transition": "transition", "send": "send"}
_SKIP_LEAD = re.compile(
    r"^(?:this (?:endpoint|operation|method|api|call|request|resource|tool)(?: (?:will|can|is used to|allows you to|lets you))?"
    r"|use this (?:endpoint |method |operation )?to|allows? (?:you |users )?to|lets? you|you can|used to|"
    r"api (?:to|for)|endpoint (?:to|for)|call this to|will)\s+", re.I)
_STOP = frozenset({"and", "or", "that", "which", "who", "if", "when", "where", "using", "via", "by", "with", "in",
                   "on", "from", "into", "as", "at", "so", "but", "then", "within", "based", "according", "given",
                   "including", "optionally", "while", "whose", "after", "before", "without", "per", "across",
                   "under", "over", "through", "until", "since", "is", "are", "was", "be", "will", "can", "may",
                   "must", "should", "would", "to", "you", "your", "we", "it", "its", "their", "this", "these",
                   "those", "such", "also", "only", "currently", "previously", "already"})
_FILLER = frozenset({"a", "an", "the", "all", "any", "existing", "specific", "specified", "single", "given",
                     "particular", "certain", "one", "new", "some", "each", "every", "my", "our", "your",
                     "authenticated", "current", "selected", "list", "details", "detail", "information", "info",
                     "data", "of", "collection", "set", "array", "object", "objects", "record", "records",
                     "entry", "entries", "about", "paginated", "paged", "full"})
_KEEP_PREPOSITIONS = frozenset({"for", "of", "to", "from", "on", "in"})


def intent_and_phrases(
    description: str, behaviour: Behaviour, effect: str, entity: EntityDef | None, bindings: dict[str, Binding],
    parameters: dict[str, Any], entities: dict[str, EntityDef],
) -> tuple[str, list[str]]:
    """The intent of a tool and up to two phrases, from its source ``description`` and what it does."""
    sentence = _first_sentence(description)
    verb, obj = _verb_and_object(sentence)
    kind = behaviour.kind
    intent = _intent(verb, kind, effect, behaviour, entity)
    slot = _slot(kind, behaviour, bindings, parameters, entities, entity)
    phrases: list[str] = []
    if verb and obj:
        phrases.append(_join(verb, obj, slot))
    fallback = _template(intent, kind, entity, slot, bindings, parameters, entities)
    if fallback and fallback not in phrases:
        phrases.append(fallback)
    params = list(parameters.get("properties", {}))
    phrases = [p for p in phrases if not intent_problems(intent, effect, [p], params)][:2]  # type: ignore[arg-type]
    if not phrases:
        phrases = [_template(intent, kind, entity, None, bindings, parameters, entities) or intent.replace("_", " ")]
    return intent, phrases


def _first_sentence(text: str) -> str:
    plain = clean_text(text, 400)
    first = re.split(r"(?<=[.!?])\s+|\n", plain, maxsplit=1)[0].strip()
    first = re.sub(r"\([^)]*\)", "", first)
    for _ in range(2):
        first = _SKIP_LEAD.sub("", first.strip())
    return first.strip(" .:")


def _base(word: str) -> str | None:
    """``Creates`` -> ``create``, ``Retrieves`` -> ``retrieve``, ``Lists`` -> ``list``; None if no known verb."""
    w = word.lower()
    for candidate in (w, w[:-3] + "y" if w.endswith("ies") else "", w[:-2] if w.endswith(("ches", "shes", "sses", "xes", "zes")) else "",
                      w[:-1] if w.endswith("s") else "", w[:-2] if w.endswith("es") else ""):
        if candidate and candidate in VERB_INTENTS:
            return candidate
    return None


def _verb_and_object(sentence: str) -> tuple[str | None, list[str]]:
    tokens = re.findall(r"[A-Za-z][A-Za-z0-9'-]*", sentence)
    for index, token in enumerate(tokens[:4]):
        verb = _base(token)
        if verb is None:
            continue
        obj: list[str] = []
        for word in tokens[index + 1:]:
            lower = word.lower()
            if lower in _STOP and not (lower in _KEEP_PREPOSITIONS and obj and len(obj) < 4):
                break
            obj.append(lower)
            if len(obj) >= 6:
                break
        while obj and (obj[-1] in _FILLER or obj[-1] in _KEEP_PREPOSITIONS):
            obj.pop()
        while obj and (obj[0] in _FILLER or obj[0] in _KEEP_PREPOSITIONS):  # "the details of a charge" -> "charge"
            obj.pop(0)
        if obj and any(len(w) > 2 for w in obj):
            return verb, obj
        return verb, []
    return None, []


def _intent(verb: str | None, kind: str, effect: str, behaviour: Behaviour, entity: EntityDef | None) -> str:
    noun = (entity.name.split("_")[-1] if entity else "")
    candidates: list[str] = ["find"] if kind in ("list", "search") else []
    if kind in ("link", "unlink"):
        candidates.append(_KIND_INTENTS[kind])  # joining or leaving a channel adds or removes a member
    if kind == "transition" and behaviour.transition is not None:
        candidates.append(STATE_INTENTS.get(str(behaviour.transition.to).lower(), ""))
    if verb:
        named = VERB_INTENTS[verb]
        if named == "send" and (noun in _MESSAGE_NOUNS or kind in ("send",) and not noun):
            named = "notify"
        if named == "create" and kind == "create" and noun in NOUN_INTENTS:
            named = NOUN_INTENTS[noun]
        candidates.append(named)
    if kind in ("create", "send") and noun in NOUN_INTENTS:
        candidates.append(NOUN_INTENTS[noun])
    if kind == "send":
        candidates.append("notify" if noun in _MESSAGE_NOUNS else "send")
    if kind == "delete" and entity is not None and entity.per_parent is False and verb in ("remove", "unassign", "detach"):
        candidates.append("remove")
    candidates.append(_KIND_INTENTS.get(kind, ""))
    candidates.append("get" if effect == "read" else "update")
    for candidate in candidates:
        if candidate in INTENTS and INTENTS[candidate][0] == effect:
            return candidate
    return "get" if effect == "read" else "update"


def _slot(kind: str, behaviour: Behaviour, bindings: dict[str, Binding], parameters: dict[str, Any],
          entities: dict[str, EntityDef], entity: EntityDef | None) -> tuple[str, str] | None:
    """(noun, param) a phrase names: the row acted on, else its parent; None when no parameter names one."""
    required = set(parameters.get("required", []))
    for role in ("key", "via"):
        for param, binding in bindings.items():
            if binding.role == role:
                target = entities.get(binding.entity or "") if role == "via" else entity
                return (_noun(target.name) if target else "record"), param
    for param, binding in bindings.items():
        if binding.role == "parent" and binding.entity in entities:
            return _noun(binding.entity or ""), param
    if kind == "simulated":
        idish = [p for p in parameters.get("properties", {}) if p in required and re.search(r"(?i)(id|name|key)$", p)]
        if idish:
            return re.sub(r"(?i)_?(id|name|key)$", "", idish[0]).replace("_", " ").strip() or "record", idish[0]
    return None


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _noun(name: str) -> str:
    return " ".join(words(name)) or name


_MAKING = frozenset({"create", "add", "insert", "make", "register", "upload", "generate", "build", "import", "record",
                     "log", "open", "place", "issue", "new", "send", "post", "schedule", "book", "draft", "invite"})


def _join(verb: str, obj: list[str], slot: tuple[str, str] | None) -> str:
    article = "the"
    if verb in _MAKING and not is_plural(obj[0]):
        article = "an" if obj[0][:1] in "aeiou" else "a"
    phrase = " ".join([verb, article, *obj])
    if slot is not None:
        noun, param = slot
        last = obj[-1] if obj else ""
        head = _squash(singular(noun.split()[-1]))
        if not obj or _squash(last).endswith(_squash(noun.split()[-1])) or any(_squash(singular(w)) == head for w in obj):
            phrase += f" {{{param}}}"
        else:
            phrase += f" of the {noun} {{{param}}}" if verb in ("get", "retrieve", "list", "fetch", "show") else f" for the {noun} {{{param}}}"
    return re.sub(r"\s+", " ", phrase).strip()


def _template(intent: str, kind: str, entity: EntityDef | None, slot: tuple[str, str] | None,
              bindings: dict[str, Binding], parameters: dict[str, Any], entities: dict[str, EntityDef]) -> str:
    """A plain phrase for the intent: "refund the charge {charge}", "find the invoices of the customer {customer}"."""
    noun = _noun(entity.name) if entity else "record"
    nouns = " ".join(words(plural(entity.name))) if entity and not is_plural(entity.name) else noun
    target = f"the {slot[0]} {{{slot[1]}}}" if slot else ""
    if kind in ("list", "search"):
        filters = [p for p, b in bindings.items() if b.role in ("filter", "search")][:1]
        by = f" by {filters[0].replace('_', ' ')} {{{filters[0]}}}" if filters and not slot else ""
        return f"find the {nouns} of {target}" if slot else f"find the {nouns}{by}"
    if kind in ("create", "send"):
        verb = {"refund": "refund", "pay": "record a payment for", "invoice": "invoice", "ship": "ship",
                "note": "add a note to", "reply": "reply to", "invite": "invite someone to", "notify": "send a message to",
                "post": "post in", "schedule": "schedule a meeting for", "book": "book", "charge": "charge",
                "tag": "tag"}.get(intent)
        if verb and target:
            return f"{verb} {target}"
        label = next((p for p, b in bindings.items() if b.role == "field" and entity is not None
                      and b.column == entity.label), None)
        named = f" named {{{label}}}" if label else ""
        return f"create a {noun}{named} for {target}" if target else f"create a {noun}{named}"
    if not target:
        return {"get": f"look up the {noun}", "check": f"check the {noun}", "update": f"update the {noun}"}.get(intent, "")
    verb = {"get": "look up", "check": "check", "update": "update", "delete": "delete", "restore": "restore",
            "close": "close", "reopen": "reopen", "approve": "approve", "reject": "reject", "submit": "submit",
            "publish": "publish", "cancel": "cancel", "refund": "refund", "charge": "capture", "ship": "ship",
            "assign": "assign", "remove": "remove", "send": "send", "pay": "pay", "transition": "change the status of",
            "link": "link", "tag": "tag", "share": "share", "invite": "invite people to",
            "opt_out": "unsubscribe"}.get(intent, intent.replace("_", " "))
    return f"{verb} {target}"
