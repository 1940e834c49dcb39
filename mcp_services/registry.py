"""The library of services: names to ``Service`` objects, imported on first use."""

from __future__ import annotations

import importlib
from difflib import get_close_matches

from mcp_services.kernel.service import Service

#: The hand-written library, one module per service under ``mcp_services.library``.
LIBRARY: tuple[str, ...] = (
    "crm",
    "mailbox",
    "calendar",
    "chat",
    "helpdesk",
    "payments",
    "accounting",
    "projects",
    "files",
    "sms",
)


class UnknownServiceError(ValueError):
    """A service name that is not in the library."""

    def __init__(self, name: str) -> None:
        close = get_close_matches(name, service_names(), n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        super().__init__(
            f"unknown service {name!r}.{hint} Known services: {', '.join(service_names())} "
            "(`mcp-services list` shows them with their tools)."
        )
        self.name = name


def service_names() -> list[str]:
    return list(LIBRARY)


def get_service(name: str) -> Service:
    if name not in LIBRARY:
        raise UnknownServiceError(name)
    module = importlib.import_module(f"mcp_services.library.{name}")
    service: Service = module.service
    return service


def get_services(names: list[str] | tuple[str, ...]) -> list[Service]:
    """Several services by name, in order, rejecting unknown names and duplicates."""
    seen: set[str] = set()
    services = []
    for name in names:
        if name in seen:
            raise ValueError(f"service {name!r} is named twice")
        seen.add(name)
        services.append(get_service(name))
    return services


def all_services() -> list[Service]:
    return [get_service(name) for name in LIBRARY]
