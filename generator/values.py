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

from generator.naming import words
from generator.regexgen import string_matching

_ADJECTIVES = ("Quarterly", "Northwind", "Summer", "Priority", "Regional", "Annual", "Pilot", "Core", "Premium",
               "Weekly", "Spring", "Launch", "Internal", "Partner", "Customer", "Q3", "Global", "Team", "Legacy")
_NOUNS = ("Planning", "Review", "Onboarding", "Roadmap", "Campaign", "Budget", "Migration", "Rollout", "Audit",
          "Renewal", "Kickoff", "Report", "Sync", "Update", "Proposal", "Checklist", "Retrospective")
_SENTENCES = (
    "Please review the attached figures before Friday.",
    "Following up on our call earlier this week.",
    "Customer asked for an updated quote with volume pricing.",
    "Shipment delayed by two days because of weather.",
    "Renewal approved; send the contract for signature.",
    "Internal note: confirm the billing address first.",
    "Draft agenda for the quarterly planning session.",
    "Thanks for the quick turnaround on this request.",
)
_TAGS = ("urgent", "billing", "vip", "follow-up", "q3", "onboarding", "renewal", "internal", "bug", "feature")
_TEAMS = ("team", "alerts", "ops", "sales", "support", "launch", "updates", "partners")
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
            kind = "object" if "properties" in schema else "array" if "items" in schema else "string"
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
            count = max(low, min(high, 1 if depth > 1 else self.rng.randint(1, 2)))
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
            return self.object(schema, person, index, entity, depth, prefer_examples)
        if kind == "null":
            return None
        return self.string({}, name, semantic, person, index, entity)

    def object(self, schema: dict[str, Any], person: Person, index: int, entity: str, depth: int, prefer: bool) -> dict[str, Any]:
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        required = [r for r in schema.get("required", []) if r in props]
        chosen = required + [p for p in props if p not in required][: (3 if depth < 2 else 0)]
        out: dict[str, Any] = {}
        if depth > 4:
            chosen = required
        for key in chosen:
            out[key] = self.value(props[key], key, person=person, index=index, entity=entity, depth=depth + 1,
                                  prefer_examples=prefer)
        min_props = schema.get("minProperties")
        if not out and isinstance(min_props, int) and min_props > 0 and not props:
            out["key"] = "value"
        return out

    def string(self, schema: dict[str, Any], name: str, semantic: str | None, person: Person, index: int, entity: str) -> str:
        low = schema.get("minLength", 0) if isinstance(schema.get("minLength"), int) else 0
        high = schema.get("maxLength") if isinstance(schema.get("maxLength"), int) else None
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            made = string_matching(pattern, self.rng, min_length=low, max_length=high)
            if made is not None:
                return made
        text = self._semantic_string(semantic, name, person, index, entity)
        if text is None:
            text = self._format_string(schema.get("format"), name)
        if text is None:
            description = schema.get("description") if isinstance(schema.get("description"), str) else ""
            text = self._named_string(name, person, index, entity, description)
        if high is not None and len(text) > high:
            text = text[:high]
        if len(text) < low:
            text = text + "x" * (low - len(text))
        return text

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
            "file_name": f"{_slug(self.rng.choice(_NOUNS))}-{index + 1}.pdf",
            "file_ref": f"/files/{_slug(self.rng.choice(_NOUNS))}-{index + 1}.pdf",
            "text": self.rng.choice(_SENTENCES),
            "subject": f"{self.rng.choice(_ADJECTIVES)} {self.rng.choice(_NOUNS).lower()}",
            "tag": self.rng.choice(_TAGS),
            "channel_name": f"{self.rng.choice(_TAGS)}-{self.rng.choice(_TEAMS)}",
        }
        if semantic == "datetime":
            return self.moment(days=self.rng.randint(-90, 30))
        if semantic == "date":
            return self.moment(days=self.rng.randint(-90, 30))[:10]
        return table.get(semantic)

    def moment(self, days: float = 0) -> str:
        return (self._now + timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")

    def _format_string(self, fmt: Any, name: str) -> str | None:
        if not isinstance(fmt, str):
            return None
        if fmt == "date-time":
            return self.moment(days=self.rng.randint(-60, 30))
        if fmt == "date":
            return self.moment(days=self.rng.randint(-60, 30))[:10]
        if fmt in ("email", "idn-email"):
            return self.person().email
        if fmt in ("uri", "url", "iri"):
            return f"https://www.example.com/{_slug(name or 'resource')}/{self.rng.randint(1, 999)}"
        if fmt == "uuid":
            return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        return _FORMAT_EXAMPLES.get(fmt)

    def _named_string(self, name: str, person: Person, index: int, entity: str, description: str = "") -> str:
        parts = words(name)
        last = parts[-1] if parts else ""
        joined = "_".join(parts)
        org = self.organisation_of(person)
        if joined in ("first_name", "given_name", "firstname", "forename"):
            return person.first_name
        if joined in ("last_name", "family_name", "surname", "lastname"):
            return person.last_name
        if last in ("name", "title", "label", "headline", "summary", "display"):
            if entity and set(words(entity)) & {"user", "person", "contact", "customer", "member", "employee"}:
                return person.name
            return f"{self.rng.choice(_ADJECTIVES)} {self.rng.choice(_NOUNS)} {index + 1}"
        if last in ("description", "body", "text", "message", "content", "note", "notes", "comment", "bio", "reason"):
            return self.rng.choice(_SENTENCES)
        if last in ("color", "colour"):
            return self.rng.choice(_COLORS)
        if last in ("language", "lang", "locale"):
            return "en"
        if last in ("timezone", "tz") or joined == "time_zone":
            return "America/New_York"
        if last in ("country",):
            return "US"
        if last in ("zip", "postcode", "zipcode") or joined == "postal_code":
            return f"{self.rng.randint(10000, 99999)}"
        if last in ("ip",) or joined == "ip_address":
            return f"203.0.113.{self.rng.randint(1, 254)}"
        if last in ("status", "state"):
            return "active"
        if last in ("type", "kind", "category", "role", "level", "priority", "source", "channel"):
            return self.rng.choice(("standard", "primary", "default", "basic"))
        if last in ("version",):
            return f"1.{self.rng.randint(0, 9)}"
        if last in ("code",):
            return f"{_slug(org.name)[:3].upper()}{self.rng.randint(100, 999)}"
        if last in ("slug", "handle", "key"):
            return f"{_slug(self.rng.choice(_ADJECTIVES))}-{_slug(self.rng.choice(_NOUNS))}"
        if last in ("password", "secret"):
            return "Correct-Horse-7"
        if last in ("id", "uid", "guid", "ref", "reference", "number", "sku"):
            return f"{(_slug(parts[0] if len(parts) > 1 else entity or last)[:3] or 'ref').upper()}{self.rng.randint(10000, 99999)}"
        if last in ("date",):
            return self.moment(days=self.rng.randint(-60, 30))[:10]
        if last in ("time", "at", "timestamp"):
            return self.moment(days=self.rng.randint(-60, 30))
        if last in ("owner", "user", "assignee", "author", "login", "member"):
            return person.username
        if last in ("org", "organization", "organisation", "company", "workspace", "team", "account"):
            return _slug(org.name)[:20]
        if last in ("repo", "repository", "project", "board", "folder", "bucket", "space"):
            return f"{_slug(self.rng.choice(_ADJECTIVES))}-{_slug(self.rng.choice(_NOUNS))}"
        return self._described(parts, description, person, index)

    def _described(self, parts: list[str], description: str, person: Person, index: int) -> str:
        """A value for a field known only by its name and description: what the description says it holds."""
        text = description.lower()
        said = set(re.findall(r"[a-z]+", text))
        if said & {"url", "link", "uri", "website", "webpage"}:
            return f"{self.organisation_of(person).website}/{_slug('-'.join(parts) or 'page')}"
        if said & {"email"}:
            return person.email
        if said & {"phone", "telephone", "mobile"}:
            return person.phone
        if said & {"currency"}:
            return self.world.currency
        if said & {"country"}:
            return self.organisation_of(person).country
        if said & {"timestamp", "datetime", "date", "time", "when"}:
            return self.moment(days=self.rng.randint(-60, 30))
        if said & {"language", "locale"}:
            return "en"
        if said & {"identifier", "id", "code", "reference", "number", "token", "key"}:
            return f"{(_slug(parts[0] if parts else 'ref')[:3] or 'ref').upper()}{self.rng.randint(10000, 99999)}"
        if said & {"description", "note", "comment", "message", "text", "explanation", "reason", "memo"}:
            return self.rng.choice(_SENTENCES)
        noun = " ".join(parts[-2:]) if parts else "value"
        return f"{self.rng.choice(_ADJECTIVES)} {noun}"


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
