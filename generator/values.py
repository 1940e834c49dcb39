"""Plausible values from a JSON schema, a field name and a semantic type, drawn from the shared World.

One generator serves three users: seeding (rows of generated services), the gate (example calls),
and the offline world model (answers of simulated tools). Values that mean a person or a company
come from the World, so a generated service's customer is the CRM's contact; everything else is
drawn from a seeded ``random.Random``, so the same seed gives the same values.
"""

from __future__ import annotations

import random
import re
import uuid
from datetime import timedelta
from typing import Any

from mcp_services.kernel.world import Organisation, Person, World

from generator.naming import singular, words
from generator.regexgen import string_matching
from generator.vocabulary import ADDRESS_LINES, CHOICES, KINDS, MIME_TYPES, NAMES, TEXTS

_PEOPLE = frozenset({"user", "person", "people", "contact", "customer", "member", "employee", "author", "owner",
                     "assignee", "recipient", "sender", "attendee", "guest", "candidate", "applicant", "lead", "agent",
                     "reviewer", "signer", "collaborator", "participant", "subscriber", "reporter", "creator",
                     "requester", "manager", "admin", "student", "teacher", "patient", "driver", "profile", "worker",
                     "staff", "approver", "delegate", "invitee", "speaker", "host", "organizer", "buyer", "seller"})
_COMPANIES = frozenset({"company", "organization", "organisation", "org", "business", "merchant", "vendor", "supplier",
                        "employer", "firm", "brand", "partner", "enterprise", "tenant", "client", "carrier"})
_PLACES = frozenset({"place", "location", "venue", "site", "office", "store", "warehouse", "branch", "facility"})
_PRODUCTS = frozenset({"product", "sku", "article", "catalog", "inventory", "variant", "line_item", "goods"})

_COLORS = ("blue", "green", "red", "orange", "purple", "yellow", "teal", "gray")
_FORMAT_EXAMPLES = {"ipv4": "203.0.113.7", "ipv6": "2001:db8::7", "time": "09:30:00", "byte": "aGVsbG8=",
                    "binary": "file-contents", "password": "Correct-Horse-7", "hostname": "app.example.com",
                    "uri-reference": "/files/report.pdf", "json-pointer": "/a/b", "regex": "^[a-z]+$",
                    "duration": "P1D", "idn-hostname": "app.example.com"}


class ValueMaker:
    """Values for one purpose (``seed``, ``call``...), stable for a world and a purpose."""

    def __init__(self, world: World, rng: random.Random) -> None:
        self.world = world
        self.rng = rng
        self._now = world.now_dt
        self._context: tuple[str, ...] = ()  # the words of the field an object value is inside

    # -- who a row is about -------------------------------------------------------------------------

    def person(self, index: int | None = None) -> Person:
        people = self.world.people
        return people[index % len(people)] if index is not None else self.rng.choice(people)

    def organisation_of(self, person: Person) -> Organisation:
        return self.world.organisation(person.organisation_id)

    # -- values ---------------------------------------------------------------------------------------

    def value(
        self,
        schema: dict[str, Any],
        name: str = "",
        *,
        semantic: str | None = None,
        person: Person | None = None,
        index: int = 0,
        entity: str = "",
        depth: int = 0,
        prefer_examples: bool = False,
    ) -> Any:
        """A value valid for ``schema`` (as far as it can tell) that fits ``name`` and ``semantic``."""
        schema = schema if isinstance(schema, dict) else {}
        person = person or self.person(index)
        if "const" in schema:
            return schema["const"]
        if prefer_examples:
            for key in ("examples",):
                if isinstance(schema.get(key), list) and schema[key]:
                    return schema[key][0]
            if "default" in schema and schema["default"] is not None:
                return schema["default"]
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            options = [e for e in schema["enum"] if e is not None] or schema["enum"]
            return options[0] if prefer_examples else self.rng.choice(options)
        for combinator in ("anyOf", "oneOf"):
            options = schema.get(combinator)
            if isinstance(options, list) and options:
                real = [o for o in options if isinstance(o, dict) and o.get("type") != "null"] or options
                merged = {**{k: v for k, v in schema.items() if k != combinator}, **real[0]}
                return self.value(merged, name, semantic=semantic, person=person, index=index, entity=entity,
                                  depth=depth + 1, prefer_examples=prefer_examples)
        if isinstance(schema.get("allOf"), list):
            merged = {k: v for k, v in schema.items() if k != "allOf"}
            for part in schema["allOf"]:
                if isinstance(part, dict):
                    merged = _merge(merged, part)
            return self.value(merged, name, semantic=semantic, person=person, index=index, entity=entity,
                              depth=depth + 1, prefer_examples=prefer_examples)
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "string")
        semantic = semantic or schema.get("x-semantic-type")
        if kind is None:
            kind = "object" if "properties" in schema else "array" if "items" in schema else \
                "boolean" if is_flag_name(name) else "string"  # an untyped is_active is a flag, not a company
        if kind == "string":
            return self.string(schema, name, semantic, person, index, entity)
        if kind == "integer":
            return int(self.number(schema, name, semantic, integer=True))
        if kind == "number":
            return self.number(schema, name, semantic, integer=False)
        if kind == "boolean":
            return self.rng.random() < 0.5 if not prefer_examples else True
        if kind == "array":
            items = schema.get("items") if isinstance(schema.get("items"), dict) else {"type": "string"}
            low = schema.get("minItems", 1) if isinstance(schema.get("minItems"), int) else 1
            high = schema.get("maxItems", 2) if isinstance(schema.get("maxItems"), int) else 2
            count = max(low, min(high, 1 if depth > 1 or set(words(name)) & {"email", "emails", "phone", "phones"}
                                 else self.rng.randint(1, 2)))
            singular_name = name[:-1] if name.endswith("s") else name
            values = [self.value(items, singular_name, person=person, index=index + i, entity=entity, depth=depth + 1,
                                 prefer_examples=prefer_examples) for i in range(count)]
            if schema.get("uniqueItems"):
                unique: list[Any] = []
                for v in values:
                    if v not in unique:
                        unique.append(v)
                values = unique
            return values
        if kind == "object":
            return self.object(schema, person, index, entity, depth, prefer_examples, name)
        if kind == "null":
            return None
        return self.string({}, name, semantic, person, index, entity)

    def object(self, schema: dict[str, Any], person: Person, index: int, entity: str, depth: int, prefer: bool,
               name: str = "") -> dict[str, Any]:
        """An object of ``schema``; one inside ``emails`` or ``phone_numbers`` is the row's own person's."""
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        container = set(words(name))
        outer, self._context = self._context, tuple(words(name))
        required = [r for r in schema.get("required", []) if r in props]
        chosen = required + [p for p in props if p not in required][: (3 if depth < 2 else 0)]
        out: dict[str, Any] = {}
        if depth > 4:
            chosen = required
        for key in chosen:
            if key in ("value", "address", "email", "email_address") and container & {"email", "emails"} \
                    and props[key].get("type") in ("string", None):
                out[key] = person.email  # an email list agrees with the record's own person
            elif key in ("value", "number", "phone", "phone_number") and container & {"phone", "phones", "numbers"} \
                    and props[key].get("type") in ("string", None):
                out[key] = person.phone
            else:
                out[key] = self.value(props[key], key, person=person, index=index, entity=entity, depth=depth + 1,
                                      prefer_examples=prefer)
        self._context = outer
        min_props = schema.get("minProperties")
        if not out and isinstance(min_props, int) and min_props > 0 and not props:
            out["key"] = "value"
        return out

    def string(self, schema: dict[str, Any], name: str, semantic: str | None, person: Person, index: int, entity: str) -> str:
        low = schema.get("minLength", 0) if isinstance(schema.get("minLength"), int) else 0
        high = schema.get("maxLength") if isinstance(schema.get("maxLength"), int) else None
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            # what the value means first (a date, an email), as long as the pattern takes it; a string made
            # from the pattern alone ("4451-43-84T01:84:30Z", "o8@ta.bn") only when nothing meaningful fits
            for meant in self._meant(schema, name, semantic, person, index, entity):
                if _fits_pattern(pattern, meant) and low <= len(meant) <= (high if high is not None else len(meant)):
                    return meant
            made = string_matching(pattern, self.rng, min_length=low, max_length=high)
            if made is not None:
                return made
        text = self._semantic_string(semantic, name, person, index, entity)
        if text is None:
            text = self._format_string(schema.get("format") or implied_format(name), name, person)
        if text is None:
            description = schema.get("description") if isinstance(schema.get("description"), str) else ""
            text = self._named_string(name, person, index, entity, description)
        if high is not None and len(text) > high:
            text = text[:high]
        if len(text) < low:
            text = text + "x" * (low - len(text))
        return text

    def _meant(self, schema: dict[str, Any], name: str, semantic: str | None, person: Person, index: int,
               entity: str) -> list[str]:
        """Values that mean what the field says, in the shapes a pattern may ask for (a date-time, its date, ...)."""
        out: list[str] = []
        when = self.moment(days=self.rng.randint(-60, 30))
        fmt = schema.get("format") or implied_format(name) or _pattern_format(schema.get("pattern", ""))
        if fmt in ("date-time", "date", "time"):
            out += [when, when[:10], when[:19], when[:16] + "Z", when[:19] + ".000Z", when[:19] + "+00:00", when[11:19]]
        for candidate in (self._semantic_string(semantic, name, person, index, entity),
                          self._format_string(fmt, name, person)):
            if candidate is not None:
                out.append(candidate)
        if fmt in ("email", "idn-email") or "email" in words(name):
            org = re.sub(r"[^a-z0-9]", "", self.organisation_of(person).name.lower())[:12] or "mail"
            first, last = (re.sub(r"[^a-z]", "", w.lower()) for w in (person.name.split() + [""])[:2])
            out += [person.email, f"{first}.{last}@{org}.com", f"{first}{last}@{org}.com", f"{first}@{org}.com"]
        return out

    def number(self, schema: dict[str, Any], name: str, semantic: str | None, *, integer: bool) -> float:
        low = schema.get("minimum", schema.get("exclusiveMinimum"))
        high = schema.get("maximum", schema.get("exclusiveMaximum"))
        low = low if isinstance(low, (int, float)) and not isinstance(low, bool) else None
        high = high if isinstance(high, (int, float)) and not isinstance(high, bool) else None
        if "exclusiveMinimum" in schema and isinstance(low, (int, float)):
            low = low + (1 if integer else 0.01)
        if "exclusiveMaximum" in schema and isinstance(high, (int, float)):
            high = high - (1 if integer else 0.01)
        parts = words(name)
        if semantic == "money":
            base_low, base_high = 5.0, 2500.0
        elif semantic == "percentage":
            base_low, base_high = 0.0, 100.0
        elif semantic == "quantity" or (parts and parts[-1] in ("count", "quantity", "qty", "number")):
            base_low, base_high = 1.0, 20.0
        elif parts and parts[-1] in ("year",):
            base_low, base_high = 2020.0, 2026.0
        elif parts and parts[-1] in ("lat", "latitude"):
            base_low, base_high = -60.0, 60.0
        elif parts and parts[-1] in ("lng", "lon", "longitude"):
            base_low, base_high = -120.0, 120.0
        else:
            base_low, base_high = 1.0, 100.0
        lo = float(low) if low is not None else (base_low if high is None or base_low <= high else float(high) - 10)
        hi = float(high) if high is not None else max(lo, base_high if base_high >= lo else lo + 100)
        if hi < lo:
            hi = lo
        if integer:
            lo_i, hi_i = int(-(-lo // 1)), int(hi // 1)
            if hi_i < lo_i:
                hi_i = lo_i
            value: float = self.rng.randint(lo_i, min(hi_i, lo_i + 10_000))
        else:
            value = round(self.rng.uniform(lo, hi), 2)
            value = min(max(value, lo), hi)
        step = schema.get("multipleOf")
        if isinstance(step, (int, float)) and step > 0 and not isinstance(step, bool):
            value = round(value / step) * step
            if low is not None and value < low:
                value += step
            if integer:
                value = int(value)
        return value

    # -- strings by meaning --------------------------------------------------------------------------

    def _semantic_string(self, semantic: str | None, name: str, person: Person, index: int, entity: str) -> str | None:
        if semantic is None:
            return None
        org = self.organisation_of(person)
        world = self.world
        if semantic.startswith("id:"):
            return None
        table = {
            "email_address": person.email,
            "phone_number": person.phone,
            "person_name": person.name,
            "company_name": org.name,
            "currency": world.currency,
            "address": person.address,
            "domain_name": org.domain,
            "job_title": person.job_title,
            "city": person.city,
            "country_code": org.country,
            "username": person.username,
            "url": f"{org.website}/{_slug(entity or name or 'page')}/{index + 1}",
            "product_sku": world.products[index % len(world.products)].sku,
            "product_name": world.products[index % len(world.products)].name,
            "file_name": f"{_slug(self.title(entity, (), index))}.pdf",
            "file_ref": f"/Shared/{_slug(self.title(entity, (), index))}.pdf",
            "text": self.text(entity),
            "subject": self.title(entity, (), index),
            "tag": self.rng.choice(NAMES["label"]).lower(),
            "channel_name": self.rng.choice(NAMES["team"]),
        }
        if semantic == "datetime":
            return self.moment(days=self.rng.randint(-90, 30))
        if semantic == "date":
            return self.moment(days=self.rng.randint(-90, 30))[:10]
        return table.get(semantic)

    def moment(self, days: float = 0) -> str:
        return (self._now + timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")

    def _format_string(self, fmt: Any, name: str, person: Person) -> str | None:
        if not isinstance(fmt, str):
            return None
        if fmt == "date-time":
            return self.moment(days=self.rng.randint(-60, 30))
        if fmt == "date":
            return self.moment(days=self.rng.randint(-60, 30))[:10]
        if fmt in ("email", "idn-email"):
            return person.email
        if fmt in ("uri", "url", "iri"):
            return f"{self.organisation_of(person).website}/{_slug(name or 'page')}"
        if fmt == "uuid":
            return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        return _FORMAT_EXAMPLES.get(fmt)

    # -- names and texts of the things people make ---------------------------------------------------------

    def title(self, entity: str, prefix: tuple[str, ...] | list[str], index: int) -> str:
        """What a row of ``entity`` is called (``prefix``: the words before ``name``, as ``board`` in
        ``board_name``): a person, a company, a place or a product of the World, else a name of its kind."""
        subject = [w for w in prefix if w not in ("display", "full", "short", "long", "first")] or words(entity)
        person = self.person(index)
        said = set(subject) | {singular(w) for w in subject}
        if said & _PEOPLE:
            return person.name
        if said & _COMPANIES:
            return self.organisation_of(person).name
        if said & _PLACES:
            return self.world.places[index % len(self.world.places)].name
        if said & _PRODUCTS:
            return self.world.products[index % len(self.world.products)].name
        kind = _kind(subject) or _kind(words(entity))
        if kind is not None:
            names = NAMES[kind]
            return names[(index + self.rng.randrange(len(names))) % len(names)]
        noun = " ".join(w for w in words(entity) if w not in ("name", "title", "label", "display", "summary"))
        org = self._customer(index).name  # drawn per row: eight canvases are not all the home company's
        return f"{org} {noun}" if noun else org

    def _customer(self, index: int) -> Organisation:
        """The customer organisation a row of a kind with no names of its own is about (one per row, in turn)."""
        customers = [o for o in self.world.organisations if o.id != self.world.home_organisation_id] \
            or list(self.world.organisations)
        return customers[(index + self.rng.randrange(len(customers))) % len(customers)]

    def text(self, entity: str) -> str:
        return self.rng.choice(TEXTS.get(_kind(words(entity)) or "", TEXTS["default"]))

    def _named_string(self, name: str, person: Person, index: int, entity: str, description: str = "") -> str:
        parts = words(name)
        last = parts[-1] if parts else ""
        joined = "_".join(parts)
        org = self.organisation_of(person)
        street, city, region, postcode = _address_parts(person.address)
        if joined in ("first_name", "given_name", "firstname", "forename"):
            return person.first_name
        if joined in ("last_name", "family_name", "surname", "lastname"):
            return person.last_name
        if last in ("name", "title", "label", "headline", "summary", "display", "heading", "caption", "subject"):
            return self.title(entity, parts[:-1], index)
        if last in ("description", "body", "text", "message", "content", "note", "notes", "comment", "bio", "reason",
                    "memo", "details", "instructions", "snippet", "excerpt", "purpose", "topic", "about"):
            return self.text(entity)
        if joined in ("line1", "address_line1", "address_line_1", "street", "street1", "address1", "street_address",
                      "line_1") or last in ("street", "line1", "address1"):
            return street
        if joined in ("line2", "address_line2", "address_line_2", "street2", "address2", "line_2") or last in ("line2", "address2"):
            return self.rng.choice(ADDRESS_LINES)
        if last in ("city", "town", "locality"):
            return city
        if last in ("state", "region", "province", "county") and joined not in ("state",):
            return region
        if last in ("zip", "postcode", "zipcode") or joined in ("postal_code", "post_code", "zip_code"):
            return postcode
        if parts and parts[0] == "id" and len(parts) > 1:  # Trello's idBoard: an id, opaque
            return f"{self.rng.getrandbits(96):024x}"
        if set(parts) & _URL_WORDS:
            return f"{org.website}/{_slug('-'.join(parts))}" + (".png" if set(parts) & _IMAGE_WORDS else "")
        if last in ("tag", "tags", "label", "labels", "keyword", "keywords", "hashtag"):
            return self.rng.choice(NAMES["label"])
        if last == "industry":
            return org.industry
        if last in ("birthday", "dob") or joined in ("birth_date", "date_of_birth"):
            return f"{self.rng.randint(1965, 2000)}-{self.rng.randint(1, 12):02d}-{self.rng.randint(1, 28):02d}"
        if last == "initials":
            return f"{person.first_name[0]}{person.last_name[0]}"
        if joined in ("middle_name", "middlename", "middle_initial"):
            return self.rng.choice("ABCDEJKLMR") + "."
        if last in ("salutation",) or joined in ("name_prefix", "prefix"):
            return self.rng.choice(("Ms.", "Mr.", "Dr."))
        if joined in ("suffix", "name_suffix"):
            return self.rng.choice(("Jr.", "Sr.", "III"))
        if last in ("department", "division"):
            return self.rng.choice(NAMES["team"]).replace("-", " ").capitalize()
        if joined == "area_code":
            return person.phone[2:5]
        if joined in ("country_code", "region_code", "address_country"):
            return org.country
        if last in ("extension", "ext") and "phone" in " ".join(parts + list(self._context)):
            return str(self.rng.randint(100, 999))
        if last in ("to", "recipient", "cc", "bcc"):
            return person.email
        if last in ("from",):
            return self.world.user.email
        if last in ("where", "location", "venue", "origin", "destination"):
            return city
        if joined in ("user_agent", "customer_user_agent"):
            return "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Safari/605.1.15"
        if last in ("fingerprint", "checksum", "md5", "sha1", "sha256", "digest"):
            return f"{self.rng.getrandbits(128):032x}"
        if last in ("terms",):
            return self.rng.choice(("Net 30", "Net 15", "Due on receipt"))
        if last in ("revenue", "amount", "price", "total", "balance", "cost", "budget", "salary"):
            return f"{self.rng.randint(5, 900) * 50}.00"
        if last in ("employees", "headcount", "size") and not set(parts) & {"page", "file"}:
            return self.rng.choice(("1-10", "11-50", "51-200", "201-500"))
        if last in ("position", "occupation", "job"):
            return person.job_title
        if last in ("year",):
            return str(self._now.year - self.rng.randint(0, 3))
        if last in ("color", "colour"):
            return self.rng.choice(_COLORS)
        if last in ("language", "lang", "locale") or joined in ("language_code", "accept_language", "hl"):
            return "en-US" if last in ("locale",) or joined == "accept_language" else "en"
        if last in ("timezone", "tz", "timezonename") or joined in ("time_zone", "time_zone_name"):
            return "America/New_York"
        if last in ("country",):
            return org.country
        if last in ("ip",) or joined == "ip_address":
            return f"203.0.113.{self.rng.randint(1, 254)}"
        if last in ("status", "state"):
            return "active"
        if last in ("mime", "mimetype") or joined in ("mime_type", "content_type", "media_type", "file_type", "filetype"):
            return self.rng.choice(MIME_TYPES)
        if last in CHOICES:
            return self.rng.choice(CHOICES[last])
        if last in ("version",):
            return f"1.{self.rng.randint(0, 9)}.{self.rng.randint(0, 20)}"
        if last in ("slug", "handle"):
            return _slug(self.title(entity, parts[:-1], index))
        if last == "key" and parts[:-1] and parts[-2] == "project":
            return _initials(self.title("project", (), index))
        if last in ("password", "secret", "token", "hash", "signature", "nonce", "salt"):
            return f"{self.rng.getrandbits(96):024x}"
        if last in ("ts",):
            return f"{int(self._now.timestamp()) - self.rng.randint(60, 86400 * 30)}.{self.rng.randint(0, 999999):06d}"
        if last in ("number", "reference", "ref", "code", "no", "num"):
            return self._document_number(parts, org, index)
        if last in ("id", "uid", "guid", "sid", "uuid", "key", "etag"):
            return f"{self.rng.getrandbits(64):016x}"
        if last in ("date",):
            return self.moment(days=self.rng.randint(-60, 30))[:10]
        if last in ("time", "at", "timestamp"):
            return self.moment(days=self.rng.randint(-60, 30))
        if last in ("owner", "user", "assignee", "author", "login", "member", "sender", "creator", "by", "reporter",
                    "reviewer", "approver", "modifier", "username", "usernames"):
            return person.username
        unknown = self._kind_of_value(parts, person, org)
        if unknown is not None:
            return unknown
        if last in ("org", "organization", "organisation", "company", "workspace", "team", "account", "employer"):
            return org.name if last in ("company", "employer", "organization", "organisation") else _slug(org.name)[:20]
        if last in ("repo", "repository"):
            return self.rng.choice(NAMES["software"])
        if last in ("project", "board", "folder", "bucket", "space"):
            return self.title(last, (), index)
        return self._described(parts, description, person, index, entity)

    def _kind_of_value(self, parts: list[str], person: Person, org: Organisation) -> str | None:
        """What a field named with one of these words holds, where no other rule reads its name: a phone, a
        barcode, a coordinate, a host, a month, a unit, a JSON document (Twilio's ``Attributes``: "must contain
        structurally valid JSON"), ids. Without it such a field got the row's company name."""
        said = set(parts)
        last = parts[-1] if parts else ""
        if said & {"tel", "tel1", "tel2", "telephone", "fax", "mobile", "cell", "msisdn"}:
            return person.phone
        if said & {"barcode", "ean", "upc", "gtin", "isbn"}:
            return "".join(str(self.rng.randint(0, 9)) for _ in range(13))
        if last in ("latitude", "lat"):
            return f"{self.rng.uniform(-60, 60):.5f}"
        if last in ("longitude", "lng", "lon"):
            return f"{self.rng.uniform(-150, 150):.5f}"
        if last in ("host", "hostname", "domain", "subdomain", "server"):
            domain = org.website.split("//")[-1].split("/")[0]
            return domain if last != "subdomain" else domain.split(".")[-2] if domain.count(".") >= 1 else domain
        if last == "month":
            return f"{self.rng.randint(1, 12):02d}"
        if last in ("housenumber", "house_number") or parts[-2:] == ["house", "number"]:
            return str(self.rng.randint(1, 240))
        if last in ("unit", "units", "uom"):
            return self.rng.choice(("kg", "pcs", "hours", "m") if "weight" not in said else ("kg", "lb"))
        if last in ("attributes", "metadata", "payload", "data", "context", "config", "configuration", "settings",
                    "properties", "extra"):
            return "{}"
        if last in ("ids",) or said & {"ids"}:
            return f"{self.rng.getrandbits(64):016x}"
        return None

    def _document_number(self, parts: list[str], org: Organisation, index: int) -> str:
        """A number as documents print it: ``INV-2025-0042``, a UPS tracking number, a purchase order."""
        said = set(parts)
        if said & {"tracking", "waybill"}:
            return f"1Z{self.rng.randint(100, 999)}{''.join(self.rng.choice('ABCDEFGHJKLMNPRSTUVWXY') for _ in range(3))}" \
                   f"{self.rng.randint(10**9, 10**10 - 1)}"
        year = self._now.year
        for words_, form in ((("invoice", "bill"), "INV-{y}-{n:04d}"), (("order", "sales"), "SO-{n:05d}"),
                             (("po", "purchase"), "PO-{y}-{n:03d}"), (("receipt",), "RCPT-{n:05d}"),
                             (("quote", "estimate"), "Q-{y}-{n:03d}"), (("ticket", "case", "issue"), "#{n}"),
                             (("contract", "agreement"), "MSA-{y}-{n:03d}"), (("credit",), "CN-{n:04d}"),
                             (("account", "iban", "routing", "bank"), "{n:010d}"), (("phone",), "")):
            if said & set(words_):
                if not form:
                    return self.person(index).phone
                return form.format(y=year, n=self.rng.randint(1, 9999) if "{n:010d}" != form else self.rng.randint(10**9, 10**10 - 1))
        if "code" in said:
            return f"{_initials(org.name)}-{self.rng.randint(1000, 9999)}"
        return f"{self.rng.randint(100000, 999999)}"

    def _described(self, parts: list[str], description: str, person: Person, index: int, entity: str) -> str:
        """A value for a field known only by its name and description: what the description says it holds,
        else something of the World the row is about (the company it belongs to)."""
        text = description.lower()
        said = set(re.findall(r"[a-z]+", text))
        org = self.organisation_of(person)
        if said & {"url", "link", "uri", "website", "webpage"}:
            return f"{org.website}/{_slug('-'.join(parts) or 'page')}"
        if said & {"email"}:
            return person.email
        if said & {"phone", "telephone", "mobile"}:
            return person.phone
        if said & {"currency"}:
            return self.world.currency
        if said & {"country"}:
            return org.country
        if said & {"timestamp", "datetime", "date", "time", "when"}:
            return self.moment(days=self.rng.randint(-60, 30))
        if said & {"language", "locale"}:
            return "en"
        if said & {"name", "title", "label"}:
            return self.title(entity, parts, index)
        if said & {"identifier", "id", "token", "key", "reference", "number", "code"}:
            return f"{self.rng.getrandbits(64):016x}"
        if said & {"description", "note", "comment", "message", "text", "explanation", "reason", "memo"}:
            return self.text(entity)
        return org.name


_URL_WORDS = frozenset({"url", "uri", "link", "website", "homepage", "href", "permalink", "image", "avatar",
                        "photo", "logo", "icon", "picture", "thumbnail", "webhook", "callback"})
_IMAGE_WORDS = frozenset({"image", "avatar", "photo", "logo", "icon", "picture", "thumbnail"})


def _kind(parts: list[str] | tuple[str, ...]) -> str | None:
    """The kind of thing words name (``board`` -> project, ``ticket`` -> task), nearest to the end first."""
    for word in reversed(list(parts)):
        for form in (word, singular(word)):
            if form in KINDS:
                return KINDS[form]
    return None


def _address_parts(address: str) -> tuple[str, str, str, str]:
    """(street, city, region, postcode) of a World address ``"12 Main St, Springfield, IL 62704"``."""
    pieces = [p.strip() for p in address.split(",")]
    street = pieces[0] if pieces else address
    city = pieces[1] if len(pieces) > 1 else ""
    tail = pieces[2].split() if len(pieces) > 2 else []
    region = tail[0] if tail else ""
    postcode = tail[1] if len(tail) > 1 else ""
    return street, city, region, postcode


def _initials(text: str) -> str:
    letters = "".join(w[0] for w in re.findall(r"[A-Za-z]+", text)).upper()
    return (letters or "ACME")[:4]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for key, value in b.items():
        if key == "properties" and isinstance(value, dict):
            out["properties"] = {**out.get("properties", {}), **value}
        elif key == "required" and isinstance(value, list):
            out["required"] = list(dict.fromkeys([*out.get("required", []), *value]))
        else:
            out.setdefault(key, value)
    return out


_START_END = (("start", "end"), ("starts", "ends"), ("begin", "end"), ("from", "to"), ("start", "finish"))
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")


def range_pairs(columns: list[str]) -> list[tuple[str, str]]:
    """(start, end) column pairs of a row: ``start_at``/``end_at``, ``startDate``/``endDate``, ``from``/``to``."""
    by_words = {tuple(w.lower() for w in words(c)): c for c in columns}
    pairs = []
    for key, column in by_words.items():
        for start, end in _START_END:
            for i, word in enumerate(key):
                if word == start:
                    other = by_words.get(key[:i] + (end,) + key[i + 1 :])
                    if other is not None:
                        pairs.append((column, other))
    return pairs


def reversed_range(start: Any, end: Any) -> bool:
    """Whether two ISO dates or times end before they start."""
    return isinstance(start, str) and isinstance(end, str) and bool(_ISO_DATE.match(start)) \
        and bool(_ISO_DATE.match(end)) and end < start


def ordered_ranges(row: dict[str, Any], pairs: list[tuple[str, str]]) -> None:
    """A seeded row's time ranges in order: an event never ends before it starts (the two are swapped)."""
    for start, end in pairs:
        if reversed_range(row.get(start), row.get(end)):
            row[start], row[end] = row[end], row[start]


_FLAG_WORDS = frozenset({"is", "has", "can", "should", "allow", "allows", "enable", "enabled", "disabled", "active",
                         "verified", "deleted", "archived", "visible", "public", "private", "locked", "default"})


def is_flag_name(name: str) -> bool:
    """``is_active``, ``hasAttachments``, ``enabled``: a name that says yes or no."""
    parts = words(name)
    return bool(parts) and (parts[0] in ("is", "has", "can", "should", "allow", "allows")
                            or (len(parts) == 1 and parts[0] in _FLAG_WORDS))


def implied_format(name: str) -> str | None:
    """The format a name implies: ``created_at``, ``dueDate``, ``timestamp`` are times; ``email`` an address."""
    parts = words(name)
    if not parts:
        return None
    if parts[-1] in ("at", "time", "timestamp", "datetime") or parts[-1] == "on" and len(parts) > 1 \
            and parts[-2].endswith("ed"):  # created_on, not add_on
        return "date-time"
    if parts[-1] in ("date", "day", "dob", "birthday", "birthdate"):
        return "date"
    if parts[-1] in ("email", "mail") and (len(parts) == 1 or parts[-2] != "send"):
        return "email"
    return None


def _pattern_format(pattern: Any) -> str | None:
    """The format a pattern spells: ``\\d{4}-\\d{2}-\\d{2}`` is a date; one holding ``@`` an email."""
    if not isinstance(pattern, str):
        return None
    if re.search(r"(\\d|\[0-9\])(\{4\}|(\\d|\[0-9\]){3})\)?-", pattern):
        return "date-time" if "T" in pattern or ":" in pattern else "date"
    if "@" in pattern:
        return "email"
    return None


def _fits_pattern(pattern: str, value: str) -> bool:
    try:
        return re.search(pattern, value) is not None
    except re.error:
        return False
