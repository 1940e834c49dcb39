"""The gate's typed report: per service, per tool, a status and the checks behind it.

``gate_report.json`` (``GateReport.to_json``) has exactly the shape other parts rely on:
``{"services": [{"name", "tools": [{"name", "status", "reason"}]}]}``; a service rejected as a
whole also carries its ``reason``. The richer in-memory form keeps every check for ``generator verify``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["implemented", "simulated", "rejected"]
STATUSES: tuple[Status, ...] = ("implemented", "simulated", "rejected")


@dataclass
class Check:
    name: str
    passed: bool
    detail: str = ""


@dataclass
class ToolVerdict:
    name: str
    status: Status
    reason: str = ""
    checks: list[Check] = field(default_factory=list)

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if not c.passed]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "reason": self.reason}


@dataclass
class ServiceVerdict:
    name: str
    tools: list[ToolVerdict] = field(default_factory=list)
    reason: str = ""  # set when the service as a whole is rejected
    source: str = ""
    seconds: float = 0.0

    def counts(self) -> Counter[str]:
        return Counter(t.status for t in self.tools)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name, "tools": [t.to_json() for t in self.tools]}
        if self.reason:
            data["reason"] = self.reason
        return data


@dataclass
class GateReport:
    services: list[ServiceVerdict] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"services": [s.to_json() for s in self.services]}

    def counts(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for service in self.services:
            total.update(service.counts())
        return total

    def rejection_reasons(self, top: int = 10) -> list[tuple[str, int]]:
        reasons: Counter[str] = Counter()
        for service in self.services:
            for tool in service.tools:
                if tool.status == "rejected":
                    reasons[_reason_kind(tool.reason or service.reason)] += 1
            if not service.tools and service.reason:
                reasons[_reason_kind(service.reason)] += 1
        return reasons.most_common(top)


def _reason_kind(reason: str) -> str:
    """A reason without its specifics (names, numbers), for counting."""
    import re

    text = re.sub(r"'[^']*'", "'…'", reason)
    text = re.sub(r"\d+", "N", text)
    return text[:90]
