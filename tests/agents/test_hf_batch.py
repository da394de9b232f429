"""Batched generation of an in-process model: concurrent callers share forward passes and each gets the reply it
would have got alone (greedy), on a tiny random-weight model built here."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from helpers import needs

pytestmark = needs("transformers", "torch")

from cubebench.agents.llm import make_client  # noqa: E402
from cubebench.agents.llm.hf import load_hf_model  # noqa: E402
from cubebench.agents.llm.hf_batch import BatchedGenerator, GenerationRequest  # noqa: E402
from cubebench.agents.llm.tiny_model import build_tiny_chat_model  # noqa: E402

PROMPTS = ["U R F", "D' L2 B", "a much longer prompt about the cube and its six faces, U R F D L B", "x", "R U R' U'"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_chat_model(tmp_path_factory.mktemp("tiny") / "model", hidden_size=32, layers=2)


def requests_for(loaded, texts: list[str], max_new_tokens: int = 6) -> list[GenerationRequest]:
    out = []
    for text in texts:
        ids = loaded.tokenizer.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True,
                                                   return_dict=True)["input_ids"]
        out.append(GenerationRequest(ids=tuple(ids), max_new_tokens=max_new_tokens))
    return out


def test_a_left_padded_batch_gives_each_prompt_its_own_greedy_reply(tiny: Path) -> None:
    loaded = load_hf_model(str(tiny))
    generator = BatchedGenerator(loaded.model, loaded.tokenizer, "cpu", threading.Lock())
    requests = requests_for(loaded, PROMPTS)
    alone = [generator.run_batch([r])[0] for r in requests]
    together = generator.run_batch(requests)
    assert together == alone and all(0 < len(t) <= 6 for t in together)
    shorter = requests_for(loaded, PROMPTS[:2], max_new_tokens=2)
    mixed = [shorter[0], requests[1], shorter[1]]  # token limits differ within one batch
    assert generator.run_batch(mixed) == [generator.run_batch([r])[0] for r in mixed]


def test_concurrent_clients_share_batches_and_get_the_replies_they_would_alone(tiny: Path) -> None:
    messages = [[{"role": "user", "content": text}] for text in PROMPTS * 2]
    solo = make_client(f"hf:{tiny}")
    expected = [solo.complete(m, max_tokens=5).text for m in messages]
    solo.close()
    loaded = load_hf_model(str(tiny))
    before = len(loaded.generator.batches)
    clients = [make_client(f"hf:{tiny}") for _ in messages]  # each opens a session: the batch waits for all
    got: list[str | None] = [None] * len(messages)
    barrier = threading.Barrier(len(messages))

    def ask(k: int) -> None:
        barrier.wait()
        got[k] = clients[k].complete(messages[k], max_tokens=5).text

    threads = [threading.Thread(target=ask, args=(k,)) for k in range(len(messages))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for client in clients:
        client.close()
    sizes = loaded.generator.batches[before:]
    assert got == expected and sum(sizes) == len(messages) and max(sizes) > 1


def test_a_seeded_sampled_request_runs_alone_and_repeats(tiny: Path) -> None:
    loaded = load_hf_model(str(tiny))
    request = requests_for(loaded, PROMPTS[:1])[0]
    seeded = GenerationRequest(ids=request.ids, max_new_tokens=8, temperature=1.5, seed=7)
    assert seeded.batch_key is None
    assert loaded.generator.generate(seeded) == loaded.generator.generate(seeded)
    unseeded = GenerationRequest(ids=request.ids, max_new_tokens=8, temperature=1.5)
    greedy = GenerationRequest(ids=request.ids, max_new_tokens=8)
    assert unseeded.batch_key != greedy.batch_key and unseeded.batch_key is not None


def test_a_failed_batch_reaches_its_caller(tiny: Path) -> None:
    loaded = load_hf_model(str(tiny))
    broken = BatchedGenerator(None, loaded.tokenizer, "cpu", threading.Lock())  # no model: generate fails
    request = requests_for(loaded, PROMPTS[:1])[0]
    with pytest.raises(AttributeError):
        broken.generate(request)
