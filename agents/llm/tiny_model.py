"""A tiny random-weight chat model built offline, for tests of the ``hf:`` path and the training scripts.

:func:`build_tiny_chat_model` writes a Llama-architecture causal LM of a few thousand parameters and a
byte-level BPE tokenizer (trained here on cube notation, with a ChatML chat template) into a folder that
``hf:<folder>`` loads: the real transformers, tokenizer and generate code run, nothing is downloaded.
Its replies are noise; what it proves is the plumbing (chat template, token counts, stops, budgets,
records, a LoRA adapter, a few training steps).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["build_tiny_chat_model", "CHATML_TEMPLATE"]

CHATML_TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
                   "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
_CORPUS = ["Thought: I turn a face. Action: move(\"U R' F2 D L B\") done() Observation: The cube is solved.",
           "Cube (URFDLB facelets): UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB"]


def build_tiny_chat_model(folder: str | Path, *, hidden_size: int = 32, layers: int = 1, seed: int = 0,
                          vocab_size: int = 400, context: int = 4096) -> Path:
    """Write a tiny random chat model (weights, config, tokenizer, chat template) into ``folder``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    folder = Path(folder)
    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(_CORPUS * 4, trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=["<unk>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>", unk_token="<unk>",
                                        pad_token="<|im_end|>", bos_token="<|im_start|>")
    tokenizer.chat_template = CHATML_TEMPLATE
    tokenizer.save_pretrained(folder)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=hidden_size, intermediate_size=2 * hidden_size,
                         num_hidden_layers=layers, num_attention_heads=2, num_key_value_heads=2,
                         max_position_embeddings=context, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id)
    torch.manual_seed(seed)
    LlamaForCausalLM(config).save_pretrained(folder)
    return folder
