"""The harness's exceptions: what the CLI prints as one line, and what ends a run or an episode."""

from __future__ import annotations

from mcp_services.command_line import InputError

__all__ = [
    "AgentError",
    "AgentUnavailableError",
    "HarnessInputError",
    "RunFileError",
    "TaskServerError",
    "ToolTransportError",
]


class HarnessInputError(InputError):
    """Bad input from a person (options, files, agent spec): printed as one line, exit code 2."""


class RunFileError(HarnessInputError):
    """An output folder or trajectory file that cannot be used as is (corrupt lines, another config)."""


class AgentError(RuntimeError):
    """The model failed on this episode only (e.g. a request it rejects): the episode ends, the run goes on."""


class AgentUnavailableError(RuntimeError):
    """The model cannot be reached at all (endpoint down after the retries): the whole run stops.

    Stopping is right: every further episode would fail the same way, and a resumed run picks up
    exactly where this one stopped.
    """


class ToolTransportError(RuntimeError):
    """A task server could not be started or stopped answering (not a tool's own error result)."""


class TaskServerError(ToolTransportError):
    """A rollout's task server could not be started, or what answered was not the episode's own server.
    Never graded: the rollout is an error (the runner lets it through), and a resumed run collects it."""
