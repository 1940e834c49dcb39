"""What every CompoWorld command line shares: one error format, ``--version``, ``--verbose`` and quiet logs.

An error is one line on stderr, ``<command>: error: <what> (<how to fix>)``, and exit status 2 for a
usage or input error (1 where a command says so, e.g. a model that cannot be reached). The commands
(``mcp-services``, ``composer``, ``harness``, ``generator``, ``training``) build their parser with
``command_parser`` and run through ``run_command``; library code raises ``InputError`` (or a subclass)
for a person's mistake. This is the lowest package, so every layer may use it.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Iterable
from typing import Any, NoReturn

from mcp_services.version import package_version

__all__ = [
    "EXIT_INPUT",
    "InputError",
    "Parser",
    "command_parser",
    "configure_logging",
    "error_line",
    "package_version",
    "run_command",
]

EXIT_INPUT = 2
EXIT_INTERRUPTED = 130

#: Modules of the optional extras: a missing one is an installation step, said as such.
EXTRA_OF_MODULE = {
    **dict.fromkeys(("torch", "transformers", "trl", "datasets", "peft", "accelerate", "gguf"), "train"),
    **dict.fromkeys(("litellm", "tenacity"), "llm"),
    "vllm": "vllm",
    "ray": "ray",
    "matplotlib": "report",
    "verifiers": "verifiers",
    "openenv": "openenv",
}

#: Third-party loggers that log every request at INFO: shown only with ``--verbose`` (the MCP client
#: sends its requests through httpx2, which logs as "httpx2").
CHATTY_LOGGERS = (
    "httpx", "httpcore", "httpx2", "httpcore2", "uvicorn", "uvicorn.access", "uvicorn.error", "mcp", "LiteLLM", "ray",
)


class InputError(ValueError):
    """A person's mistake (an option, a file, a name): what is wrong and, where it helps, how to fix it.

    ``str(error)`` is ``"<what> (<fix>)"``; a subclass keeps that form.
    """

    def __init__(self, what: str, fix: str | None = None) -> None:
        super().__init__(what if not fix else f"{what} ({fix})")
        self.what = what
        self.fix = fix


def error_line(prog: str, message: str) -> str:
    """``<prog>: error: <message>`` on one line (a message with line breaks is joined)."""
    return f"{prog}: error: {' '.join(message.split())}"


class Parser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line (no usage dump) that says where help is, and exit 2.

    ``command`` starts the error line; by default the first word of ``prog`` (a subcommand's prog is
    "harness collect", and its errors start "harness: error:").
    """

    def __init__(self, *args: Any, command: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.command = command or self.prog.split()[0]

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_INPUT, error_line(self.command, f"{message} (see `{self.prog} --help`)") + "\n")


def command_parser(prog: str, description: str, *, verbose: bool = True) -> Parser:
    """The top-level parser of a command, with ``--version`` (and ``--verbose``: third-party INFO logs)."""
    parser = Parser(prog=prog, description=description)
    parser.add_argument("--version", action="version", version=f"{prog} {package_version()}")
    if verbose:
        parser.add_argument(
            "--verbose", action="store_true", help="also show the INFO logs of the libraries underneath (httpx, mcp...)"
        )
    return parser


def configure_logging(verbose: bool = False) -> None:
    """Warnings and errors on stderr; the libraries' per-request INFO lines only when ``verbose``."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )
    for name in CHATTY_LOGGERS:
        logging.getLogger(name).setLevel(logging.INFO if verbose else logging.WARNING)


def _missing_extra(error: ModuleNotFoundError) -> str | None:
    extra = EXTRA_OF_MODULE.get((error.name or "").split(".")[0])
    if extra is None:
        return None
    return f"{error.name} is not installed (pip install 'compoworld[{extra}]')"


def run_command(
    prog: str,
    command: Callable[[], int],
    *,
    unavailable: Iterable[type[BaseException]] = (),
    interrupted: str = "interrupted",
) -> int:
    """Run ``command`` and turn what a person can act on into one error line and an exit code.

    ``InputError`` exits 2; a missing optional extra exits 2 with its install line; an exception of
    ``unavailable`` (a model or server that cannot be reached) exits 1; Ctrl-C exits 130 after
    ``interrupted``. Anything else is a bug and keeps its traceback.
    """
    down = tuple(unavailable)  # an empty tuple catches nothing
    try:
        return int(command())
    except down as error:
        print(error_line(prog, str(error)), file=sys.stderr)
        return 1
    except InputError as error:
        print(error_line(prog, str(error)), file=sys.stderr)
        return EXIT_INPUT
    except ModuleNotFoundError as error:
        message = _missing_extra(error)
        if message is None:
            raise
        print(error_line(prog, message), file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt:
        print(f"{prog}: {interrupted}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (``... | head``): not an error of ours; keep Python from complaining at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
