"""Meaning-preserving rewrites of a phrasing's own words (phase 5, `datagen.py --paraphrase`).

The phase-4 model fits the training phrasings (loss 0.06) far better than held-out
ones (0.20): it keys on whole templates. Rewriting the words around the slots with
in-domain synonyms multiplies the surface forms of every template without writing new
ones. Only text outside `{slot}` placeholders is touched, so copied values stay as the
user typed them; rules are directed and context-limited so a rewrite never changes
which call is meant (e.g. "start" only before an article or "tracking").
Written from the tool schemas' wording, like the templates themselves.
"""
import re

# (pattern, alternatives). Each match is rewritten with probability RATE to one of the
# alternatives (the original form stays possible through the probability).
RULES = [
    (r"\bturn on\b", ["switch on", "power on"]),
    (r"\bturn off\b", ["switch off", "shut off", "power off"]),
    (r"\bcreate (an?)\b", ["make \\1", "set up \\1", "add \\1"]),
    (r"\bmake (an?) (note|reminder|task|timer|to-do|calendar event|event)\b",
     ["create \\1 \\2", "add \\1 \\2"]),
    (r"\bset the\b", ["change the", "adjust the"]),
    (r"\bI want\b", ["I'd like", "I need"]),
    (r"\bI need\b", ["I want", "I'd like"]),
    (r"\bto-do list\b", ["todo list", "to do list", "task list", "list of tasks"]),
    (r"\bremind me\b", ["give me a reminder", "send me a reminder"]),
    (r"\bstart (a|an|the|my|tracking)\b", ["begin \\1", "kick off \\1"]),
    (r"\bstop\b", ["halt"]),
    (r"\bplay\b", ["put on"]),
    (r"\bmessage\b", ["text"]),
    (r"\bnotification\b", ["alert"]),
    (r"\blog\b", ["record", "track"]),
    (r"\bsave\b", ["store"]),
    (r"\bjot down\b", ["note down", "write down"]),
    (r"\bmy phone\b", ["my mobile", "my cell"]),
    (r"\blights\b", ["lamps"]),
    (r"\bmy calendar\b", ["my schedule"]),
    (r"\btemperature\b", ["temp"]),
    (r"\bvolume\b", ["sound"]),
    (r"\b(called|named|titled)\b", ["called", "named", "titled"]),
    (r"\b(saying|that says)\b", ["saying", "that says", "reading"]),
    (r"\b(can|could|would) you\b", ["can you", "could you", "would you", "will you"]),
    (r"\bworkout\b", ["exercise", "training session"]),
    (r"\bI spent\b", ["I paid"]),
    (r"\bI ate\b", ["I had"]),
    (r"\bI drank\b", ["I had"]),
    (r"\bthe $", ["my ", ""]),  # before a placeholder: "turn on kitchen lights"
]
RATE = 0.35
_SLOT = re.compile(r"(\{\w+\})")


def rewrite(template, rng):
    """The template with some of its own words replaced; placeholders are left intact."""
    parts = _SLOT.split(template)
    for i in range(0, len(parts), 2):  # even indices: text between placeholders
        for pattern, options in RULES:
            if pattern.endswith("$") and i == len(parts) - 1:
                continue  # "$" stands for "before a placeholder", not the end of the phrasing
            parts[i] = re.sub(pattern, lambda m: m.expand(rng.choice(options)) if rng.random() < RATE
                              else m.group(0), parts[i])
    return "".join(parts)
