"""Open-ended slot values built from small parts (the `--values mixed` mode).

A model trained on a few dozen values per slot learns to recall them instead of
copying from the query. These builders draw from spaces far too large to memorise
(random word sequences, invented names, composed dates and times), so the only way
to get the argument right is to copy it. Every builder takes a `random.Random`.
"""
import os

NOUNS = """
apple bag ball bank basket battery bean bed bell bike bill bird blanket boat book boot
bottle box bread bridge brush bucket butter button cable cake camera candle car card
carpet cart chair cheese chicken clock cloud coat coffee coin computer cookie corner
couch cup curtain desk dinner dog door drawer dress drum egg engine envelope fence file
flower folder fork fridge garden gate gift glass glove grape guitar hammer hat heater
helmet honey hook horse house invoice jacket jar jeans kettle key kite ladder lamp
laptop leaf lemon letter light lock map marker medicine mirror money monitor mug nail
napkin needle net notebook onion orange oven package paint pan paper parcel pasta pen
pencil pepper phone photo piano picture pillow pizza plant plate pocket pot potato
printer puzzle radio receipt ribbon ring river rope rug salad sandwich scarf scissors
screen seed shelf shirt shoe shovel sink soap sock sofa spoon stamp stapler stove
sugar suitcase table tape ticket tire toast towel toy tray tree truck umbrella vase
wallet watch window wire wood yarn album anchor arrow badge banner barrel beacon
bench blender bracelet brick cabinet canvas castle chain charger compass crystal
diary engine feather flag forest harbor island jungle kitchen ladder lantern meadow
mountain ocean orchard palace pebble planet pond rocket saddle shadow signal statue
storm summit temple thunder tower tunnel valley village volcano whistle window report
budget meeting project contract proposal schedule slides draft review survey agenda
invoice spreadsheet deadline presentation homework essay recipe playlist podcast
""".split()

VERBS = """
buy call check clean cook email fix fold grab hang lock mail move order pack paint pay
pick plan print read renew repair return send sign sort text update wash water wrap
bake book bring cancel charge collect confirm copy deliver drop feed fill finish fetch
file find install label load measure mend polish post prepare recycle refill register
replace reply rinse scan schedule sell share sharpen shred stack submit sweep test tidy
trim unpack upload visit weigh wipe write
""".split()

ADJECTIVES = """
old new big small red blue green yellow black white silver golden quiet loud bright dark
warm cold fresh spicy sweet sour happy lazy brave calm clever gentle wild tiny huge
lucky rusty shiny soft hard heavy light empty full early late broken hidden secret
simple strange frozen sunny rainy windy misty purple orange pink electric velvet
crystal midnight morning summer winter autumn spring northern southern ancient modern
little second final last first extra spare weekly monthly daily urgent
""".split()

CONNECT = ["and", "with", "for", "from", "to", "in", "on", "at", "of", "the", "my", "our", "a"]

ONSETS = ["b", "br", "c", "ch", "d", "dr", "f", "g", "gr", "h", "j", "k", "kr", "l", "m", "n",
          "p", "pr", "r", "s", "sh", "st", "t", "tr", "v", "w", "z", ""]
VOWELS = ["a", "e", "i", "o", "u", "ai", "ea", "ie", "oo", "ou", "y"]
CODAS = ["", "", "", "n", "r", "l", "s", "th", "m", "k", "x", "nd", "rt", "ck"]

WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]
PARTS = ["morning", "afternoon", "evening", "night"]


# Share of nouns and adjectives drawn from words.txt (~11,600 dictionary words) instead of the
# short lists above (`datagen.py --wide-words`, phase 21). The models up to phase 20 copy the
# words they were trained on and garble unfamiliar ones, so this trains copying itself.
# At 0 no extra random number is drawn, so earlier data reproduces byte for byte.
WIDE_SHARE = 0.0
_WIDE = []


def _wide_words():
    if not _WIDE:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "words.txt")
        with open(path, encoding="utf-8") as handle:
            _WIDE.extend(w for w in handle.read().split("\n") if w and not w.startswith("#"))
    return _WIDE


# Share of open-ended words built from the tokenizer's own pieces (`datagen.py --vocab-words`,
# phase 24). The tokenizer was trained on the phase-1 corpus, so ~1,800 of its 4,000 pieces never
# occur in later training data; their (tied) embeddings stay at initialisation and the model
# garbles any user word that tokenises into them ("Marketing offsite" -> "Mketing"). Drawing
# pieces uniformly gives every piece the same exposure, as input and as copied output.
VOCAB_SHARE = 0.0
_VOCAB = {"starts": [], "tails": []}


def load_vocab_words(tokenizer_path):
    """Split the tokenizer's letter-only pieces into word starts ('▁offsite') and word tails ('ting')."""
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=tokenizer_path)
    for i in range(sp.get_piece_size()):
        if sp.is_control(i) or sp.is_unknown(i) or sp.is_byte(i) or sp.is_unused(i):
            continue
        piece = sp.id_to_piece(i)
        text = piece.replace("\u2581", " ")
        if sum(ch.isalpha() for ch in text) < 2 or not all(ch.isalpha() or ch in " '-" for ch in text):
            continue
        if piece.startswith("\u2581"):
            _VOCAB["starts"].append(" ".join(text.split()))
        elif " " not in text:
            _VOCAB["tails"].append(text)
    if not _VOCAB["starts"] or not _VOCAB["tails"]:
        raise SystemExit(f"{tokenizer_path}: no word-like pieces")
    return len(_VOCAB["starts"]), len(_VOCAB["tails"])


def vocab_word(rng):
    """A word start piece, or a tail piece glued to a one-word start so it tokenises as a tail."""
    if rng.random() < 0.5:
        return rng.choice(_VOCAB["starts"])
    head = rng.choice(_VOCAB["starts"]).split()[-1]
    return head + rng.choice(_VOCAB["tails"])


def _word(rng, pool):
    if VOCAB_SHARE or WIDE_SHARE:
        r = rng.random()
        if r < VOCAB_SHARE:
            return vocab_word(rng)
        if r < VOCAB_SHARE + WIDE_SHARE:
            return rng.choice(_wide_words())
    return rng.choice(pool)


# Whether the verbs that open tasks, reminders and word runs also go through the wide and
# vocabulary pools (`datagen.py --wide-verbs`, phase 26). Values start with these verbs, and a
# value's first word tokenises without its leading space in the answer ('"title":"' 'p' 'ick')
# but with it in the query ('▁pick'), so each opening word must be learnt in both spellings;
# ~100 listed verbs teach that for ~100 words only. Off: earlier data reproduces byte for byte.
WIDE_VERBS = False


def verb(rng):
    return _word(rng, VERBS) if WIDE_VERBS else rng.choice(VERBS)


def noun(rng):
    return _word(rng, NOUNS)


def adjective(rng):
    return _word(rng, ADJECTIVES)


def name_word(rng):
    """An invented capitalised name, two or three random syllables (or a vocabulary word)."""
    if VOCAB_SHARE and rng.random() < VOCAB_SHARE:
        word = vocab_word(rng).split()[0]
        return word[:1].upper() + word[1:]
    word = "".join(rng.choice(ONSETS) + rng.choice(VOWELS) + rng.choice(CODAS)
                   for _ in range(rng.choice([1, 2, 2, 3])))
    return word[:1].upper() + word[1:] if len(word) > 1 else name_word(rng)


def person(rng):
    return f"{name_word(rng)} {name_word(rng)}" if rng.random() < 0.7 else name_word(rng)


# Share of word runs given one code-like word ('QX7PLM', 'B12', '#4471'; `datagen.py --codes`,
# phase 39). Up to phase 38 a code inside a copied value derails the copy: its pieces are rare
# and the model continues with training text instead. At 0 no extra random number is drawn.
CODE_SHARE = 0.0


def code(rng):
    """An identifier as users type one: 'QX7PLM', 'B12', 'A4-771', '#4471', 'ZK9'."""
    upper, digits = "ABCDEFGHJKLMNPQRSTUVWXYZ", "0123456789"
    r = rng.random()
    if r < 0.4:
        return "".join(rng.choice(upper + digits) for _ in range(rng.randint(4, 8)))
    if r < 0.6:
        return rng.choice(upper) + str(rng.randint(1, 999))
    if r < 0.75:
        return f"{rng.choice(upper)}{rng.randint(1, 9)}-{rng.randint(10, 9999)}"
    if r < 0.9:
        return "#" + str(rng.randint(100, 99999))
    return "".join(rng.choice(upper) for _ in range(rng.randint(2, 3))) + str(rng.randint(1, 99))


def words(rng, lo=1, hi=5):
    """A random run of common words, occasionally with a connective, a name or a code inside."""
    out = []
    for _ in range(rng.randint(lo, hi)):
        r = rng.random()
        if r < 0.35:
            out.append(noun(rng))
        elif r < 0.55:
            out.append(adjective(rng))
        elif r < 0.7:
            out.append(verb(rng))
        elif r < 0.9:
            out.append(rng.choice(CONNECT))
        else:
            out.append(name_word(rng))
    while len(out) > 1 and out[-1] in CONNECT:  # no dangling 'and'/'the' at the end
        out.pop()
    if out[0] in CONNECT[:8]:
        out[0] = noun(rng)
    if CODE_SHARE and rng.random() < CODE_SHARE:
        out.insert(rng.randint(0, len(out)), code(rng))
    return " ".join(out)


def title_case(text):
    return " ".join(w[:1].upper() + w[1:] for w in text.split())


def verb_phrase(rng):
    """Something to do: 'send the blue invoice to Marek', or plain random words."""
    r = rng.random()
    if r < 0.35:
        return words(rng, 1, 5)
    obj = " ".join(adjective(rng) for _ in range(rng.randint(0, 1)))
    obj = (obj + " " + noun(rng)).strip()
    phrase = f"{verb(rng)} {rng.choice(['the', 'my', 'a', 'our', 'the', ''])} {obj}".replace("  ", " ")
    if rng.random() < 0.35:
        phrase += f" {rng.choice(['for', 'with', 'to', 'from', 'at'])} {rng.choice([name_word(rng), 'the ' + noun(rng)])}"
    return phrase


def _hour12(rng):
    h = rng.randint(1, 12)
    suffix = rng.choice(["am", "pm", " am", " pm", "pm", "am", " a.m.", " p.m.", "PM", "AM"])
    if rng.random() < 0.5:
        return f"{h}:{rng.randint(0, 59):02d}{suffix}"
    return f"{h}{suffix}"


def clock(rng):
    """A clock time: '7:40am', '19:05', 'noon', 'half past 3'."""
    r = rng.random()
    if r < 0.55:
        return _hour12(rng)
    if r < 0.8:
        return f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}" if rng.random() < 0.6 \
            else f"{rng.randint(0, 23)}:{rng.choice([0, 15, 30, 45, rng.randint(0, 59)]):02d}"
    if r < 0.9:
        return f"{rng.choice(['half past', 'quarter past', 'quarter to'])} {rng.randint(1, 12)}"
    return rng.choice(["noon", "midnight", str(rng.randint(1, 12))])


def day(rng):
    r = rng.random()
    if r < 0.2:
        return rng.choice(["today", "tomorrow", "tonight", "the day after tomorrow", "this weekend"])
    if r < 0.5:
        return rng.choice(["on ", "next ", "this ", ""]) + rng.choice(WEEKDAYS)
    if r < 0.75:
        d = rng.randint(1, 31)
        return rng.choice([f"on {rng.choice(MONTHS)} {d}", f"{rng.choice(MONTHS)} {d}",
                           f"on the {ordinal(d)}", f"on {rng.choice(MONTHS)} {ordinal(d)}",
                           f"{d} {rng.choice(MONTHS)}"])
    return rng.choice(["next week", "next month", "this week", "on the weekend", "in the morning"])


def ordinal(n):
    tail = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{tail}"


def relative(rng):
    n = rng.choice([rng.randint(2, 9), rng.randint(10, 59), rng.randint(2, 120)])
    unit = rng.choice(["minutes", "minutes", "mins", "hours", "days", "weeks", "seconds"])
    return rng.choice([f"in {n} {unit}", f"in {n} {unit}", "in an hour", "in half an hour",
                       f"{n} {unit} from now", "in a few minutes", f"in {n} min"])


def when(rng):
    """A date/time phrase as a user says it: 'next Tuesday at 3pm', 'at 7:40am', 'in 25 minutes'."""
    r = rng.random()
    if r < 0.25:
        return "at " + clock(rng)
    if r < 0.5:
        return f"{day(rng)} at {clock(rng)}"
    if r < 0.6:
        return f"at {clock(rng)} {day(rng)}"
    if r < 0.7:
        return f"{rng.choice(['tomorrow', 'this', 'on ' + rng.choice(WEEKDAYS), rng.choice(WEEKDAYS)])} {rng.choice(PARTS)}"
    if r < 0.85:
        return relative(rng)
    return day(rng)


# Share of timer lengths said in words ('a quarter of an hour', 'two and a half minutes';
# `datagen.py --spoken-durations`, phase 39). Up to phase 38 the model snaps such a length onto a
# trained one ('half an hour' -> 'an hour'). At 0 no extra random number is drawn.
SPOKEN_DURATIONS = 0.0
_NUMBER_WORDS = ("one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
                 "fifteen sixteen seventeen eighteen nineteen twenty").split()


def spoken_duration(rng):
    """A length in words: 'half a minute', 'three quarters of an hour', 'ten and a half minutes'."""
    n = rng.randint(1, 20)
    count = rng.choice([str(n), _NUMBER_WORDS[n - 1]])
    unit = rng.choice(["minutes", "hours", "seconds"]) if n > 1 else rng.choice(["minute", "hour", "second"])
    return rng.choice([
        f"{count} {unit}", f"{count} and a half {unit.rstrip('s')}s",
        f"half a {rng.choice(['minute', 'second'])}", "a quarter of an hour", "three quarters of an hour",
        f"a {rng.choice(['minute', 'second'])} and a half", f"an hour and a {rng.choice(['half', 'quarter'])}",
        f"a couple of {rng.choice(['minutes', 'hours', 'seconds'])}", f"a few {rng.choice(['minutes', 'seconds'])}",
        f"{count} {unit} and {rng.choice(['a half', 'a quarter', str(rng.randint(1, 59)) + ' minutes'])}",
    ])


def duration(rng):
    """A timer length or end time: '45 minutes', '1 hour and 20 minutes', 'at 13:30'."""
    if SPOKEN_DURATIONS and rng.random() < SPOKEN_DURATIONS:
        return spoken_duration(rng)
    r = rng.random()
    n = rng.choice([rng.randint(1, 9), rng.randint(10, 99), rng.randint(1, 59), rng.randint(100, 300)])
    if r < 0.4:
        return f"{n} {rng.choice(['minutes', 'minutes', 'mins', 'min', 'minute' if n == 1 else 'minutes'])}"
    if r < 0.55:
        return f"{n} {rng.choice(['seconds', 'secs', 'seconds'])}"
    if r < 0.68:
        h = rng.randint(1, 12)
        return f"{h} {'hour' if h == 1 else rng.choice(['hours', 'hrs'])}"
    if r < 0.8:
        h, m = rng.randint(1, 5), rng.randint(1, 59)
        return rng.choice([f"{h} hour{'s' if h > 1 else ''} and {m} minutes", f"{h}h {m}m",
                           f"{h} hour{'s' if h > 1 else ''} {m} minutes", f"an hour and {m} minutes"])
    if r < 0.9:
        return f"{rng.randint(1, 20)} minutes and {rng.randint(1, 59)} seconds"
    return "at " + clock(rng)


def place(rng):
    """A location: 'Room 4C', 'Dovan's Cafe', 'the old harbor', '12 Maple Street'."""
    r = rng.random()
    if r < 0.2:
        return f"{rng.choice(['Room', 'Building', 'Floor', 'Suite', 'Gate', 'Studio', 'Hall'])} {rng.randint(1, 999)}{rng.choice(['', '', 'A', 'B', 'C'])}"
    if r < 0.4:
        return f"{name_word(rng)}'s {rng.choice(['Cafe', 'Diner', 'Bakery', 'Bar', 'Grill', 'Place', 'Kitchen', 'Office'])}"
    if r < 0.55:
        return f"{rng.randint(1, 999)} {name_word(rng)} {rng.choice(['Street', 'Road', 'Avenue', 'Lane', 'Drive'])}"
    if r < 0.75:
        return f"the {rng.choice(ADJECTIVES + [''])} {noun(rng)}".replace("  ", " ")
    if r < 0.9:
        return title_case(f"{adjective(rng)} {noun(rng)} {rng.choice(['Park', 'Center', 'Library', 'Hotel', 'Station', 'Club'])}")
    return words(rng, 1, 4)


def title(rng):
    """An event or media title: 'Budget review with Kelo', 'Silver Lantern'."""
    r = rng.random()
    if r < 0.35:
        return title_case(words(rng, 1, 4))
    if r < 0.6:
        return words(rng, 1, 5)
    if r < 0.8:
        return f"{noun(rng)} {rng.choice(['with', 'for', 'at'])} {name_word(rng)}".capitalize()
    return f"{name_word(rng)} {noun(rng)}"


def band(rng):
    r = rng.random()
    if r < 0.5:
        return person(rng)
    if r < 0.8:
        return "The " + title_case(f"{adjective(rng)} {noun(rng)}s")
    return title_case(words(rng, 1, 3))


def music(rng):
    """Something to play: a title, an artist, 'X by Y', or a genre-like phrase."""
    r = rng.random()
    if r < 0.3:
        return title(rng)
    if r < 0.5:
        return f"{title_case(words(rng, 1, 4))} by {band(rng)}"
    if r < 0.75:
        return band(rng)
    if r < 0.87:
        return f"{adjective(rng)} {rng.choice(['jazz', 'rock', 'pop', 'beats', 'piano', 'folk', 'songs', 'music', 'hits', 'soul', 'techno'])}"
    return words(rng, 1, 5)


def note(rng):
    """Note content: random words, sometimes with a number or code inside."""
    text = words(rng, 2, 9)
    if rng.random() < 0.3:
        parts = text.split()
        parts.insert(rng.randint(0, len(parts)), rng.choice([str(rng.randint(1, 9999)), name_word(rng),
                                                            f"{rng.randint(1, 99)}-{rng.randint(1, 99)}"]))
        text = " ".join(parts)
    return text


def reply(rng):
    """A short reply message with casual punctuation."""
    text = words(rng, 1, 6)
    text = text[:1].upper() + text[1:] if rng.random() < 0.5 else text
    return text + rng.choice(["", "", "", "!", ".", "?", "!!", " :)"])


def food(rng):
    qty = rng.choice(["", "", "a ", "two ", "some ", "a bowl of ", "a plate of ", "half a ", "three "])
    dish = f"{rng.choice(ADJECTIVES + [''])} {noun(rng)}".strip()
    if rng.random() < 0.3:
        dish += f" {rng.choice(['with', 'and'])} {noun(rng)}"
    return (qty + dish) if rng.random() < 0.8 else words(rng, 1, 5)


def merchant(rng):
    r = rng.random()
    if r < 0.35:
        return name_word(rng)
    if r < 0.6:
        return f"{name_word(rng)}'s"
    if r < 0.85:
        return title_case(f"{adjective(rng)} {noun(rng)}")
    return f"{name_word(rng)} {rng.choice(['Market', 'Store', 'Co', 'Foods', 'Shop', 'Mart', 'Books'])}"


def label(rng):
    return words(rng, 1, 2) if rng.random() < 0.4 else \
        f"{rng.choice(ADJECTIVES + ['', ''])} {noun(rng)}".strip()


def short_title(rng):
    return title_case(words(rng, 1, 3)) if rng.random() < 0.5 else words(rng, 1, 3)
