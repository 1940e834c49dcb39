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
import os
from collections.abc import Callable, Iterable
from difflib import get_close_matches
from functools import cache
from importlib.metadata import entry_points
from typing import Protocol, TypeVar, runtime_checkable

from mcp_services.command_line import InputError
from mcp_services.kernel.service import Service

__all__ = [
    "ENTRY_POINT_GROUP",
    "PROVIDER_ENVIRONMENT",
    "LIBRARY",
    "ServiceProvider",
    "ServiceProviderError",
    "UnknownServiceError",
    "all_services",
    "catalog_names",
    "closest_names",
    "get_service",
    "get_services",
    "provider_environment",
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
#: Environment variables that tell providers where their services are (the generator's catalog
#: folders, separated by ``os.pathsep``): a server started elsewhere needs them to find the same services.
PROVIDER_ENVIRONMENT = ("COMPOWORLD_CATALOG",)


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


class UnknownServiceError(InputError):
    """A service name that neither the library nor any provider serves; suggests the closest names of all."""

    def __init__(self, name: str) -> None:
        try:
            known = catalog_names()
        except ServiceProviderError:  # a broken provider is reported on its own; suggest from the library
            known = list(LIBRARY)
        close = closest_names(name, known)
        guess = f"; did you mean {' or '.join(close)}?" if close else ""
        super().__init__(
            f"unknown service {name!r}{guess}",
            f"`mcp-services list` shows the {len(LIBRARY)} hand-written services, `generator catalog --list` the "
            f"{len(known) - len(LIBRARY)} generated ones; a service imported with `generator import --out DIR` "
            "is found when COMPOWORLD_CATALOG names DIR",
        )
        self.name = name
        self.suggestions = close


def closest_names(name: str, names: Iterable[str]) -> list[str]:
    """The (at most three) names of ``names`` closest to ``name``, best first: a "did you mean" list."""
    return get_close_matches(name.lower(), list(names), n=3, cutoff=0.65)


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


def provider_environment() -> dict[str, str]:
    """The ``PROVIDER_ENVIRONMENT`` variables set here, paths made absolute: for a server's ``env``
    (a Claude Desktop entry starts in an unknown folder, without this shell's variables)."""
    found = {}
    for name in PROVIDER_ENVIRONMENT:
        value = os.environ.get(name, "")
        paths = [os.path.abspath(os.path.expanduser(p)) for p in value.split(os.pathsep) if p.strip()]
        if paths:
            found[name] = os.pathsep.join(paths)
    return found


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
            raise InputError(f"service {name!r} is named twice", "name each service once")
        seen.add(name)
        services.append(get_service(name))
    return services


def all_services() -> list[Service]:
    return [get_service(name) for name in LIBRARY]
