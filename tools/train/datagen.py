"""Deterministic synthetic tool-calling data for the six environments.

Each example is {"env", "system", "tools", "query", "answers", "category", "intent"}
and renders with upstream's `finetune.render_example` (answers as a compact JSON
string, so numbers keep the digits the user typed, e.g. 12.50).

Categories mirror the refusal classes the environments' system prompts describe:
positive (one call), parallel (two calls), missing (a required value absent), invalid
(a value outside the enum or the bounds), negation, irrelevant (unsupported requests,
off-topic chat, other environments' requests) and absent (the needed tool is not
among the tools shown). All but positive and parallel answer `[]`.

`--values curated` reproduces the phase-1/2 data (hand-written value lists, the
original mix and wrappers). `--values mixed` (the last phase) draws most free-text
values from open-ended builders so they must be copied from the query, balances
number lengths, raises the parallel share and composes the request wrappers from
independent parts (opener, politeness, filler, suffix).

`--paraphrase P` (phase 5) rewrites the words of a share P of the phrasings with in-domain
synonyms (paraphrase.py); 0 (the default) draws nothing extra, so earlier phases reproduce.

`--env-weights` (phase 6) draws each training example's environment with these weights
instead of in turn. `--parallel-share S` (phase 8) makes a share S of the training examples
two-call requests, the other categories keeping their proportions. `--wide-words W` (phase 21)
draws a share W of the open-ended nouns and adjectives from a dictionary (compose.WIDE_SHARE).
`--vocab-words V --tokenizer PATH` (phase 24) builds a share V of the open-ended words and invented
names from the tokenizer's own pieces, so every piece is trained (compose.VOCAB_SHARE).
`--wide-verbs` (phase 26) lets those two pools supply the opening verbs too (compose.WIDE_VERBS).
`--near-miss M` (phase 35) gives a share M of the hand-written free-text values a one-word edit,
so they stay natural but unseen (intents.NEAR_MISS); `--name-miss N` (phase 36) re-pairs a share N
of the hand-written contact names (intents.NAME_MISS). `--codes C` (phase 39) puts a code-like
word ("QX7PLM", "#4471") into a share C of the open-ended word runs (compose.CODE_SHARE);
`--spoken-durations D` says a share D of the open-ended timer lengths in words ("a quarter of an
hour", "ten and a half minutes"; compose.SPOKEN_DURATIONS). `--unsupported-ops U` (phase 42) draws a
share U of the training split's irrelevant requests from operations no tool serves, filled with
open-ended values ("move {title} to {when}", "delete the contact {person}"; unsupported.py).
`--plain P` (phase 53) leaves a share P of the dressed requests bare: no opener, request form,
filler or suffix. Drawn independently, the four parts leave an imperative request bare only 0.8%
of the time, while negations and the unsupported and off-topic refusals are mostly bare, so
bareness alone could predict `[]`. `--browser B` (phase 54) adds the browser environment
(browser.py) as a seventh: a share B of the training examples, one in seven of the validation
examples; its requests become the six environments' refusals and theirs its own.
`--browser-subset S` (phase 55) shows a share S of the browser training examples only the tools
they need (a refusal: the tools its intent would call) plus 0-3 others, ~250-400 tokens instead of
the full list's ~900; without it nothing extra is drawn. `--browser-phrasings` (phase 79) appends
browser_phrasings.py's second round of sentence shapes to the browser intents;
`--browser-values` (phase 81) browser_values.py's third round: carrier words before values,
timer lengths in hours, labels after "to", "mute it" as the current tab;
`--browser-values-repeat K` (phase 82) draws that round's training phrasings K times as often.
`--browser-refusals` (phase 83) adds browser_refusals.py's fourth round: more unsupported browser
actions, its composed unsupported operations drawn, values missing after carrier words.

Usage: python datagen.py --out DIR [--train N] [--val N] [--seed S] [--values curated|mixed]
       [--paraphrase P] [--env-weights W,W,W,W,W,W] [--parallel-share S]
       [--more-phrasings [1|2|3]] [--wide-words W] [--vocab-words V --tokenizer PATH] [--wide-verbs]
       [--near-miss M] [--name-miss N] [--codes C] [--spoken-durations D] [--unsupported-ops U]
       [--plain P] [--browser B [--browser-subset S] [--browser-invalid-balanced] [--browser-phrasings]
       [--browser-values [--browser-values-repeat K]] [--browser-refusals]]
"""
import argparse
import json
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import compose as C  # noqa: E402
import intents as I  # noqa: E402
import paraphrase as P  # noqa: E402
import more_phrasings  # noqa: E402
import slots as S  # noqa: E402
import unsupported as U  # noqa: E402
import browser as B  # noqa: E402
import browser_phrasings  # noqa: E402
import browser_values  # noqa: E402
import browser_refusals as R  # noqa: E402
from dump_tools import catalogue  # noqa: E402

MIX = [("positive", 0.44), ("parallel", 0.14), ("missing", 0.09), ("negation", 0.09),
       ("invalid", 0.08), ("irrelevant", 0.12), ("absent", 0.04)]

REQUEST_PREFIX = ["", "", "", "", "", "please ", "can you ", "could you ", "hey, ", "ok, ",
                  "I'd like you to ", "would you ", "can you please ", "quick, ", "go ahead and ",
                  "I need you to ", "hey there, ", "alright, ", "now ", "would you please "]
OTHER_PREFIX = ["", "", "", "", "hey, ", "ok ", "so ", "um, ", "alright, ", "oh, "]
SUFFIX = ["", "", "", "", " please", " thanks", " now", " for me", " right now", ", thanks",
          " asap", " thank you"]
NEGATIONS = ["don't {c}", "do not {c}", "please don't {c}", "never mind, don't {c}", "no, don't {c}",
             "I don't want you to {c}", "you don't need to {c}", "don't {c} yet", "no need to {c}",
             "don't bother to {c}", "do NOT {c}", "please do not {c}", "actually, don't {c}",
             "I changed my mind, don't {c}", "let's not {c}", "there's no need to {c}",
             "hold off, don't {c}", "cancel that, don't {c}", "we don't need to {c}", "dont {c}",
             "don't {c} today", "never {c}", "you shouldn't {c}", "wait, don't {c}"]
# Mixed mode: more two-call requests, wrappers composed from independent parts.
MIX_MIXED = [("positive", 0.42), ("parallel", 0.20), ("missing", 0.08), ("negation", 0.08),
             ("invalid", 0.08), ("irrelevant", 0.10), ("absent", 0.04)]
OPENERS = ["", "", "", "", "", "", "hey, ", "ok, ", "so ", "um, ", "hi, ", "alright, ", "okay so ",
           "hey there, ", "excuse me, ", "oh, ", "right, ", "hello, ", "uh, ", "yo, ", "quick one: "]
ASKS = ["", "", "", "", "please ", "can you ", "could you ", "would you ", "can you please ",
        "could you please ", "would you please ", "I'd like you to ", "I want you to ", "I need you to ",
        "go ahead and ", "kindly ", "please go ahead and ", "can I get you to ", "help me ",
        "let's "]
FILLERS = ["", "", "", "", "", "", "", "quickly ", "just ", "also ", "now ", "real quick, "]
SUFFIXES = ["", "", "", "", "", " please", " thanks", " now", " for me", " right now", ", thanks",
            " asap", " thank you", ", please", " if you can", " when you get a chance", ", cheers",
            " real quick", ", ty", " please and thank you", " straight away", ", if possible"]
# After a value copied at the very end only a comma-separated tail is safe.
FREE_SUFFIXES = [", thanks", ", please", ", thank you", ", cheers", ". Thanks", "! Thanks"]
# Share of dressed requests left bare (`--plain`, phase 53); at 0 nothing extra is drawn.
PLAIN = 0.0
CONNECTORS_MIXED = [" and ", ", then ", " and then ", ", and ", ". Also ", " and also ", ", plus ",
                    "; ", ", also ", " then ", ", and also ", " plus ", ", after that ", ". After that, ",
                    " and after that ", ". Then ", ", and then ", " & ", ". And ", " as well as ",
                    ". Oh and ", ", oh and also "]
CONNECTORS = [" and ", ", then ", " and then ", ", and ", ". Also ", " and also ", ", plus ",
              "; ", ", also ", " then "]
# Requests that two environments could both claim are never used as each other's refusals.
CONFLICTS = {("kitchen_appliance", "productivity"): {"timer"},
             ("productivity", "kitchen_appliance"): {"timer", "timer_clock"}}
# Slots whose text is copied into the call: no trailing filler words after them.
FREE = {"music", "genre", "artist", "song", "album", "when", "note", "reply", "food", "task", "loc",
        "merchant", "who", "title", "ntitle", "msg", "dur", "clock", "label", "email", "phone"} | B.FREE


class Generator:
    def __init__(self, split, seed, values="curated", paraphrase=0.0):
        self.mixed = values == "mixed"
        self.paraphrase = paraphrase
        I.VALUES = values
        seed_text = f"{split}-{seed}" if not self.mixed else f"{split}-{seed}-mixed"
        self.split, self.rng = split, random.Random(seed_text)
        self.catalogue = catalogue()
        if B.SHARE:
            self.catalogue.update(B.catalogue())
        # Per environment: the browser's `set_timer` is not productivity's (minutes against
        # time_human), so a name alone does not find a schema.
        self.schemas = {env: {t["name"]: t for t in spec["tools"]}
                        for env, spec in self.catalogue.items()}

    # ------------------------------------------------------------ rendering pieces

    def _fill(self, intent, template, values=None, bad_slot=None):
        """Render one phrasing; returns (text, values) or None when a bad value is impossible."""
        rng, split = self.rng, self.split
        surfaces, values = {}, dict(values or {})
        for name, slot in intent.slots.items():
            if name not in values:
                surface, value = slot.draw(rng, split)
                values[name] = value
                surfaces[name] = surface
            if isinstance(values[name], dict):  # a contact: its fields are slots too
                surfaces.update({k: v for k, v in values[name].items() if k != "name"})
                surfaces[name] = values[name]["name"]
        if self.paraphrase and rng.random() < self.paraphrase:
            template = P.rewrite(template, rng)
        if bad_slot is not None:
            bad = intent.slots[bad_slot].bad(rng, split)
            if bad is None or "{" + bad_slot + "}" not in template:
                return None
            surfaces[bad_slot] = bad
        text = template.format(**surfaces)
        return text, values

    def _dress(self, kind, text, tail_free, lead_free=False):
        rng = self.rng
        if self.mixed:
            return self._dress_mixed(kind, text, tail_free, lead_free)
        prefix = rng.choice(REQUEST_PREFIX if kind == "imp" else OTHER_PREFIX)
        suffix = "" if tail_free else rng.choice(SUFFIX)
        text = prefix + text + suffix
        return self._finish(text)

    def _dress_mixed(self, kind, text, tail_free, lead_free):
        """Opener + request form + filler + text + suffix, each drawn independently. A value
        copied at the very start keeps its case (the answer copies it as typed)."""
        rng = self.rng
        if PLAIN and rng.random() < PLAIN:
            return self._finish(text, keep_case=lead_free)
        prefix = rng.choice(OPENERS)
        if kind == "imp":
            prefix += rng.choice(ASKS) + rng.choice(FILLERS)
        if tail_free:
            suffix = rng.choice(FREE_SUFFIXES) if rng.random() < 0.15 else ""
        else:
            suffix = rng.choice(SUFFIXES)
        return self._finish(prefix + text + suffix, keep_case=lead_free and not prefix)

    def _finish(self, text, keep_case=False):
        rng = self.rng
        if rng.random() < 0.5 and not keep_case:
            text = text[0].upper() + text[1:]
        if text[-1] not in ".!?":
            question = re.match(r"(?i)(can|could|would|is|what|how|where|who)\b", text)
            text += rng.choice(["", "", "?"] if question else ["", "", "", ".", "!"])
        return text

    @staticmethod
    def _tail_free(intent, template):
        match = re.search(r"\{(\w+)\}$", template)
        return bool(match) and match.group(1) in FREE

    @staticmethod
    def _lead_free(template):
        match = re.match(r"\{(\w+)\}", template)
        return bool(match) and match.group(1) in FREE

    def _tools(self, env, needed, absent=None):
        rng = self.rng
        base = list(self.catalogue[env]["tools"])
        if env == B.NAME and B.SUBSET and self.split == "train" and rng.random() < B.SUBSET:
            return self._short_list(base, needed, absent)
        if absent is not None:
            keep = [t for t in base if t["name"] != absent]
            rng.shuffle(keep) if rng.random() < 0.3 else None
            return keep[:rng.randint(max(1, len(keep) - 2), len(keep))]
        r = rng.random()
        if r < 0.70:
            return base
        if r < 0.80:
            return rng.sample(base, len(base))
        if r < 0.92:
            others = [t for t in base if t["name"] not in needed]
            chosen = set(needed) | {t["name"] for t in rng.sample(others, rng.randint(0 if needed else 1, len(others)))}
            subset = [t for t in base if t["name"] in chosen]
            return rng.sample(subset, len(subset)) if rng.random() < 0.5 else subset
        foreign = [t for e, v in self.catalogue.items() if e != env for t in v["tools"]]
        tools = list(base)
        for tool in rng.sample(foreign, rng.randint(1, 2)):
            tools.insert(rng.randint(0, len(tools)), tool)
        return tools

    def _short_list(self, base, needed, absent):
        """The needed tools (a refusal's: the ones its intent would call) plus 0-3 others, at
        least one tool in all: a browser prompt of ~250-400 tokens instead of ~900 (phase 55)."""
        rng = self.rng
        others = [t["name"] for t in base if t["name"] not in needed and t["name"] != absent]
        chosen = (set(needed) - {absent}) | set(rng.sample(others, rng.randint(0 if needed else 1, 3)))
        subset = [t for t in base if t["name"] in chosen]
        return rng.sample(subset, len(subset)) if rng.random() < 0.5 else subset

    def _intent_tools(self, name):
        """The tools a browser intent calls, so its refusals (missing, negation, invalid) keep
        them in a short list. Filled once with a throwaway rng: the example stream is unchanged."""
        if not hasattr(self, "_browser_tools"):
            saved, self.rng = self.rng, random.Random(0)
            self._browser_tools = {i.name: {c["name"] for c in i.calls(self._fill(i, i.imp[0])[1])}
                                   for i in B.INTENTS}
            self.rng = saved
        return self._browser_tools.get(name, set())

    # ------------------------------------------------------------ categories

    def _intents(self, env):
        return I.ENVIRONMENTS[env][0]

    def _single(self, env, kinds=("imp", "alt")):
        intent = self.rng.choice(self._intents(env))
        templates = intent.templates(self.split, kinds)
        if not templates:
            return self._single(env, kinds)
        kind, template = self.rng.choice(templates)
        text, values = self._fill(intent, template)
        return intent, kind, template, text, intent.calls(values)

    def positive(self, env):
        intent, kind, template, text, calls = self._single(env)
        query = self._dress(kind, text, self._tail_free(intent, template), self._lead_free(template))
        return query, calls, intent.name

    def parallel(self, env):
        first = self._single(env)
        for _ in range(20):
            second = self._single(env)
            keys = {json.dumps(c, sort_keys=True, default=str) for c in first[4]}
            if not any(json.dumps(c, sort_keys=True, default=str) in keys for c in second[4]) \
                    and first[4][0]["name"] != second[4][0]["name"] or self.rng.random() < 0.15:
                break
        joiner = self.rng.choice(CONNECTORS_MIXED if self.mixed else CONNECTORS)
        text = first[3] + joiner + second[3]
        query = self._dress(first[1], text, self._tail_free(second[0], second[2]), self._lead_free(first[2]))
        return query, first[4] + second[4], first[0].name + "+" + second[0].name

    def missing(self, env):
        candidates = [i for i in self._intents(env) if i.templates(self.split, ("missing",))]
        intent = self.rng.choice(candidates)
        _, template = self.rng.choice(intent.templates(self.split, ("missing",)))
        text, _ = self._fill(intent, template)
        kind = "imp" if re.match(r"[a-z]", template) and not template.startswith(("I ", "log my")) else "alt"
        return self._dress(kind, text, self._tail_free(intent, template), self._lead_free(template)), [], intent.name

    def negation(self, env):
        intent = self.rng.choice(self._intents(env))
        templates = intent.templates(self.split, ("imp",))
        _, template = self.rng.choice(templates)
        text, _ = self._fill(intent, template)
        query = self.rng.choice(NEGATIONS).format(c=text)
        return self._finish(query), [], intent.name

    def _bad_slots(self, env):
        """The (intent, slot) pairs of an environment that have an out-of-range value."""
        return [(i, s) for i in self._intents(env) for s, slot in i.slots.items()
                if slot.bad(random.Random(0), self.split) is not None]

    def invalid(self, env):
        rng = self.rng
        candidates = self._bad_slots(env)
        for _ in range(50):
            intent, slot = rng.choice(candidates)
            kind, template = rng.choice(intent.templates(self.split))
            filled = self._fill(intent, template, bad_slot=slot)
            if filled is not None:
                text, _ = filled
                return self._dress(kind, text, self._tail_free(intent, template), self._lead_free(template)), [], intent.name
        raise RuntimeError(f"no invalid phrasing for {env}")

    def irrelevant(self, env):
        rng = self.rng
        share = U.ENV_SHARE.get(env, U.SHARE)
        if share and self.split == "train" and rng.random() < share:
            text, question = U.request(env, rng)
            return self._dress("alt" if question else "imp", text, False), [], "unsupported-op"
        r = rng.random()
        if r < 0.35:
            pool = I._split_pool(I.ENVIRONMENTS[env][1], self.split)
            return self._finish(rng.choice(REQUEST_PREFIX[:8]) + rng.choice(pool)), [], "unsupported"
        if r < 0.6:
            pool = I._split_pool(S.GENERAL_OFFTOPIC, self.split)
            return self._finish(rng.choice(pool)), [], "offtopic"
        other = rng.choice([e for e in I.ENVIRONMENTS if e != env])
        banned = CONFLICTS.get((env, other), set())
        banned = banned | B.conflicts(env, other)
        while True:
            query, _, name = self.positive(other)
            if name not in banned:
                return query, [], "other:" + other

    def example(self, env, category):
        if category == "absent":
            query, calls, name = self.positive(env)
            absent = self.rng.choice(calls)["name"]
            return {"query": query, "answers": [], "intent": name,
                    "tools": self._tools(env, set(), absent=absent)}
        query, calls, name = getattr(self, category)(env)
        needed = {c["name"] for c in calls}
        if env == B.NAME and B.SUBSET and category in ("missing", "negation", "invalid"):
            needed = self._intent_tools(name)
        return {"query": query, "answers": calls, "intent": name, "tools": self._tools(env, needed)}

    def _browser_weights(self, cats, weights):
        """The category weights of browser examples: with `--browser-invalid-balanced` (phase 77)
        the invalid weight is scaled by the share of its intents that have an out-of-range value,
        so each of those intents gets about as many invalid examples as missing ones, instead of
        more than its positives (4 of 25 intents drew all 8%). With `--browser-refusals` (phase 83)
        the irrelevant weight is scaled up too."""
        if R.ACTIVE:
            weights = [w * R.IRRELEVANT_SCALE if c == "irrelevant" else w for c, w in zip(cats, weights)]
        if not B.INVALID_BALANCED:
            return weights
        scale = len({i.name for i, _ in self._bad_slots(B.NAME)}) / len(self._intents(B.NAME))
        return [w * scale if c == "invalid" else w for c, w in zip(cats, weights)]

    def generate(self, n, env_weights=None, parallel_share=None):
        rng = self.rng
        envs = list(self.catalogue)
        six = [e for e in envs if e != B.NAME]
        cats, weights = zip(*(MIX_MIXED if self.mixed else MIX))
        if parallel_share is not None:
            # The other categories keep their proportions among themselves.
            rest = sum(w for c, w in zip(cats, weights) if c != "parallel")
            weights = [parallel_share if c == "parallel" else w * (1 - parallel_share) / rest
                       for c, w in zip(cats, weights)]
        browser_weights = self._browser_weights(cats, weights) if B.SHARE else weights
        for i in range(n):
            if not env_weights:
                env = envs[i % len(envs)]
            elif B.SHARE and rng.random() < B.SHARE:
                env = B.NAME
            else:
                env = rng.choices(six, env_weights)[0]
            category = rng.choices(cats, browser_weights if env == B.NAME else weights)[0]
            ex = self.example(env, category)
            ex["tools"] = [dict(t) for t in ex["tools"]]
            yield {"env": env, "system": self.catalogue[env]["system"], "category": category,
                   "intent": ex["intent"], "tools": ex["tools"], "query": ex["query"],
                   "answers": answers_json(self.schemas[env], ex["answers"])}


def answers_json(schemas, calls):
    """Compact JSON of the calls, arguments in schema order, number literals verbatim."""
    literals = {}

    def encode(value):
        if isinstance(value, I.Lit):
            key = f"\u0000{len(literals)}\u0000"
            literals[key] = value.text
            return key
        return value

    ordered = []
    for c in calls:
        props = list(schemas[c["name"]]["parameters"].get("properties", {}))
        # An argument outside the schema would be dropped silently below (sessions 22-26 lost
        # productivity's timer arguments that way), so it stops the generator instead.
        unknown = sorted(set(c["arguments"]) - set(props))
        if unknown:
            raise ValueError(f"{c['name']} has no argument {unknown}")
        args = {k: encode(c["arguments"][k]) for k in props if k in c["arguments"]}
        ordered.append({"name": c["name"], "arguments": args})
    text = json.dumps(ordered, separators=(",", ":"), ensure_ascii=False)
    for key, literal in literals.items():
        text = text.replace(json.dumps(key), literal)
    json.loads(text)
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", required=True)
    parser.add_argument("--train", type=int, default=60000)
    parser.add_argument("--val", type=int, default=1200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--values", choices=("curated", "mixed"), default="curated",
                        help="curated: hand-written value lists (phases 1-2); mixed: mostly open-ended values")
    parser.add_argument("--env-weights", help="comma-separated weights of the six environments in "
                        "catalogue order (train split only; default: round robin)")
    parser.add_argument("--paraphrase", type=float, default=0.0,
                        help="share of phrasings whose own words are rewritten with synonyms (phase 5)")
    parser.add_argument("--parallel-share", type=float,
                        help="share of two-call examples (train split only; default: the mode's mix)")
    parser.add_argument("--wide-words", type=float, default=0.0,
                        help="share of open-ended nouns and adjectives drawn from words.txt (phase 21)")
    parser.add_argument("--vocab-words", type=float, default=0.0,
                        help="share of open-ended words and names built from --tokenizer's pieces (phase 24)")
    parser.add_argument("--wide-verbs", action="store_true",
                        help="draw the opening verbs from the --wide-words and --vocab-words pools too (phase 26)")
    parser.add_argument("--near-miss", type=float, default=0.0,
                        help="share of hand-written free-text values given a one-word edit (phase 35)")
    parser.add_argument("--name-miss", type=float, default=0.0,
                        help="share of hand-written contact names re-paired with another listed surname (phase 36)")
    parser.add_argument("--codes", type=float, default=0.0,
                        help="share of open-ended word runs given a code-like word such as QX7PLM (phase 39)")
    parser.add_argument("--spoken-durations", type=float, default=0.0,
                        help="share of open-ended timer lengths said in words, e.g. 'a quarter of an hour' (phase 39)")
    parser.add_argument("--unsupported-ops", type=float, default=0.0,
                        help="share of training irrelevant requests composed from operations no tool serves (phase 42)")
    parser.add_argument("--plain", type=float, default=0.0,
                        help="share of dressed requests left bare: no opener, request form, filler or suffix (phase 53)")
    parser.add_argument("--browser", type=float, default=0.0,
                        help="share of training examples from the browser environment (browser.py, phase 54)")
    parser.add_argument("--browser-subset", type=float, default=0.0,
                        help="share of the browser training examples shown only the needed tools "
                             "plus 0-3 others (phase 55)")
    parser.add_argument("--browser-invalid-balanced", action="store_true",
                        help="scale the browser's invalid share by the share of its intents with an "
                             "out-of-range value (phase 77)")
    parser.add_argument("--browser-phrasings", action="store_true",
                        help="add browser_phrasings.py's second round of browser phrasings (phase 79)")
    parser.add_argument("--browser-values", action="store_true",
                        help="add browser_values.py's third round: carrier words, hours, 'to' labels, "
                             "'mute it' (phase 81)")
    parser.add_argument("--browser-values-repeat", type=int, default=1,
                        help="draw --browser-values' training phrasings this many times as often, 2-8 "
                             "(default 1: once; phase 82 used 3)")
    parser.add_argument("--browser-refusals", action="store_true",
                        help="add browser_refusals.py's fourth round: more unsupported browser actions, "
                             "composed ones drawn, values missing after carrier words (phase 83)")
    parser.add_argument("--tokenizer", help="the SentencePiece model whose pieces --vocab-words draws")
    parser.add_argument("--more-phrasings", type=int, nargs="?", const=1, default=0, choices=(0, 1, 2, 3),
                        help="add more_phrasings.py's rounds of phrasings: 1 = productivity and data_capture "
                             "(phase 12, the default when no value is given), 2 = also wearable and kitchen (phase 15), "
                             "3 = a third round for productivity and data_capture (phase 19)")
    args = parser.parse_args()
    if args.more_phrasings:
        more_phrasings.extend(args.more_phrasings)
    if not 0 <= args.wide_words <= 1:
        raise SystemExit("--wide-words must be in [0, 1]")
    C.WIDE_SHARE = args.wide_words
    if not 0 <= args.near_miss <= 1:
        raise SystemExit("--near-miss must be in [0, 1]")
    I.NEAR_MISS = args.near_miss
    if not 0 <= args.name_miss <= 1:
        raise SystemExit("--name-miss must be in [0, 1]")
    I.NAME_MISS = args.name_miss
    C.WIDE_VERBS = args.wide_verbs
    for flag, share in (("--codes", args.codes), ("--spoken-durations", args.spoken_durations),
                        ("--unsupported-ops", args.unsupported_ops), ("--plain", args.plain)):
        if not 0 <= share <= 1:
            raise SystemExit(f"{flag} must be in [0, 1]")
    C.CODE_SHARE, C.SPOKEN_DURATIONS, U.SHARE = args.codes, args.spoken_durations, args.unsupported_ops
    global PLAIN
    PLAIN = args.plain
    if not 0 <= args.browser < 1:
        raise SystemExit("--browser must be in [0, 1)")
    B.SHARE = args.browser
    if not 0 <= args.browser_subset <= 1 or args.browser_subset and not args.browser:
        raise SystemExit("--browser-subset must be in [0, 1] and needs --browser")
    B.SUBSET = args.browser_subset
    if args.browser_invalid_balanced and not args.browser:
        raise SystemExit("--browser-invalid-balanced needs --browser")
    B.INVALID_BALANCED = args.browser_invalid_balanced
    if args.browser_phrasings and not args.browser:
        raise SystemExit("--browser-phrasings needs --browser")
    if args.browser_values and not args.browser:
        raise SystemExit("--browser-values needs --browser")
    if args.browser_values_repeat != 1 and not (args.browser_values and 1 < args.browser_values_repeat <= 8):
        raise SystemExit("--browser-values-repeat must be in 2..8 and needs --browser-values")
    if args.browser_refusals and not args.browser:
        raise SystemExit("--browser-refusals needs --browser")
    if B.SHARE:
        B.register()
    if args.browser_phrasings:
        browser_phrasings.extend()
    if args.browser_values:
        browser_values.extend(args.browser_values_repeat)
    if args.browser_refusals:
        R.extend()
    if not 0 <= args.vocab_words <= 1 - args.wide_words:
        raise SystemExit("--vocab-words must be in [0, 1 - wide words]")
    if args.vocab_words:
        if not args.tokenizer:
            raise SystemExit("--vocab-words needs --tokenizer")
        starts, tails = C.load_vocab_words(args.tokenizer)
        print(f"vocabulary words: {starts} word-start pieces, {tails} word-tail pieces")
        C.VOCAB_SHARE = args.vocab_words
    os.makedirs(args.out, exist_ok=True)
    weights = [float(w) for w in args.env_weights.split(",")] if args.env_weights else None
    if weights is not None and len(weights) != len(catalogue()):
        raise SystemExit(f"--env-weights needs {len(catalogue())} values")
    if args.parallel_share is not None and not 0 <= args.parallel_share < 1:
        raise SystemExit("--parallel-share must be in [0, 1)")
    for split, n in (("train", args.train), ("val", args.val)):
        path = os.path.join(args.out, split + ".jsonl")
        with open(path, "w", encoding="utf-8") as handle:
            for ex in Generator(split, args.seed, args.values, args.paraphrase).generate(
                    n, *((weights, args.parallel_share) if split == "train" else (None, None))):
                handle.write(json.dumps(ex, ensure_ascii=False) + "\n")
        print(f"wrote {n} {split} examples to {path}")


if __name__ == "__main__":
    main()
