"""The compact policy agent: one model call per move, each seeing the current state and nothing else.

The symbolic tier is fully observed and Markov, so choosing the next move needs no conversation: each
call sends a short fixed instruction and the current observation's text, and the reply is one move.
No history, no tools, no reasoning: a prompt of about 150 tokens with SmolLM2's chat template where a
ReAct turn carries a thousand or more, which is what makes a model cheap to train and play on a CPU (docs/training.md).

The same :func:`policy_messages` builds the prompts of the agent and of its training data
(``cubebench.training``), so a fine-tuned model is played exactly as it was taught.  A reply that is
not exactly one of the episode's actions (after trimming spaces, quotes and a final full stop) is a
wasted step, recorded as the step's ``parse_error``, as a malformed ReAct reply is; the runner's
budgets, records, report and failure attribution are the same as for every agent.
"""

from __future__ import annotations

from .base import Observation, Task, Turn
from .llm import BudgetExceeded, ModelClient, ModelError
from .llm.messages import Message, safe_text
from cubebench.engine.facelets import FACES, N_STICKERS
from cubebench.tiers import tier_spec
from .tools import ToolError, Toolbox

__all__ = ["PolicyAgent", "policy_messages", "parse_policy_reply", "POLICY_SYSTEM", "POLICY_MAX_TOKENS"]

POLICY_SYSTEM = "Solve the Rubik's cube. Reply with one move."
"""The fixed instruction (a system message: it also keeps a chat template from adding its own default)."""
POLICY_MAX_TOKENS = 8
"""Tokens a reply may take: a move is one to three."""
_LAYOUT = (f"Faces {' '.join(FACES)} (up right front down left back), stickers row by row, named by the face of "
           "their colour:")
_TRIM = " \t\r\n`\"*"
_PRIMES = str.maketrans({"\u2019": "'", "\u2032": "'", "\u00b4": "'"})


def _faces(facelets: str) -> str:
    """The 54 letters as six labelled lines of nine (one token a sticker, at a fixed place in every prompt)."""
    return "\n".join(f"{face}: {' '.join(facelets[9 * k:9 * k + 9])}" for k, face in enumerate(FACES))


def policy_messages(state_text: str, actions: tuple[str, ...] | list[str]) -> list[Message]:
    """The one prompt of the policy: the instruction, the current state and the legal moves.

    ``state_text`` is the tier's text form of the current observation: a 54-letter facelet string (the
    symbolic tier's) is laid out face by face; any other text (a face or net grid) is shown as it is."""
    if len(state_text) == N_STICKERS and set(state_text) <= set(FACES):
        state = f"{_LAYOUT}\n{_faces(state_text)}"
    else:
        state = state_text
    return [{"role": "system", "content": POLICY_SYSTEM},
            {"role": "user", "content": f"{state}\nMoves: {' '.join(actions)}"}]


def parse_policy_reply(reply: str, actions: tuple[str, ...] | list[str]) -> str:
    """The move a reply names: exactly one of ``actions`` once spaces, quotes, back-ticks and a final full
    stop are trimmed (typographic primes read as ``'``; a single quote is the prime, never trimmed); ``ValueError`` saying why otherwise."""
    text = reply.translate(_PRIMES).strip()
    core = text.strip(_TRIM).rstrip(".").strip(_TRIM)
    if core in actions:
        return core
    shown = text if len(text) <= 40 else text[:40] + "..."
    raise ValueError(f"the reply {shown!r} is not one move; reply with exactly one of: {' '.join(actions)}")


def state_text(observation: Observation) -> str:
    """The text the policy sees: the tier's text form of the current observation, without the feedback
    line that precedes it in ``observation.text``."""
    if isinstance(observation.raw, str):
        return observation.raw
    raise ValueError("the policy agent reads a text observation: play the tier's text form "
                     "(--obs-format text), or give the symbolic tier's 54-letter state")


class PolicyAgent:
    """A chat model as a memoryless policy: state in, one move out (see the module docstring)."""

    def __init__(self, client: ModelClient, *, name: str | None = None, max_tokens: int = POLICY_MAX_TOKENS) -> None:
        self.client = client
        self.name = name or f"policy:{getattr(client, 'model', 'model')}"
        self.max_tokens = max_tokens
        self.actions: tuple[str, ...] = ()
        self.transcript: list[tuple[str, str]] = []
        """``(state text, reply)`` of every answered call this episode (what a trainer scores the replies on)."""

    def reset(self, task: Task) -> None:
        """Learn the episode's legal actions (face turns, and view rotations on a partial tier)."""
        if task.obs_format != "text" and tier_spec(task.tier).pictured:
            raise ValueError(f"the policy agent reads text; the {task.tier} tier here shows {task.obs_format} "
                             "(play it with --obs-format text)")
        self.actions = tuple(task.action_names)
        self.transcript = []

    def act(self, observation: Observation, tools: Toolbox) -> Turn:
        """One model call on the current state alone, then the move it names (or a wasted step)."""
        try:
            state = state_text(observation)
        except ValueError as err:
            return Turn(error=str(err), stop=True)
        messages = policy_messages(state, self.actions)
        try:
            reply = self.client.complete(messages, max_tokens=self.max_tokens)
        except BudgetExceeded as err:
            return Turn(error=f"budget exceeded: {err}", model_log=list(getattr(err, "log", None) or []), stop=True)
        except ModelError as err:
            return Turn(error=f"model error: {safe_text(str(err))}", model_log=list(getattr(err, "log", None) or []))
        text = safe_text(reply.text) if isinstance(reply.text, str) else ""
        self.transcript.append((state, text))
        turn = Turn(reply=text, input_tokens=reply.input_tokens, output_tokens=reply.output_tokens,
                    cost_usd=reply.cost_usd, model_log=[reply.as_record()],
                    reply_cut=getattr(reply, "reply_cut", None))
        try:
            move = parse_policy_reply(text, self.actions)
        except ValueError as err:
            turn.parse_error = str(err)
            return turn
        tool = "rotate" if move[0] in "xyz" else "move"
        turn.action = f"{tool}({move!r})"
        try:
            tools.invoke(tool, [move])
        except ToolError:  # refused (a budget spent): the tool's result says why, as for ReAct
            pass
        return turn

    def close(self) -> None:
        """Release the model client."""
        self.client.close()
