"""The services this process can serve: the hand-written library, then the services of providers.

A service provider (the generator's catalog of generated services is one) registers itself through
the ``compoworld.services`` entry-point group in its distribution's metadata (``pyproject.toml``:
``[project.entry-points."compoworld.services"]``), or in code with ``register_provider``. Providers
load on first use, never at import, and the kernel never imports one. A provider that fails to
load, or fails while listing or building its services, is a ``ServiceProviderError`` that names
it: never a catalog that is silently smaller than what was installed.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from difflib import get_close_matches
from functools import cache
from importlib.metadata import entry_points
from typing import Protocol, TypeVar, runtime_checkable

from mcp_services.kernel.service import Service

__all__ = [
    "ENTRY_POINT_GROUP",
    "LIBRARY",
    "ServiceProvider",
    "ServiceProviderError",
    "UnknownServiceError",
    "all_services",
    "catalog_names",
    "get_service",
    "get_services",
    "providers",
    "register_provider",
    "service_names",
    "unregister_provider",
]

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
    "hr",
    "recruiting",
    "expenses",
    "marketing",
    "meetings",
    "tasks",
    "voice",
    "commerce",
    "shipping",
    "esign",
    "sheets",
    "docs",
    "kb",
    "forms",
)

ENTRY_POINT_GROUP = "compoworld.services"


@runtime_checkable
class ServiceProvider(Protocol):
    """A source of services beyond the library, by name."""

    def names(self) -> Iterable[str]:
        """Every service it can build."""
        ...

    def service(self, name: str) -> Service | None:
        """The service ``name`` (built once and kept), or None when it is not one of this provider's."""
        ...


class ServiceProviderError(RuntimeError):
    """A registered service provider that cannot be loaded or used; the message names it."""


class UnknownServiceError(ValueError):
    """A service name that neither the library nor any provider serves."""

    def __init__(self, name: str) -> None:
        close = get_close_matches(name, service_names(), n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        super().__init__(
            f"unknown service {name!r}.{hint} Known services: {', '.join(service_names())} "
            "(`mcp-services list` shows them with their tools)."
        )
        self.name = name


_registered: dict[str, ServiceProvider] = {}  # providers registered in code, by name


def register_provider(name: str, provider: ServiceProvider) -> None:
    """Serve ``provider``'s services from now on (after the library and the entry-point providers)."""
    if not isinstance(provider, ServiceProvider):
        raise TypeError(f"service provider {name!r} must have names() and service(name), not {provider!r}")
    if name in _registered or name in _entry_point_providers():
        raise ValueError(f"a service provider named {name!r} is already registered")
    _registered[name] = provider


def unregister_provider(name: str) -> None:
    """Stop serving the services of the provider registered in code as ``name``."""
    if _registered.pop(name, None) is None:
        raise KeyError(f"no service provider named {name!r} was registered with register_provider")


@cache
def _entry_point_providers() -> dict[str, ServiceProvider]:
    found: dict[str, ServiceProvider] = {}
    for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda p: p.name):
        try:
            provider = point.load()
        except Exception as exc:
            raise ServiceProviderError(
                f"service provider {point.name!r} ({point.value}, entry point group {ENTRY_POINT_GROUP}) "
                f"failed to load: {type(exc).__name__}: {exc}"
            ) from exc
        if not isinstance(provider, ServiceProvider):
            raise ServiceProviderError(
                f"service provider {point.name!r} ({point.value}) is not a provider: it needs names() and "
                f"service(name), got {type(provider).__name__}"
            )
        found[point.name] = provider
    return found


def providers() -> dict[str, ServiceProvider]:
    """Every service provider by name: the entry points' (loaded on the first call), then those registered in code."""
    return {**_entry_point_providers(), **_registered}


_T = TypeVar("_T")


def _ask(name: str, question: str, call: Callable[[], _T]) -> _T:
    try:
        return call()
    except Exception as exc:
        raise ServiceProviderError(
            f"service provider {name!r} failed {question}: {type(exc).__name__}: {exc}"
        ) from exc


def service_names() -> list[str]:
    """The hand-written library."""
    return list(LIBRARY)


def catalog_names() -> list[str]:
    """The hand-written library, then every provider's services (a name already taken keeps its first owner)."""
    names = list(LIBRARY)
    known = set(names)
    for provider_name, provider in providers().items():
        for name in _ask(provider_name, "to list its services", lambda: list(provider.names())):
            if name not in known:
                known.add(name)
                names.append(name)
    return names


def get_service(name: str) -> Service:
    if name in LIBRARY:
        module = importlib.import_module(f"mcp_services.library.{name}")
        service: Service = module.service
        return service
    for provider_name, provider in providers().items():
        found = _ask(provider_name, f"to build service {name!r}", lambda: provider.service(name))
        if found is not None:
            return found
    raise UnknownServiceError(name)


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
