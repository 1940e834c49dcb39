"""The HTTP serving options that ``mcp-services serve`` and ``harness serve`` share, and their parsing.

    --host H --port P [--allow-remote NAME] [--auth-token-env NAME | --auth-issuer URL [--auth-jwks-url URL]]
    [--no-auth] [--public-url URL] [--max-sessions-per-client N] [--calls-per-second N] [--max-result-bytes N]

A token is never a flag value: ``--auth-token`` (and ``--token``) exist only to refuse it, saying to
put it in an environment variable and pass that variable's name.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from mcp_services.serving.auth import AuthConfig, token_from_env
from mcp_services.serving.http import DEFAULT_HOST, DEFAULT_PORT, HttpServing
from mcp_services.serving.limits import Limits

__all__ = ["add_http_options", "http_serving"]

_DEFAULTS = Limits()


class _RefuseToken(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        parser.error(
            f"{option_string} is refused: a token on the command line is visible to every user of this machine "
            "(ps) and lands in shell history; put it in an environment variable and pass its name: "
            "--auth-token-env NAME"
        )


def add_http_options(parser: argparse.ArgumentParser, *, prefix: str = "") -> None:
    """Add the options to ``parser`` (``prefix`` starts each help text, e.g. "http: ")."""
    group = parser.add_argument_group("HTTP serving (--transport http)")
    group.add_argument("--host", default=DEFAULT_HOST,
                       help=f"{prefix}address to listen on (default {DEFAULT_HOST}: this machine only)")
    group.add_argument("--port", type=int, default=DEFAULT_PORT,
                       help=f"{prefix}port (default {DEFAULT_PORT}; 0 picks a free one and prints it)")
    group.add_argument(
        "--allow-remote", action="append", default=[], metavar="NAME",
        help=f"{prefix}allow a non-loopback --host (e.g. 0.0.0.0); NAME is a host name or address clients use to "
        "reach this server (repeat, or separate with commas); requests naming other hosts are refused",
    )
    group.add_argument("--auth-token-env", metavar="NAME", default=None,
                       help=f"{prefix}require this bearer token: NAME is the environment variable that holds it")
    group.add_argument("--auth-issuer", metavar="URL", default=None,
                       help=f"{prefix}require JWTs signed by this identity provider (its JWKS), issued for --public-url")
    group.add_argument("--auth-jwks-url", metavar="URL", default=None,
                       help=f"{prefix}the issuer's key set (default: from its discovery document)")
    group.add_argument("--public-url", metavar="URL", default=None,
                       help=f"{prefix}the URL clients use, e.g. https://box.lan/mcp behind a TLS proxy (default: "
                       "http://HOST:PORT/mcp)")
    group.add_argument("--no-auth", action="store_true",
                       help=f"{prefix}serve beyond loopback with no authentication (says what it exposes)")
    group.add_argument("--max-sessions-per-client", type=int, metavar="N", default=_DEFAULTS.sessions_per_client,
                       help=f"{prefix}open sessions one client may hold (default {_DEFAULTS.sessions_per_client}; 0: "
                       "no limit)")
    group.add_argument("--calls-per-second", type=float, metavar="N", default=_DEFAULTS.calls_per_second,
                       help=f"{prefix}requests per second from one client (default {_DEFAULTS.calls_per_second:g}; "
                       "0: no limit)")
    group.add_argument("--max-result-bytes", type=int, metavar="N", default=_DEFAULTS.max_result_bytes,
                       help=f"{prefix}largest tool result sent (default {_DEFAULTS.max_result_bytes:,}; 0: no limit)")
    for flag in ("--auth-token", "--token"):
        group.add_argument(flag, action=_RefuseToken, nargs="?", help=argparse.SUPPRESS)


def _limit(value: float | None) -> Any:
    return None if value is None or value == 0 else value


def http_serving(args: argparse.Namespace) -> HttpServing:
    """The options as an ``HttpServing`` (raises ``ValueError`` subclasses, one line each)."""
    auth = None
    if args.auth_token_env is not None or args.auth_issuer is not None or args.auth_jwks_url is not None:
        token = token_from_env(args.auth_token_env) if args.auth_token_env is not None else None
        auth = AuthConfig(token=token, issuer=args.auth_issuer, jwks_url=args.auth_jwks_url)
    limits = Limits(
        sessions_per_client=_limit(args.max_sessions_per_client),
        calls_per_second=_limit(args.calls_per_second),
        max_result_bytes=_limit(args.max_result_bytes),
    )
    return HttpServing(
        host=args.host,
        port=args.port,
        allow_remote=tuple(args.allow_remote),
        auth=auth,
        no_auth=args.no_auth,
        public_url=args.public_url,
        limits=limits,
    )


def http_flags_given(args: argparse.Namespace, names: Sequence[str] = ("allow_remote", "auth_token_env",
                                                                        "auth_issuer", "no_auth")) -> list[str]:
    """The HTTP-only options given (to refuse them with ``--transport stdio``)."""
    return [f"--{name.replace('_', '-')}" for name in names if getattr(args, name)]
