"""Train the SentencePiece BPE the default model ships with, on the synthetic corpus.

Upstream's special ids: pad 0, eos 1, bos 2, unk 3, then the 16 chat markers as
user-defined symbols (ids 4-19). Byte fallback, identity normalisation, no whitespace
collapsing, no dummy prefix, digits split one per piece (so every number is spelled
with the same ten pieces), and `split_by_unicode_script=False` so tool JSON
tokenises compactly.

Usage: python tokenizer_train.py --data DIR --vocab N   (writes DIR/tokenizer.model)
"""
import argparse
import io
import json
import os
import random

import sentencepiece as spm
from needle.model.finetune import render_example
from needle.model.tokenizer import CHAT_MARKERS


def corpus_lines(path, limit, seed=0):
    with open(path, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    random.Random(seed).shuffle(rows)
    for row in rows[:limit]:
        prompt, target = render_example(row)
        yield from (line for line in (prompt + target).split("\n") if line)


def train(data_dir, vocab):
    text = "\n".join(corpus_lines(os.path.join(data_dir, "train.jsonl"), 20000))
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(text.split("\n")), model_writer=model, model_type="bpe",
        vocab_size=vocab, pad_id=0, eos_id=1, bos_id=2, unk_id=3,
        user_defined_symbols=CHAT_MARKERS, byte_fallback=True, normalization_rule_name="identity",
        remove_extra_whitespaces=False, add_dummy_prefix=False, split_by_unicode_script=False,
        split_digits=True, split_by_whitespace=False, max_sentencepiece_length=48, max_sentence_length=20000,
        character_coverage=1.0, num_threads=2, minloglevel=2)
    path = os.path.join(data_dir, "tokenizer.model")
    with open(path, "wb") as handle:
        handle.write(model.getvalue())
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", required=True)
    parser.add_argument("--vocab", type=int, default=2000)
    args = parser.parse_args()
    print("wrote", train(args.data, args.vocab))


if __name__ == "__main__":
    main()
