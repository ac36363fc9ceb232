"""Generation-agnostic helpers for the reference-fixture generators.

Both `v3_fixtures.py` and the Needle 2 generator import this module, so nothing
here knows about one generation's architecture: jax set-up, the tolerance and
robust-prefix arithmetic, the on-disk fixture format (case.json + raw logits),
SentencePiece training, and the tricky tokenizer corpus.
"""
import io
import json
import os
import time

import numpy as np

# The margin a greedy step needs over its measured movement to count as robust.
ROBUST_FACTOR = 4.0
# Relative size of the weight perturbation used to measure a reference's noise.
PERTURB_REL = 1e-6


def setup_jax():
    """Pin jax to deterministic float32 CPU numerics before anything traces."""
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    jax.config.update("jax_default_matmul_precision", "highest")
    jax.config.update("jax_enable_x64", False)
    return jax


# ----------------------------------------------------------------- tolerances

def row_movement(ref, moved):
    """Largest absolute change of each row, [rows]."""
    return np.max(np.abs(np.asarray(moved, np.float64) - np.asarray(ref, np.float64)), axis=-1)


def relative_tolerance(ref, movement):
    """max over rows of (row movement / max |ref row|)."""
    scale = np.max(np.abs(np.asarray(ref, np.float64)), axis=-1)
    return float(np.max(movement / np.maximum(scale, 1e-30)))


def top2_margins(rows):
    """top-1 minus top-2 logit of each row."""
    part = np.sort(np.asarray(rows, np.float64), axis=-1)
    return part[:, -1] - part[:, -2]


def robust_prefix(margins, movements, factor=ROBUST_FACTOR):
    """Number of leading steps whose margin exceeds `factor` x that step's movement."""
    n = 0
    for margin, move in zip(margins, movements):
        if not margin > factor * move:
            break
        n += 1
    return n


def perturb_tree(tree, seed, rel=PERTURB_REL):
    """Every float leaf times (1 +/- rel), the sign drawn per element from `seed`."""
    import jax
    rng = np.random.RandomState(seed)
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    out = []
    for leaf in leaves:
        a = np.asarray(leaf)
        if np.issubdtype(a.dtype, np.floating):
            sign = rng.randint(0, 2, a.shape).astype(np.float32) * 2 - 1
            a = (a * (1 + rel * sign)).astype(a.dtype)
        out.append(a)
    return jax.tree_util.tree_unflatten(treedef, out)


# ------------------------------------------------------------ fixture output

class F32:
    """A float32 value that the JSON writer prints in its shortest round-trip form."""
    __slots__ = ("v",)

    def __init__(self, v):
        self.v = np.float32(v)


def f32_list(values):
    return [F32(v) for v in np.asarray(values, np.float32).reshape(-1)]


def _scalar(x):
    if isinstance(x, F32):
        if not np.isfinite(x.v):
            raise ValueError("non-finite value in a fixture")
        return str(x.v)
    if isinstance(x, (bool, np.bool_)):
        return "true" if x else "false"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, (float, np.floating)):
        if not np.isfinite(x):
            raise ValueError("non-finite value in a fixture")
        return repr(float(x))
    if x is None:
        return "null"
    return json.dumps(x, ensure_ascii=False)


def _is_scalar(x):
    return not isinstance(x, (dict, list, tuple))


def dumps(obj, indent=0):
    """JSON with one key per line but lists of scalars kept on one line."""
    pad, inner = " " * indent, " " * (indent + 1)
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        items = [f"{inner}{json.dumps(str(k), ensure_ascii=False)}: {dumps(v, indent + 1)}"
                 for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, (list, tuple)):
        if all(_is_scalar(v) for v in obj):
            return "[" + ", ".join(_scalar(v) for v in obj) + "]"
        return "[\n" + ",\n".join(inner + dumps(v, indent + 1) for v in obj) + "\n" + pad + "]"
    return _scalar(obj)


def write_json(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(dumps(obj) + "\n")


def write_logits(folder, mode, rows, dtype):
    """Raw little-endian [rows x cols] file; returns its case.json descriptor."""
    rows = np.asarray(rows, np.float32)
    name = f"logits_{mode}.bin"
    np_dtype = {"f32": "<f4", "f16": "<f2"}[dtype]
    data = rows.astype(np_dtype)
    if not np.all(np.isfinite(data)):
        raise ValueError(f"{mode} logits do not fit {dtype}")
    data.tofile(os.path.join(folder, name))
    return {"file": name, "dtype": dtype, "rows": int(rows.shape[0]), "cols": int(rows.shape[1])}


def mode_stats(rows, moved_rows, prompt_len, greedy, eos_id):
    """Greedy statistics of one numerics mode (case.json's per-mode entry, less
    the logits file).

    rows: reference logits over prompt_ids ++ greedy; moved_rows: the same
    forward with perturbed weights (a list, one array per perturbation seed).
    """
    rows = np.asarray(rows, np.float32)
    movement = np.max([row_movement(rows, m) for m in moved_rows], axis=0)
    steps = np.arange(len(greedy)) + prompt_len - 1
    margins = top2_margins(rows[steps])
    step_moves = movement[steps]
    if [int(t) for t in np.argmax(rows[steps], axis=-1)] != list(greedy):
        raise AssertionError("greedy tokens are not the argmax of their rows")
    return {
        "greedy": [int(t) for t in greedy],
        "ended_with_eos": bool(greedy and greedy[-1] == eos_id),
        "last_row_index": int(rows.shape[0] - 1),
        "last_row": f32_list(rows[-1]),
        "tolerance": relative_tolerance(rows, movement),
        "max_movement": float(np.max(movement)),
        "robust_prefix": robust_prefix(margins, step_moves),
        "margins": [float(m) for m in margins],
        "movements": [float(m) for m in step_moves],
    }


def mode_record(rows, moved_rows, prompt_len, greedy, eos_id, dtype, folder, mode):
    """mode_stats plus the logits file written into `folder`."""
    stats = mode_stats(rows, moved_rows, prompt_len, greedy, eos_id)
    logits = write_logits(folder, mode, rows, dtype)
    return {"greedy": stats.pop("greedy"), "ended_with_eos": stats.pop("ended_with_eos"),
            "logits": logits, **stats}


# ------------------------------------------------------------- tokenizer

def train_sentencepiece(sentences, vocab_size, user_symbols, add_dummy_prefix=False,
                        pad_id=0, eos_id=1, bos_id=2, unk_id=3):
    """A small byte-fallback BPE with the given special ids; returns the model bytes.

    Identity normalisation, whitespace kept as is, scripts not split apart
    (tool JSON then takes about half the tokens).
    """
    import sentencepiece as spm
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences), model_writer=model,
        model_type="bpe", vocab_size=vocab_size,
        pad_id=pad_id, eos_id=eos_id, bos_id=bos_id, unk_id=unk_id,
        pad_piece="<pad>", eos_piece="</s>", bos_piece="<s>", unk_piece="<unk>",
        user_defined_symbols=list(user_symbols), byte_fallback=True,
        normalization_rule_name="identity", remove_extra_whitespaces=False,
        add_dummy_prefix=add_dummy_prefix, split_by_unicode_script=False,
        character_coverage=1.0, num_threads=1, shuffle_input_sentence=False,
        input_sentence_size=0, max_sentence_length=1 << 16,
        minloglevel=2)
    return model.getvalue()


def load_sentencepiece(model_bytes):
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor()
    sp.LoadFromSerializedProto(model_bytes)
    return sp


# Strings chosen to break tokenizers: whitespace runs, control characters,
# scripts the training corpus never saw (byte fallback), emoji sequences,
# markers inline or broken, text that looks like special or byte pieces, the
# meta-space character itself and very long words.
TRICKY_STRINGS = [
    "Hello, world!",
    "",
    " ",
    "   ",
    "  leading spaces",
    "trailing spaces   ",
    "multiple   inner    spaces",
    "\n",
    "\t",
    "line one\nline two\n\nline four",
    "tab\tseparated\tvalues\t",
    "windows\r\nline ending",
    " \t \n mixed \n\t whitespace \t ",
    "héllo wörld, naïve café",
    "Ünïcödé ÀÉÎÕÜ ß ø å",
    "e\u0301 vs \u00e9 (combining vs precomposed)",
    "ﬁ ligature and ＦＵＬＬＷＩＤＴＨ letters",
    "東京タワーの高さは何メートルですか？",
    "你好，世界！今天天气很好。",
    "한국어 텍스트 예시",
    "Привет, как дела?",
    "مرحبا بالعالم",
    "שלום עולם",
    "नमस्ते दुनिया",
    "สวัสดีครับ",
    "∑ ∫ √ ∞ ≤ ≥ ≠ ± × ÷",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝕞𝕒𝕥𝕙",
    "🙂",
    "👍🏽 thumbs up with skin tone",
    "👨‍👩‍👧‍👦 family emoji with zero width joiners",
    "🇫🇷🇯🇵 flags",
    "zero\u200bwidth\u200bspace and \ufeffbyte order mark",
    "bell\x07 escape\x1b[31mred\x1b[0m",
    "<|im_start|>user\nturn on the lights<|im_end|>\n<|im_start|>assistant\n",
    "<tool_call>[{\"name\":\"f\",\"arguments\":{}}]</tool_call><|im_end|>",
    "before<think>reasoning</think>after",
    "<tools><tools></tools></tools>",
    "<|im_start|><|im_end|><|im_start|>",
    "broken markers: <|im_start <tool_call </tools <<tools>> <|im_end|",
    "<context>ctx</context><extract>x</extract><schema>{}</schema>",
    "<tool_result>{\"ok\":true}</tool_result>",
    "looks special: <s> </s> <pad> <unk> <0x41>",
    "meta▁space▁inside and ▁ alone",
    "a" * 100,
    "supercalifragilisticexpialidocious" * 3,
    "1234567890" * 6,
    "https://example.com/a/very/long/path?with=query&and=params#fragment",
    "{\"name\":\"set_temperature\",\"arguments\":{\"room\":\"living room\",\"value\":21.5}}",
    "[{\"name\":\"get_weather\",\"description\":\"Météo à Paris\",\"parameters\":{}}]",
    "CamelCaseIdentifierWithoutSpaces_and_snake_case_too",
    "punctuation!!! ??? ... --- *** ### @@@",
    "quotes \"double\" 'single' `back` «guillemets» „low“",
]


def check_tokenizer(sp, ref, texts):
    """Encode each text with the reference encoder and SentencePiece.

    Returns corpus records ({"text", "ids", "decoded", "matches_sentencepiece"})
    and the texts where the two encoders disagree.
    """
    cases, mismatches = [], []
    for text in texts:
        ids = [int(i) for i in ref.encode(text)]
        sp_ids = [int(i) for i in sp.Encode(text, out_type=int)]
        agree = ids == sp_ids
        if not agree:
            mismatches.append({"text": text, "ref": ids, "sentencepiece": sp_ids})
        cases.append({"text": text, "ids": ids, "decoded": ref.decode(ids),
                      "matches_sentencepiece": agree})
    return cases, mismatches



# Tool schemas shared by the tokenizer corpus and the fixture prompts. Plain
# Python data: the fixtures store their own exact JSON text.
CORPUS_TOOLS = [
    {"name": "set_temperature", "description": "Set the thermostat of a room",
     "parameters": {"type": "object", "properties": {
         "room": {"type": "string", "description": "Room name"},
         "value": {"type": "number", "description": "Target temperature in Celsius"}},
         "required": ["room", "value"]}},
    {"name": "turn_on_lights", "description": "Switch the lights on in a room",
     "parameters": {"type": "object", "properties": {
         "room": {"type": "string"}, "brightness": {"type": "integer"}},
         "required": ["room"]}},
    {"name": "get_weather", "description": "Current weather for a city",
     "parameters": {"type": "object", "properties": {
         "city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
         "required": ["city"]}},
    {"name": "send_message", "description": "Send a text message to a contact",
     "parameters": {"type": "object", "properties": {
         "to": {"type": "string"}, "body": {"type": "string"}}, "required": ["to", "body"]}},
    {"name": "play_music", "description": "Play a song, artist or playlist",
     "parameters": {"type": "object", "properties": {
         "query": {"type": "string"}, "shuffle": {"type": "boolean"}}, "required": ["query"]}},
    {"name": "set_timer", "description": "Start a countdown timer",
     "parameters": {"type": "object", "properties": {
         "minutes": {"type": "integer"}, "label": {"type": "string"}}, "required": ["minutes"]}},
]

_ROOMS = ["kitchen", "living room", "bedroom", "office", "garage", "bathroom"]
_CITIES = ["Paris", "Tokyo", "New York", "Berlin", "São Paulo", "Zürich", "Kraków"]
_PEOPLE = ["Alice", "Bob", "Chloé", "Dmitri", "Eun-ji", "François"]
_SONGS = ["Clair de Lune", "Bohemian Rhapsody", "Take Five", "Für Elise"]
_PROSE = [
    "The quick brown fox jumps over the lazy dog.",
    "Please remind me to water the plants tomorrow morning.",
    "What time is it in Tokyo right now?",
    "Il fait beau aujourd'hui, n'est-ce pas ? Très agréable.",
    "Der Kühlschrank ist leer; wir müssen einkaufen gehen.",
    "¿Dónde está la estación de tren más cercana?",
    "Mañana lloverá en Barcelona y en Sevilla.",
    "東京は今日晴れです。",
    "请把客厅的灯打开。",
    "Numbers: 0 1 2 3 4 5 6 7 8 9 10 12.5 -3 100 2024",
    "Email me at someone@example.com before 5:30 pm.",
    "I can't do that, but I can set a timer for you.",
]


def tokenizer_corpus(render):
    """Deterministic training sentences: rendered tool-calling examples (markers
    inline), bare tool JSON and some multilingual prose. `render(example)`
    returns (prompt, target) like upstream's finetune.render_example."""
    compact = lambda x: json.dumps(x, separators=(",", ":"), ensure_ascii=False)
    rng = np.random.RandomState(1234)
    out = list(_PROSE)
    for tool in CORPUS_TOOLS:
        out.append(compact(tool))
        out.append(json.dumps(tool, indent=2, ensure_ascii=False))
    for i in range(240):
        room = _ROOMS[rng.randint(len(_ROOMS))]
        city = _CITIES[rng.randint(len(_CITIES))]
        person = _PEOPLE[rng.randint(len(_PEOPLE))]
        song = _SONGS[rng.randint(len(_SONGS))]
        value = int(rng.randint(15, 28))
        minutes = int(rng.randint(1, 90))
        choices = [
            (f"Set the {room} to {value} degrees",
             [{"name": "set_temperature", "arguments": {"room": room, "value": value}}]),
            (f"Turn on the lights in the {room}",
             [{"name": "turn_on_lights", "arguments": {"room": room}}]),
            (f"What's the weather like in {city}?",
             [{"name": "get_weather", "arguments": {"city": city}}]),
            (f"Text {person} that I'll be late",
             [{"name": "send_message", "arguments": {"to": person, "body": "I'll be late"}}]),
            (f"Play {song} on shuffle",
             [{"name": "play_music", "arguments": {"query": song, "shuffle": True}}]),
            (f"Set a timer for {minutes} minutes",
             [{"name": "set_timer", "arguments": {"minutes": minutes}}]),
            ("Tell me a joke about penguins", []),
        ]
        query, answers = choices[i % len(choices)]
        k = 1 + rng.randint(len(CORPUS_TOOLS))
        tools = [CORPUS_TOOLS[j] for j in sorted(rng.permutation(len(CORPUS_TOOLS))[:k])]
        example = {"query": query, "tools": tools, "answers": answers}
        if i % 5 == 0:
            example["reasoning"] = f"The user asked: {query.lower()}."
        if i % 7 == 0:
            example["system"] = "You are a helpful home assistant."
        prompt, target = render(example)
        out.append(prompt + target)
    return out

# ----------------------------------------------------------------- misc

class Clock:
    """Wall-time checkpoints for the run log."""

    def __init__(self):
        self.start = time.time()

    def __call__(self, what):
        print(f"  [{time.time() - self.start:7.1f}s] {what}", flush=True)


def folder_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    return total
