"""A trained agent's results say so: ``cubebench report`` and ``compare`` mark a run of an agent trained on this
environment (``mlp``, ``rnn``, ``sft``, an ``hf:`` adapter made by the project's training programs) as trained, say on what,
and which of the run's depths lie in its training data (issue 40, item 1).  What the training data holds is read
from the training programs' own code and files here: ``policy_data``'s start depths, ``positions``' APART_FROM, and
the ``training.json`` written by ``RunState`` as ``policy_sft`` and ``policy_grpo`` write it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cubebench.runner.cli import main
from cubebench.runner.compare import compare_runs, render
from cubebench.runner.report import build_report, text_report
from cubebench.runner.specs import AGENT_KINDS, agent_training
from cubebench.runner.store import open_run
from cubebench.runner.trained import SHIPPED_SFT
from helpers import needs

EXP1 = ["--suite", "exp1", "--tiers", "symbolic", "--depths", "1,4,8", "--no-progress", "--quiet"]


def test_only_the_kinds_that_declare_training_mark_their_agents() -> None:
    assert {kind.name for kind in AGENT_KINDS if kind.trained is not None} == {"rl", "recurrent", "search", "model"}
    for spec in ("random", "solver", "blind", "oracle", "perfect", "openai:gpt-5", "anthropic:claude",
                 "local", "hf:/no/such/folder"):
        assert agent_training(spec) is None, spec


def test_sft_is_marked_with_the_training_data_its_program_defines() -> None:
    """The shipped adapter's training, read against ``policy_data``/``positions``: paths from starts of depths 4-8
    down to 1; below APART_FROM every training position is a public one, from it up none is."""
    from cubebench.training.policy_data import DataRequest, START_DEPTHS
    from cubebench.training.positions import APART_FROM

    training = agent_training("sft")
    assert training is not None and training.metric == "quarter"
    assert training.depths == tuple(range(1, max(START_DEPTHS) + 1))
    assert training.public == tuple(range(1, APART_FROM)) and training.apart == tuple(range(APART_FROM, 9))
    assert SHIPPED_SFT["request"] == DataRequest().to_dict()  # the shipped run used policy_sft's defaults
    text = training.depth_text([1, 2, 3, 4, 8, 12, 16, 20], "quarter")
    assert text.startswith("this run's depths in its training data: 1-3 (its training data holds the public positions")
    assert "4, 8 (training positions there are kept apart" in text and text.endswith("outside it: 12, 16, 20")


@pytest.fixture(scope="module")
def random_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("marks") / "random.sqlite"
    assert main(["run", *EXP1, "--agent", "random", "--out", str(db)]) == 0
    return db


def test_a_zero_shot_run_carries_no_mark(random_run: Path) -> None:
    with open_run(random_run) as store:
        assert store.get_meta("agent_training", "absent") is None
        text = text_report(build_report(store))
    assert "trained" not in text
    assert "trained" not in render(compare_runs([random_run]))


def test_an_sft_run_from_before_the_mark_is_marked_in_report_and_compare(random_run: Path, tmp_path: Path) -> None:
    """A run of ``sft`` recorded before runs kept the mark (its meta has none): the report reads it from the spec."""
    db = tmp_path / "sft.sqlite"
    db.write_bytes(random_run.read_bytes())
    with open_run(db) as store:
        config = store.get_meta("config")
        store.set_meta("config", {**config, "agent": {**config["agent"], "spec": "sft", "style": "policy"}})
        store.db.execute("DELETE FROM meta WHERE key = 'agent_training'")
        store.db.commit()
    with open_run(db, readonly=True) as store:
        facts = dict(build_report(store).summary().rows)
    assert facts["agent"] == "sft (policy) [trained on this environment, quarter-turn depths 1-8]"
    assert facts["trained"].startswith("trained on this environment by policy_sft")
    assert "depths in its training data: 1 (its training data holds the public positions there" in facts["trained"]
    assert "4, 8 (training positions there are kept apart" in facts["trained"]
    text = render(compare_runs([db]))
    row = next(line for line in text.splitlines() if line.startswith("run 1: sft"))
    assert row.startswith("run 1: sft [trained on this environment, quarter-turn depths 1-8]")
    assert "not a zero-shot score" in text


@needs("torch")
def test_an_mlp_run_is_marked_from_its_checkpoint_when_it_runs(tmp_path: Path, capsys) -> None:
    db = tmp_path / "mlp.sqlite"
    assert main(["run", *EXP1, "--agent", "mlp", "--out", str(db)]) == 0
    with open_run(db) as store:
        stored = store.get_meta("agent_training")
        facts = dict(build_report(store).summary().rows)
    assert stored["depths"] == [1, 2, 3, 4, 5] and stored["measured_on"] == [1, 2, 3, 4, 8]
    assert facts["agent"] == "mlp [trained on this environment, quarter-turn depths 1-5]"
    assert "random scrambles of 1 to 5 quarter turns" in facts["trained"]
    assert "measured it on the public shipped sets of depths 1-4, 8 while training" in facts["trained"]
    assert "depths in its training data: 1, 4 (its training data may hold the public positions there)" in \
        facts["trained"] and facts["trained"].endswith("outside it: 8")
    capsys.readouterr()
    assert main(["compare", str(db)]) == 0
    out = capsys.readouterr().out
    assert "run 1: mlp [trained on this environment, quarter-turn depths 1-5]  " in out


def _policy_sft_summary(folder: Path, start_depths: tuple[int, ...]) -> None:
    """``training.json`` as ``policy_sft`` writes it: its data manifest through ``RunState``."""
    from cubebench.training.policy_data import DataRequest, make_data
    from cubebench.training.run_state import RunState

    manifest = make_data(folder / "data", DataRequest(starts_per_depth=2, probe_per_depth=2, start_depths=start_depths),
                         log=lambda _: None)
    RunState.start(folder, {"out": folder, "steps": 1}, manifest, {}, None).write_summary(folder / "training.json")


def test_an_hf_adapter_of_the_training_programs_is_marked(tmp_path: Path) -> None:
    sft = tmp_path / "sft"
    _policy_sft_summary(sft, (4, 5))
    training = agent_training(f"hf:{sft}")
    assert training is not None and training.by.startswith("policy_sft")
    assert training.depths == (1, 2, 3, 4, 5) and training.public == (1, 2, 3) and training.apart == (4, 5)
    assert agent_training(f"hf:/some/base.gguf::{sft}") == training  # the adapter after a base
    grpo = tmp_path / "grpo"
    from cubebench.training.run_state import RunState

    grpo.mkdir()
    RunState.start(grpo, {"adapter": sft, "out": grpo, "depths": "6,7"}, {"starts": 4}, {}, None).write_summary(
        grpo / "training.json")
    after = agent_training(f"hf:{grpo}")
    assert after is not None and after.by == "GRPO on top of " + training.by
    assert after.depths == (1, 2, 3, 4, 5, 6, 7) and after.public == (1, 2, 3) and after.apart == (4, 5, 6, 7)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA"}))
    assert agent_training(f"hf:{tmp_path / 'other'}") is None  # an adapter from elsewhere is not marked
