"""Hosted models and OpenAI-compatible servers (vLLM, SGLang, ...) through litellm.

Every request has a timeout; transient failures (timeouts, rate limits, 5xx, a dropped connection)
are retried with exponential backoff (tenacity), each wait said once on stderr; when the retries run
out the run stops with one clear error (``AgentUnavailableError``). An endpoint that refuses the
connection before it has ever answered has nothing listening: the run stops at once, saying so.
A request the model rejects for this episode only (e.g. a context that got too long) ends that
episode (``AgentError``).
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import warnings
from typing import TYPE_CHECKING, Any

from harness.agents.base import AgentTurn, Message, TaskBook, ToolCallRequest, ToolSchema, TurnContext
from harness.errors import AgentError, AgentUnavailableError, HarnessInputError
from harness.parsing import valid_text

if TYPE_CHECKING:
    from harness.agents import AgentConfig

__all__ = ["LiteLLMAgent", "import_litellm"]

log = logging.getLogger(__name__)

_SENT_KEYS = ("role", "content", "tool_calls", "tool_call_id")  # what an OpenAI-style API accepts


def import_litellm() -> Any:
    """litellm, configured to stay offline (no cost-map download) and quiet."""
    # Must be set before the first import, or litellm fetches its cost map from the network.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    # pydantic warns about litellm's own types when litellm loads its provider modules (at first use).
    warnings.filterwarnings("ignore", message=".*ReadOnly.*qualifier", category=UserWarning)
    import litellm

    litellm.suppress_debug_info = True
    return litellm


def _key_from_env(config: AgentConfig) -> str | None:
    """The key in ``--api-key-env``'s variable (None when no variable is named; an error when it is unset)."""
    if not config.api_key_env:
        return None
    key = os.environ.get(config.api_key_env)
    if not key:
        raise HarnessInputError(
            f"environment variable {config.api_key_env} (from --api-key-env) is not set",
            f"export {config.api_key_env}=... first",
        )
    return key


class LiteLLMAgent:
    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        temperature: float = 0.7,
        max_tokens: int = 2048,
        timeout: float = 120.0,
        retries: int = 4,
        retry_wait: float = 1.0,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        self.model = model
        self.name = f"litellm:{model}"
        self.api_base = api_base
        # An OpenAI-compatible local server needs some key; "EMPTY" is vLLM's convention.
        self.api_key = api_key if api_key is not None else ("EMPTY" if api_base else None)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.retries = retries
        self.retry_wait = retry_wait
        self.extra_body = extra_body
        self._litellm = import_litellm()
        self._answered = False  # the endpoint has answered once: a refused connection may be a restart
        self._said: set[int] = set()  # retry waits already said (concurrent episodes wait alike)

    @staticmethod
    def check(target: str, config: AgentConfig) -> None:
        """The key is there: in ``--api-key-env``'s variable, or in the one litellm reads for the provider."""
        if _key_from_env(config) is not None or config.api_base:
            return  # a key named explicitly; or a local OpenAI-compatible server (vLLM, SGLang), which takes any
        with contextlib.redirect_stdout(io.StringIO()):  # litellm prints its provider list for unknown models
            missing = import_litellm().validate_environment(target).get("missing_keys") or []
        if missing:
            raise HarnessInputError(
                f"agent litellm:{target} needs {', '.join(missing)}, which is not set",
                f"export {missing[0]}=..., or name the variable that holds the key with --api-key-env; "
                "for a local server give --api-base",
            )

    @classmethod
    def from_config(cls, target: str, config: AgentConfig, tasks: TaskBook) -> LiteLLMAgent:
        api_key = _key_from_env(config)
        return cls(
            target,
            api_base=config.api_base,
            api_key=api_key,
            temperature=config.temperature,
            max_tokens=config.max_tokens,
            timeout=config.request_timeout,
            retries=config.retries,
            retry_wait=config.retry_wait,
            extra_body=config.extra_body or None,
        )

    def _transient(self) -> tuple[type[BaseException], ...]:
        e = self._litellm.exceptions
        return (
            e.APIConnectionError,
            e.Timeout,
            e.RateLimitError,
            e.ServiceUnavailableError,
            e.InternalServerError,
            e.BadGatewayError,
        )

    def _fatal(self) -> tuple[type[BaseException], ...]:
        e = self._litellm.exceptions
        return (e.AuthenticationError, e.PermissionDeniedError, e.NotFoundError)

    def _request(self, messages: list[Message], tools: list[ToolSchema], seed: int) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.model,
            "messages": [{k: m[k] for k in _SENT_KEYS if k in m} for m in messages],
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "timeout": self.timeout,
            "seed": seed,
            "num_retries": 0,  # retries are ours (tenacity), with backoff and a clear final error
            "max_retries": 0,
            "drop_params": True,  # e.g. providers without `seed`
        }
        if tools:
            request["tools"] = tools
        if self.api_base:
            request["api_base"] = self.api_base
        if self.api_key is not None:
            request["api_key"] = self.api_key
        if self.extra_body:
            request["extra_body"] = self.extra_body
        return request

    async def respond(self, messages: list[Message], tools: list[ToolSchema], context: TurnContext) -> AgentTurn:
        from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt, wait_exponential

        request = self._request(messages, tools, context.seed)
        transient = self._transient()
        attempts = self.retries + 1
        where = self.api_base or "its provider"

        def worth_retrying(exc: BaseException) -> bool:
            return isinstance(exc, transient) and not self._nothing_listens(exc)

        def say_wait(state: RetryCallState) -> None:
            if state.attempt_number in self._said or state.outcome is None or state.next_action is None:
                return
            self._said.add(state.attempt_number)
            exc = state.outcome.exception()
            log.warning("model %s at %s: attempt %d of %d failed (%s); trying again in %.0f s", self.model, where,
                        state.attempt_number, attempts, _reason(exc) if exc else "?", state.next_action.sleep)

        try:
            async for attempt in AsyncRetrying(
                stop=stop_after_attempt(attempts),
                wait=wait_exponential(multiplier=self.retry_wait, max=60),
                retry=retry_if_exception(worth_retrying),
                before_sleep=say_wait,
                reraise=True,
            ):
                with attempt:
                    response = await self._litellm.acompletion(**request)
        except transient as exc:
            if self._nothing_listens(exc):
                raise AgentUnavailableError(
                    f"nothing answers at {self.api_base} for model {self.model} ({_reason(exc)}): start the model "
                    "server there and wait until it says it is ready, or fix --api-base"
                ) from None
            raise AgentUnavailableError(
                f"model {self.model} at {where} did not answer after {attempts} attempt(s): {_reason(exc)}"
            ) from None
        except self._fatal() as exc:
            raise AgentUnavailableError(f"model {self.model} refused the request: {_first_line(exc)}") from None
        except self._litellm.exceptions.BadRequestError as exc:
            raise AgentError(f"model {self.model} rejected the request: {_first_line(exc)}") from None
        self._answered = True
        return _turn(response)

    def _nothing_listens(self, exc: BaseException) -> bool:
        """A local endpoint (``--api-base``) that refused the connection and has never answered."""
        return self.api_base is not None and not self._answered and _refusal(exc) is not None

    async def aclose(self) -> None:
        return None


def _refusal(exc: BaseException) -> ConnectionRefusedError | None:
    """The refused connection under a litellm error (litellm files it under several classes)."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, ConnectionRefusedError):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None


def _reason(exc: BaseException) -> str:
    """Why a request failed, in a few words (a refused connection as the OS says it, not litellm's wrapping)."""
    refused = _refusal(exc)
    if refused is not None:
        return f"connection refused: {refused.strerror or refused}"
    return f"{type(exc).__name__}: {_first_line(exc)}"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:500] if text else type(exc).__name__


def _turn(response: Any) -> AgentTurn:
    """The turn a response holds. Whatever the provider sent, this returns a turn or raises
    ``AgentError`` (this episode ends): a malformed response never stops the run."""
    try:
        message = response.choices[0].message
        content, reasoning = message.content, getattr(message, "reasoning_content", None)
        raw_calls = list(message.tool_calls or ())
    except (AttributeError, IndexError, KeyError, TypeError):
        raise AgentError("the model returned a response without a message (no choices)") from None
    return AgentTurn(
        content=_text(content),
        tool_calls=tuple(_call(call) for call in raw_calls),
        reasoning=_text(reasoning) or None,
    )


def _text(value: Any) -> str:
    """Model text that can be written as UTF-8 (a JSON response may carry lone surrogate escapes)."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    return text if valid_text(text) else text.encode("utf-8", "replace").decode("utf-8")


def _call(call: Any) -> ToolCallRequest:
    function = getattr(call, "function", None)
    name = _text(getattr(function, "name", None))
    arguments = getattr(function, "arguments", None)
    if arguments is None:
        return ToolCallRequest(name=name)
    if isinstance(arguments, str):
        return ToolCallRequest(name=name, arguments=_text(arguments))
    try:  # some providers hand back an already-decoded object
        return ToolCallRequest(name=name, arguments=_text(json.dumps(arguments, ensure_ascii=False)))
    except (TypeError, ValueError, RecursionError):
        return ToolCallRequest(
            name=name, arguments="", error="Your tool call's arguments could not be read: pass one JSON object."
        )
