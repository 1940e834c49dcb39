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


def catalog_names() -> list[str]:
    """The hand-written library, then every generated service of the catalog (see ``generator.catalog``)."""
    try:
        from generator.catalog import generated_names
    except ImportError:  # the generator is not installed: the hand-written library only
        return list(LIBRARY)
    return list(LIBRARY) + [name for name in generated_names() if name not in LIBRARY]


def _generated_service(name: str) -> Service | None:
    """A generated service by name, loaded on first use (None when the catalog has no such service)."""
    try:
        from generator.catalog import generated_service
    except ImportError:
        return None
    return generated_service(name)


def get_service(name: str) -> Service:
    if name not in LIBRARY:
        generated = _generated_service(name)
        if generated is None:
            raise UnknownServiceError(name)
        return generated
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
