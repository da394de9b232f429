"""Our model-client interface over an Inspect model: the agents and answerers talk to Inspect unchanged.

CubeBench's ReAct and CodeAct agents and the question answerers call a
:class:`~cubebench.agents.llm.ModelClient` synchronously (``complete(messages) -> ModelReply``).
:class:`InspectModelClient` is that client with one *attempt* being one call of the eval's Inspect
model (``Model.generate``), so every prompt, parser, budget and record of ours is reused as it is
while Inspect does the provider work: keys, retries, rate limits, caching, its transcript and log.

The episode loop is synchronous, Inspect is asynchronous: the loop runs in a worker thread started
with :func:`in_worker_thread` and each call hops back onto Inspect's event loop
(``anyio.from_thread.run``), so the model call lands in the sample's transcript like any other.
Inspect retries failed calls itself; a call that still fails is a :class:`~cubebench.agents.llm.ModelError`
here (not retried again), which the agents record as the step's error.  It is also kept in the sample's
:class:`FailedCall`: the sample's later calls are not made (each fails at once), and the solver ends the
sample as an error in Inspect's terms (:mod:`.task_errors`), as Inspect's own ``generate`` would.
"""

from __future__ import annotations

import base64
from contextvars import copy_context
from typing import Any, Callable, Sequence, TypeVar

import anyio.from_thread
import anyio.to_thread
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    Content,
    ContentImage,
    ContentText,
    GenerateConfig,
    Model,
    ModelOutput,
)

from cubebench.agents.llm import Budget, ModelClient, ModelError, RetryPolicy, price_for
from cubebench.agents.llm.client import CallResult
from cubebench.agents.llm.messages import Message, safe_text

__all__ = ["InspectModelClient", "FailedCall", "describe_failure", "to_inspect_messages", "output_usage", "in_worker_thread"]

T = TypeVar("T")


def to_inspect_messages(messages: Sequence[Message]) -> list[ChatMessage]:
    """Our provider-neutral messages as Inspect chat messages; PNG image parts become
    :class:`~inspect_ai.model.ContentImage` data URLs (what Inspect hands multimodal models)."""
    out: list[ChatMessage] = []
    for msg in messages:
        content = msg["content"]
        parts: str | list[Content]
        if isinstance(content, str):
            parts = safe_text(content)
        else:
            parts = [ContentText(text=safe_text(p["text"])) if p["type"] == "text" else
                     ContentImage(image="data:image/png;base64," + base64.b64encode(bytes(p["png"])).decode("ascii"))
                     for p in content]
        role = msg["role"]
        if role == "system":
            out.append(ChatMessageSystem(content=parts))
        elif role == "assistant":
            out.append(ChatMessageAssistant(content=parts))
        else:
            out.append(ChatMessageUser(content=parts))
    return out


def output_usage(output: ModelOutput) -> tuple[int, int]:
    """(input, output) tokens an Inspect model output reports (0 where the provider reports none)."""
    usage = output.usage
    if usage is None:
        return 0, 0
    cached = (usage.input_tokens_cache_read or 0) + (usage.input_tokens_cache_write or 0)
    return usage.input_tokens + cached, usage.output_tokens


async def in_worker_thread(fn: Callable[..., T], *args: Any) -> T:
    """Run the synchronous ``fn(*args)`` in a worker thread from which :class:`InspectModelClient`
    (and the tool agent) can call the eval's model; the sample's context (its transcript, limits and
    active model) goes with it."""
    context = copy_context()
    return await anyio.to_thread.run_sync(lambda: context.run(fn, *args))


def describe_failure(err: BaseException) -> str:
    """``Type: message`` of a failed call, through Inspect's retry wrapper (tenacity's ``RetryError``) to the
    last attempt's exception, with that exception's own cause (``APIConnectionError: Connection error.
    (ConnectError: All connection attempts failed)``)."""
    last = getattr(err, "last_attempt", None)
    inner = last.exception() if last is not None and hasattr(last, "exception") else None
    if isinstance(inner, BaseException):
        err = inner
    text = f"{type(err).__name__}: {safe_text(str(err))}"
    cause = err.__cause__
    if cause is not None and str(cause) and str(cause) not in text:
        text += f" ({type(cause).__name__}: {safe_text(str(cause))})"
    return text


class FailedCall:
    """The first call of one sample's Inspect model that failed after Inspect's own retries, if any.

    Shared by the sample's agents and clients: once a call has failed, :meth:`check` fails every later
    call at once, so a dead endpoint costs one call's retries, not one per step."""

    def __init__(self) -> None:
        self.error: BaseException | None = None

    def check(self) -> None:
        """Raise :class:`~cubebench.agents.llm.ModelError` if an earlier call of the sample failed."""
        if self.error is not None:
            raise ModelError(f"not called: an earlier call failed after Inspect's retries "
                             f"({describe_failure(self.error)})", kind="error")

    def keep(self, err: BaseException) -> None:
        """Remember ``err`` when it is the sample's first failed call."""
        if self.error is None:
            self.error = err

    async def generate(self, model: Model, *args: Any, **kwargs: Any) -> ModelOutput:
        """``model.generate(*args, **kwargs)``, refused after a failure and remembering its own."""
        self.check()
        try:
            return await model.generate(*args, **kwargs)
        except Exception as err:
            self.keep(err)
            raise


class InspectModelClient(ModelClient):
    """A :class:`~cubebench.agents.llm.ModelClient` whose one attempt is one Inspect ``generate`` call.

    Use it only from a thread started by :func:`in_worker_thread` inside an Inspect solver.
    ``stop``, ``max_tokens``, ``temperature``, ``seed`` and ``extra`` (sent as the request body's
    extra fields, e.g. a llama.cpp grammar) become the call's :class:`~inspect_ai.model.GenerateConfig`;
    settings the eval itself was given (``--temperature`` ...) apply beneath them.
    """

    provider = "inspect"

    def __init__(self, model: Model, *, max_tokens: int = 1024, budget: Budget | None = None,
                 failed: FailedCall | None = None) -> None:
        super().__init__(str(model), max_tokens=max_tokens, budget=budget, price=price_for(model.name),
                         retry=RetryPolicy(max_attempts=1))
        self.inspect_model = model
        self.failed = failed if failed is not None else FailedCall()
        self._sent: list[tuple[Message, Any, ChatMessage]] = []

    def build_request(self, messages: Sequence[Message], *, stop: list[str] | None, max_tokens: int,
                       temperature: float | None, seed: int | None, extra: dict[str, Any]) -> dict[str, Any]:
        config = GenerateConfig(stop_seqs=stop, max_tokens=max_tokens, temperature=temperature, seed=seed,
                                extra_body=extra or None)
        return {"messages": list(messages), "config": config}

    def loggable(self, request: dict[str, Any]) -> dict[str, Any]:
        """The model, the call's settings and how many messages it sent: the messages themselves are in the
        call's Inspect model event, in the same log (keeping them in every step's record too would store the
        conversation once per step, quadratic in the episode's length)."""
        return {"model": self.model, "n_messages": len(request["messages"]),
                "config": request["config"].model_dump(exclude_none=True)}

    def endpoint(self) -> str:
        return f"inspect:{self.model}"

    def attempt(self, request: dict[str, Any]) -> CallResult:
        try:
            output: ModelOutput = anyio.from_thread.run(self._generate, self.inspect_messages(request["messages"]),
                                                        request["config"])
        except ModelError:  # an earlier call of the sample failed: this one was not made
            raise
        except RuntimeError as err:
            if "worker thread" in str(err):  # anyio: not called from in_worker_thread
                raise RuntimeError("InspectModelClient must be called from a thread started by "
                                   "in_worker_thread() inside an Inspect solver") from err
            raise ModelError(f"{self.model}: {describe_failure(err)}", kind="error") from err
        except Exception as err:  # noqa: BLE001 - Inspect already retried; any failure is the call's
            raise ModelError(f"{self.model}: {describe_failure(err)}", kind="error") from err
        if output.error:
            raise ModelError(f"{self.model}: {output.error}", kind="error")
        n_in, n_out = output_usage(output)
        finish = output.stop_reason
        return CallResult(text=output.completion, finish_reason="length" if finish == "max_tokens" else str(finish),
                       input_tokens=n_in, output_tokens=n_out, status=200,
                       body={"model": output.model, "completion": output.completion, "stop_reason": finish})

    def inspect_messages(self, messages: Sequence[Message]) -> list[ChatMessage]:
        """``messages`` as Inspect messages, the conversation's earlier ones as the same objects as last call.

        A chat agent's history grows by appending: reusing the Inspect message of every unchanged one (the same
        dict with the same content) keeps its id, so Inspect's transcript recognises it instead of serialising
        and hashing the whole history again at every call (quadratic in the episode's length)."""
        kept = 0
        for sent, msg in zip(self._sent, messages):
            if sent[0] is not msg or sent[1] is not msg["content"]:
                break
            kept += 1
        fresh = list(messages[kept:])
        self._sent = self._sent[:kept] + [(m, m["content"], c) for m, c in zip(fresh, to_inspect_messages(fresh))]
        return [c for _, _, c in self._sent]

    async def _generate(self, messages: list[ChatMessage], config: GenerateConfig) -> ModelOutput:
        return await self.failed.generate(self.inspect_model, messages, config=config)

    def close(self) -> None:
        """Nothing to release: the model belongs to the eval."""
