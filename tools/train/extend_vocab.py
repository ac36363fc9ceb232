"""Extend the tokenizer with the browser's words (issue 49; LOG.md, session 32).

The 4,000-piece BPE was trained on the six environments before the browser existed and cuts
the browser's words into letters ("Unpin" is `U n p in`, every " tab" is `▁t ab`). This goes on
with BPE where SentencePiece stopped, on the browser's requests only: starting from
the old segmentation it merges the most frequent adjacent pair, MERGES times, and appends each
merge as a piece scored below every old one. SentencePiece (and the runtime, which merges by
score) then makes every old merge first and the new ones after, so text without the browser's
words mostly keeps its old pieces, and old ids keep their meaning: a model trained on the old
vocabulary is widened by appending embedding rows (`model_io.widen_vocab`, from `sources`).

Usage: python extend_vocab.py --tokenizer OLD.model --data DIR --merges N --out NEW.model
"""
import argparse
import collections
import json
import os

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as model_pb2

NORMAL = model_pb2.ModelProto.SentencePiece.NORMAL


def load_proto(path):
    proto = model_pb2.ModelProto()
    with open(path, "rb") as handle:
        proto.ParseFromString(handle.read())
    return proto


def browser_requests(path):
    """The browser's requests as they follow `</tools>` in the prompt (a marker-free segment).
    Answers are left out, so what the model writes (JSON, tool names) mostly keeps its pieces."""
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if row.get("env") == "browser":
                yield "\n" + row["query"]


def mergeable(piece):
    """Digits stay one per piece, no piece crosses a line, and a word boundary (`▁`) only opens
    a piece: ",▁close" or "▁this▁tab" would give one word several ids to learn apart."""
    return (not any(c.isdigit() or c == "\n" for c in piece) and "\u2581" not in piece[1:]
            and len(piece) <= 48)


def learn_merges(processor, texts, merges, known, fixed):
    """BPE from the old segmentation: the `merges` most frequent new adjacent pairs, in order.
    Pieces in `fixed` (bytes, markers) never merge."""
    words = collections.Counter(tuple(processor.encode(text, out_type=str)) for text in texts)
    words = [[list(word), count] for word, count in words.items()]
    learned = []
    while len(learned) < merges:
        pairs = collections.Counter()
        for word, count in words:
            for a, b in zip(word, word[1:]):
                if a + b not in known and mergeable(a + b) and a not in fixed and b not in fixed:
                    pairs[a, b] += count
        if not pairs:
            break
        (a, b), _ = pairs.most_common(1)[0]
        learned.append(a + b)
        known.add(a + b)
        for entry in words:
            word, merged = entry[0], []
            i = 0
            while i < len(word):
                if i + 1 < len(word) and word[i] == a and word[i + 1] == b:
                    merged.append(a + b)
                    i += 2
                else:
                    merged.append(word[i])
                    i += 1
            entry[0] = merged
    return learned


def extend(tokenizer, data, merges, out):
    proto = load_proto(tokenizer)
    processor = spm.SentencePieceProcessor(model_proto=proto.SerializeToString())
    texts = list(browser_requests(os.path.join(data, "train.jsonl")))
    known = {p.piece for p in proto.pieces}
    lowest = min(p.score for p in proto.pieces)
    fixed = {p.piece for p in proto.pieces if p.type != NORMAL}
    for rank, piece in enumerate(learn_merges(processor, texts, merges, known, fixed)):
        proto.pieces.add(piece=piece, score=lowest - 1 - rank, type=NORMAL)
    with open(out, "wb") as handle:
        handle.write(proto.SerializeToString())
    widened = spm.SentencePieceProcessor(model_file=out)
    before = sum(len(processor.encode(t)) for t in texts)
    after = sum(len(widened.encode(t)) for t in texts)
    print(f"wrote {out}: {len(proto.pieces)} pieces; the browser's requests "
          f"{before} -> {after} tokens")


def sources(model_path, old_vocab):
    """For each piece past the first `old_vocab`, the old ids its text encodes to."""
    proto = load_proto(model_path)
    pieces = [p.piece.replace("\u2581", " ") for p in proto.pieces[old_vocab:]]
    del proto.pieces[old_vocab:]
    old = spm.SentencePieceProcessor(model_proto=proto.SerializeToString())
    return [old.encode(piece) for piece in pieces]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tokenizer", required=True, help="the SentencePiece BPE to extend")
    parser.add_argument("--data", required=True, help="a datagen dir whose train.jsonl has browser examples")
    parser.add_argument("--merges", type=int, default=256)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    extend(args.tokenizer, args.data, args.merges, args.out)


if __name__ == "__main__":
    main()
