"""The words the planner reads intent from: verbs, state transitions, paging and option parameters."""

from __future__ import annotations

LIST_VERBS = frozenset({"list", "search", "query", "browse", "enumerate", "filter", "all", "index", "find"})
GET_VERBS = frozenset({"get", "fetch", "retrieve", "read", "show", "view", "describe", "lookup", "info", "inspect",
                       "download", "load", "display", "obtain", "see", "detail", "details"})
CREATE_VERBS = frozenset({"create", "add", "new", "insert", "make", "register", "upload", "book", "schedule",
                          "import", "write", "post", "put", "build", "generate", "open", "log", "record", "place",
                          "attach", "enroll", "enrol", "join", "apply", "request", "comment", "vote", "rate",
                          "duplicate", "copy", "clone", "reserve", "order", "issue", "set"})
UPDATE_VERBS = frozenset({"update", "edit", "modify", "patch", "change", "rename", "replace", "save", "configure",
                          "move", "unassign", "upsert", "set", "reorder", "adjust", "transfer", "tag",
                          "untag", "label", "mark", "reschedule", "reassign", "rotate", "reset", "sync", "link",
                          "unlink", "associate", "dissociate"})
DELETE_VERBS = frozenset({"delete", "remove", "destroy", "purge", "erase", "drop", "discard", "detach",
                          "withdraw", "leave", "kick"})
SEND_VERBS = frozenset({"send", "notify", "email", "sms", "reply", "forward", "broadcast", "dispatch", "tweet",
                        "invite", "share", "message", "text", "announce", "ping", "remind", "mail", "fax", "call",
                        "dial", "respond", "chat", "post"})

#: verb -> (field, value): the state a successful transition leaves the row in.
#: ``status`` is the entity's state machine; other fields are boolean flags.
#: Actions that make a record of their own and change the row they act on as the product shows it: a refund of
#: a charge marks the charge ``refunded`` (Stripe's ``charge.refunded``), paying an order marks it ``paid``.
MARKING_VERBS: dict[str, str] = {"refund": "refunded", "pay": "paid", "dispute": "disputed", "reverse": "reversed",
                                 "credit": "credited"}
TRANSITIONS: dict[str, tuple[str, str | bool]] = {
    "archive": ("status", "archived"),
    "unarchive": ("status", "active"),
    "cancel": ("status", "cancelled"),
    "close": ("status", "closed"),
    "reopen": ("status", "open"),
    "approve": ("status", "approved"),
    "reject": ("status", "rejected"),
    "decline": ("status", "declined"),
    "accept": ("status", "accepted"),
    "publish": ("status", "published"),
    "unpublish": ("status", "unpublished"),
    "activate": ("status", "active"),
    "reactivate": ("status", "active"),
    "deactivate": ("status", "inactive"),
    "enable": ("status", "enabled"),
    "disable": ("status", "disabled"),
    "pause": ("status", "paused"),
    "resume": ("status", "active"),
    "start": ("status", "started"),
    "stop": ("status", "stopped"),
    "complete": ("status", "completed"),
    "finish": ("status", "completed"),
    "capture": ("status", "captured"),
    "refund": ("status", "refunded"),
    "void": ("status", "voided"),
    "confirm": ("status", "confirmed"),
    "finalize": ("status", "finalized"),
    "finalise": ("status", "finalized"),
    "submit": ("status", "submitted"),
    "restore": ("status", "active"),
    "suspend": ("status", "suspended"),
    "unsuspend": ("status", "active"),
    "verify": ("status", "verified"),
    "validate": ("status", "validated"),
    "block": ("status", "blocked"),
    "unblock": ("status", "active"),
    "ban": ("status", "banned"),
    "unban": ("status", "active"),
    "resolve": ("status", "resolved"),
    "revoke": ("status", "revoked"),
    "expire": ("status", "expired"),
    "deny": ("status", "denied"),
    "hold": ("status", "on_hold"),
    "release": ("status", "released"),
    "ship": ("status", "shipped"),
    "fulfill": ("status", "fulfilled"),
    "fulfil": ("status", "fulfilled"),
    "deliver": ("status", "delivered"),
    "checkin": ("status", "checked_in"),
    "checkout": ("status", "checked_out"),
    "escalate": ("status", "escalated"),
    "retry": ("status", "pending"),
    "sign": ("status", "signed"),
    "execute": ("status", "executed"),
    "run": ("status", "running"),
    "trigger": ("status", "triggered"),
    "redeem": ("status", "redeemed"),
    "settle": ("status", "settled"),
    "authorize": ("status", "authorized"),
    "authorise": ("status", "authorized"),
    "dispute": ("status", "disputed"),
    "install": ("status", "installed"),
    "uninstall": ("status", "uninstalled"),
    "deploy": ("status", "deployed"),
    "rollback": ("status", "rolled_back"),
    "merge": ("status", "merged"),  # GitLab's PUT /merge_requests/{id}/merge: the request is merged
    "end": ("status", "ended"),
    "invalidate": ("status", "invalidated"),
    "snooze": ("status", "snoozed"),
    "unsnooze": ("status", "active"),
    "dismiss": ("status", "dismissed"),
    "acknowledge": ("status", "acknowledged"),
    "ack": ("status", "acknowledged"),
    "assign": ("status", "assigned"),
    "lock": ("locked", True),
    "unlock": ("locked", False),
    "pin": ("pinned", True),
    "unpin": ("pinned", False),
    "star": ("starred", True),
    "unstar": ("starred", False),
    "follow": ("following", True),
    "unfollow": ("following", False),
    "like": ("liked", True),
    "unlike": ("liked", False),
    "subscribe": ("subscribed", True),
    "unsubscribe": ("subscribed", False),
    "mute": ("muted", True),
    "unmute": ("muted", False),
    "watch": ("watching", True),
    "unwatch": ("watching", False),
    "favorite": ("favorite", True),
    "unfavorite": ("favorite", False),
    "favourite": ("favorite", True),
    "bookmark": ("bookmarked", True),
    "hide": ("hidden", True),
    "unhide": ("hidden", False),
    "flag": ("flagged", True),
    "trash": ("trashed", True),  # a soft delete: the row stays, out of the default lists
    "untrash": ("trashed", False),
    "pay": ("status", "paid"),
    "unflag": ("flagged", False),
    "read": ("read", True),
    "unread": ("read", False),
}

#: Verbs whose transition only makes sense after another (a row must first be closed to be reopened).
RESTORING = {"reopen": ("closed", "resolved", "completed", "done"), "unarchive": ("archived",), "restore": ("archived", "deleted", "inactive"),
             "resume": ("paused",), "unsuspend": ("suspended",), "unblock": ("blocked",), "unban": ("banned",),
             "reactivate": ("inactive", "cancelled", "suspended"), "retry": ("failed", "cancelled", "stopped")}
#: States a row cannot leave except through a restoring verb.
TERMINAL_STATES = frozenset({"cancelled", "canceled", "voided", "void", "refunded", "rejected", "declined", "expired",
                             "revoked", "denied", "banned", "closed", "archived", "completed", "deleted", "uninstalled",
                             # done: a paid invoice, a captured payment or a signed document cannot be cancelled
                             "paid", "captured", "succeeded", "fulfilled", "shipped", "delivered", "signed", "done",
                             "resolved", "won", "lost"})
#: The state new rows start in, by which transitions exist (first match wins).
INITIAL_BY_TARGET = (("published", "draft"), ("finalized", "draft"), ("submitted", "draft"), ("approved", "pending"),
                     ("captured", "pending"), ("confirmed", "pending"), ("shipped", "pending"),
                     ("accepted", "pending"), ("closed", "open"), ("resolved", "open"), ("completed", "open"),
                     ("started", "created"), ("running", "created"))

#: Nouns that name no entity: namespaces, qualifiers, generic words.
NAMESPACE_WORDS = frozenset({"api", "apis", "rest", "admin", "v1", "v2", "v3", "public", "private", "internal",
                             "external", "rpc", "json", "xml", "service", "services", "ext", "app", "web"})
STOP_WORDS = frozenset({"a", "an", "the", "all", "my", "new", "existing", "specific", "single", "multiple", "s",
                        "one", "some", "any", "each", "every", "current", "authenticated", "given", "this", "that",
                        "own", "your", "their", "its", "our", "his", "her", "selected", "particular", "certain",
                        "bulk", "batch", "many", "several", "list", "lists_of", "detail", "details", "info",
                        "information", "metadata", "meta", "object", "objects", "record", "records", "entry",
                        "entries", "item_details", "id", "ids", "by", "using", "via", "and", "or", "api", "v1", "v2",
                        "using", "please", "just", "only", "also"})
PREPOSITIONS = frozenset({"by", "for", "from", "in", "on", "of", "with", "to", "into", "using", "via", "at", "as",
                          "within", "under", "over", "after", "before", "since", "across", "per", "between"})
CURRENT_WORDS = frozenset({"me", "self", "current", "mine", "authenticated", "myself", "whoami", "my"})

LIMIT_PARAMS = frozenset({"limit", "per_page", "perpage", "page_size", "pagesize", "max_results", "maxresults",
                          "max", "top", "count", "size", "max_items", "maxitems", "num", "number_of_results",
                          "results_per_page", "resultsperpage", "rows", "first", "take", "maxrecords", "page_limit",
                          "items_per_page", "max_count", "result_count", "fetch_size", "batch_size", "n"})
CURSOR_PARAMS = frozenset({"cursor", "page_token", "pagetoken", "next_token", "nexttoken", "next_page_token",
                           "nextpagetoken", "after", "starting_after", "startingafter", "continuation",
                           "continuation_token", "continuationtoken", "marker", "next_cursor", "nextcursor",
                           "start_cursor", "startcursor", "page_cursor", "scroll_id", "next", "ending_before",
                           "before", "since_id", "max_id", "from_token", "token_page", "after_cursor", "next_link"})
PAGE_PARAMS = frozenset({"page", "page_number", "pagenumber", "page_no", "pageno", "page_num", "pagenum",
                         "page_index", "pageindex"})
OFFSET_PARAMS = frozenset({"offset", "skip", "start", "start_index", "startindex", "from", "first_result",
                           "firstresult", "start_at", "startat", "start_position", "begin"})
SEARCH_PARAMS = frozenset({"q", "query", "search", "keyword", "keywords", "term", "terms", "search_term",
                           "searchterm", "search_query", "searchquery", "search_text", "searchtext", "text_query",
                           "name_contains", "filter_text", "contains", "search_string", "searchstring", "phrase",
                           "full_text", "fulltext", "query_string", "querystring"})
OPTION_PARAMS = frozenset({"fields", "field", "expand", "include", "includes", "exclude", "sort", "sort_by", "sortby",
                           "order", "order_by", "orderby", "direction", "sort_order", "sortorder", "sort_direction",
                           "sortdirection", "format", "lang", "language", "locale", "view", "projection", "embed",
                           "pretty", "verbose", "select", "opt_fields", "opt_pretty", "output", "response_format",
                           "return", "with", "detailed", "full", "compact", "summary_only", "include_all",
                           "includes_all", "dry_run", "dryrun", "async", "wait", "timeout", "version", "api_version",
                           "apiversion", "accept", "content_type", "charset", "encoding", "callback_url", "idempotency_key",
                           "request_id", "x_request_id", "trace", "debug", "test", "sandbox", "mode", "depth",
                           "member_fields", "board_fields", "card_fields", "list_fields", "organization_fields",
                           "filter", "filters", "nocache", "cache", "refresh", "raw", "envelope", "metadata_fields",
                           "time_zone", "timezone", "tz", "units", "currency_format", "with_count", "count_only",
                           "total_count", "include_count", "show_deleted", "include_deleted", "deleted",
                           "include_archived", "archived_only", "sort_field", "sortfield", "display", "entities",
                           "inclusive", "highlight", "latest", "oldest", "pretty_print", "prettyprint"})
#: First words of parameters that shape a read's output rather than select rows.
OPTION_PREFIXES = frozenset({"include", "exclude", "sort", "order", "with", "show", "return", "expand", "hide",
                             "fetch", "embed", "omit"})
RANGE_SUFFIXES = {"after": "gte", "since": "gte", "from": "gte", "min": "gte", "gte": "gte", "gt": "gte",
                  "start": "gte", "begin": "gte", "before": "lte", "until": "lte", "to": "lte", "max": "lte",
                  "lte": "lte", "lt": "lte", "end": "lte"}
RANGE_PREFIXES = {"min": "gte", "max": "lte", "from": "gte", "to": "lte", "since": "gte", "until": "lte",
                  "start": "gte", "end": "lte", "after": "gte", "before": "lte"}

PERSON_ENTITIES = frozenset({"user", "person", "contact", "customer", "member", "employee", "author", "owner",
                             "recipient", "attendee", "guest", "candidate", "applicant", "patient", "student",
                             "teacher", "agent", "buyer", "seller", "client", "lead", "subscriber", "people",
                             "reporter", "requester", "driver", "passenger", "traveler", "speaker", "organizer",
                             "reviewer", "signer", "collaborator", "participant", "follower", "staff", "profile",
                             "assignee", "volunteer", "donor", "tenant", "instructor", "physician", "doctor",
                             "athlete", "player", "actor", "artist", "musician", "creator", "influencer", "visitor",
                             "worker", "contractor", "freelancer", "respondent", "voter", "learner", "admin",
                             "operator", "technician", "rider", "host", "recruiter", "investor", "shareholder"})
LABEL_FIELDS = ("name", "title", "subject", "display_name", "displayName", "full_name", "fullName", "label",
                "summary", "username", "email", "headline", "description")


def verb_class(word: str) -> str | None:
    """``list``/``get``/``create``/``update``/``delete``/``send``/``transition`` for a verb, or None."""
    if word in TRANSITIONS and word not in ("read", "run", "start", "order", "issue", "post"):
        return "transition"
    for name, verbs in (("list", LIST_VERBS), ("get", GET_VERBS), ("delete", DELETE_VERBS), ("send", SEND_VERBS),
                        ("update", UPDATE_VERBS), ("create", CREATE_VERBS)):
        if word in verbs:
            return name
    if word in TRANSITIONS:
        return "transition"
    return None


def squash(name: str) -> str:
    """A parameter name compared without case or separators (``pageToken``, ``page_token`` -> ``pagetoken``)."""
    return "".join(ch for ch in name.lower() if ch.isalnum())


def _squashed(names: frozenset[str]) -> frozenset[str]:
    return frozenset(squash(n) for n in names)


LIMIT_PARAMS = _squashed(LIMIT_PARAMS)
CURSOR_PARAMS = _squashed(CURSOR_PARAMS)
PAGE_PARAMS = _squashed(PAGE_PARAMS)
OFFSET_PARAMS = _squashed(OFFSET_PARAMS)
SEARCH_PARAMS = _squashed(SEARCH_PARAMS)
OPTION_PARAMS = _squashed(OPTION_PARAMS)
