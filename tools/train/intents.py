"""Intents of the six environments: phrasings, slots and the calls they mean.

Written from each tool's schema and description only (never from the acceptance
queries). An intent has verb-first phrasings (`imp`, also used to build negated
requests), other phrasings (`alt`), phrasings that leave out a required value
(`missing`, answered with no call), and slots. A slot may also offer invalid values
(outside the enum or the bounds): those requests are answered with no call too.
"""
import compose as C
import slots as S

# "curated": values only from the hand-written lists in slots.py (the phase-1/2 data).
# "mixed": free text mostly from compose.py's open-ended builders, numbers balanced over
# digit lengths, extra enum phrasings (set by datagen.py --values).
VALUES = "curated"
OPEN_SHARE = 0.6
# Share of hand-written free-text values given a one-word edit (`datagen.py --near-miss`,
# phase 35). Up to phase 34 the model copies invented word salad well but snaps unseen
# natural values onto the training values they resemble ("Marketing offsite" -> "Marketing s",
# "pick a paint color" -> "pick a paint"): each hand-written value recurs thousands of times.
# A near miss keeps the value natural but new, so only copying gets it right. At 0 no extra
# random number is drawn, so earlier data reproduces byte for byte.
NEAR_MISS = 0.0
# The same for hand-written contact names (`datagen.py --name-miss`, phase 36): "Priya Sharma",
# held out, came back as "Sharma".
NAME_MISS = 0.0


def _mixed():
    return VALUES == "mixed"


# ---------------------------------------------------------------- slot kinds

def _split_pool(pool, split):
    """Deterministic value split: every 8th pool item is validation-only."""
    keep = [v for i, v in enumerate(pool) if (i % 8 == 7) == (split == "val")]
    return keep or list(pool)


class Enum:
    """A closed set: each value is drawn uniformly (rare values as often as common ones)."""

    def __init__(self, words, bad=(), more=None):
        self.words = words if isinstance(words, dict) else {w: [w] for w in words}
        self.bad_words = list(bad)
        self.more = more or {}  # extra phrasings per value, used in mixed mode only

    def draw(self, rng, split):
        value = rng.choice(sorted(self.words))
        surfaces = self.words[value] + (self.more.get(value, []) if _mixed() else [])
        return rng.choice(surfaces), value

    def bad(self, rng, split):
        return rng.choice(_split_pool(self.bad_words, split)) if self.bad_words else None


def _like(word, model):
    return word[:1].upper() + word[1:] if model[:1].isupper() else word


def near_miss(value, rng, pool):
    """`value` with one word replaced, inserted or dropped, or spliced with another pool value."""
    words = value.split(" ")
    i = rng.randrange(len(words))
    new = rng.choice([C.noun, C.adjective, C.verb])(rng)
    r = rng.random()
    if r < 0.4:
        words[i] = _like(new, words[i])
    elif r < 0.7:
        at = i + rng.randint(0, 1)
        words.insert(at, _like(new, words[0]) if at == 0 else new)
    elif r < 0.85 and len(words) > 2:
        del words[i]
    else:
        other = rng.choice(pool).split(" ")
        words = words[:max(1, len(words) // 2)] + other[len(other) // 2:]
    return " ".join(words)


class Text:
    """Free text copied verbatim into the call. `edits`: hand-written values may be near-missed
    (off for values whose words carry meaning, like time phrases)."""

    def __init__(self, pool, build=None, edits=True):
        self.pool, self.build, self.edits = pool, build, edits

    def draw(self, rng, split):
        if self.build is not None and _mixed() and rng.random() < OPEN_SHARE:
            value = self.build(rng)
        else:
            pool = _split_pool(self.pool, split)
            value = rng.choice(pool)
            if NEAR_MISS and self.edits and rng.random() < NEAR_MISS:
                value = near_miss(value, rng, pool)
        return value, value

    def bad(self, rng, split):
        return None


_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
          "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
          "eighteen", "nineteen"]
_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def number_words(n):
    if n < 20:
        return _WORDS[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else "-" + _WORDS[n % 10])
    return str(n)


def balanced_int(rng, lo, hi):
    """Uniform over the digit lengths present in [lo, hi], then uniform within one."""
    spans = []
    for digits in range(1, len(str(hi)) + 1):
        a, b = max(lo, 0 if digits == 1 else 10 ** (digits - 1)), min(hi, 10 ** digits - 1)
        if a <= b:
            spans.append((a, b))
    a, b = rng.choice(spans)
    return rng.randint(a, b)


class Num:
    """A bounded integer. `forms` are surface patterns around the digits; `bad_ranges`
    are values just outside the bounds (and implausible units) that must be refused."""

    def __init__(self, lo, hi, forms=("{n}",), bad_ranges=(), words=False, round_to=5):
        self.lo, self.hi, self.forms = lo, hi, forms
        self.bad_ranges, self.words, self.round_to = bad_ranges, words, round_to

    def _value(self, rng):
        if _mixed() and rng.random() < 0.5:
            return balanced_int(rng, self.lo, self.hi)
        if rng.random() < 0.45 and self.hi - self.lo >= 4 * self.round_to:
            lo = -(-self.lo // self.round_to)
            return rng.randint(lo, self.hi // self.round_to) * self.round_to
        if rng.random() < 0.08:
            return rng.choice([self.lo, self.hi])
        return rng.randint(self.lo, self.hi)

    def _surface(self, rng, n):
        digits = number_words(n) if self.words and n < 100 and rng.random() < 0.06 else str(n)
        return rng.choice(self.forms).format(n=digits)

    def draw(self, rng, split):
        n = self._value(rng)
        return self._surface(rng, n), n

    def bad(self, rng, split):
        if not self.bad_ranges:
            return None
        lo, hi = rng.choice(self.bad_ranges)
        return rng.choice(self.forms).format(n=rng.randint(lo, hi))


class Custom:
    """A slot whose surface and value come from a function (unit conversions, literals)."""

    def __init__(self, draw, bad=None):
        self._draw, self._bad = draw, bad

    def draw(self, rng, split):
        return self._draw(rng, split)

    def bad(self, rng, split):
        return self._bad(rng, split) if self._bad else None


def open_or(draw, build, redraw=None):
    """A Custom draw that, in mixed mode, mostly takes an open-ended value instead (built again
    while `redraw(value, split)` says so)."""
    def choose(rng, split):
        if _mixed() and rng.random() < OPEN_SHARE:
            value = build(rng)
            while redraw is not None and redraw(value, split):
                value = build(rng)
            return value, value
        return draw(rng, split)
    return choose


class Lit:
    """A JSON number written exactly as the user wrote it (e.g. 12.50)."""

    def __init__(self, text):
        self.text = text

    def __eq__(self, other):
        return isinstance(other, Lit) and other.text == self.text

    def __hash__(self):
        return hash(self.text)


class Intent:
    def __init__(self, env, name, imp, alt=(), missing=(), slots=None, calls=None):
        self.env, self.name = env, name
        self.imp, self.alt, self.missing = list(imp), list(alt), list(missing)
        self.slots = slots or {}
        self.calls = calls

    def templates(self, split, kinds=("imp", "alt")):
        """Every 8th phrasing of each list is validation-only (held out by template)."""
        out = []
        for kind in kinds:
            out += [(kind, t) for t in _split_pool(getattr(self, kind), split)]
        return out


def call(tool, **args):
    return {"name": tool, "arguments": {k: v for k, v in args.items() if v is not None}}


# ---------------------------------------------------------------- smart_home

ROOM = Enum(S.ROOM_WORDS, S.BAD_ROOMS)
FAN_ROOM = Enum({k: v for k, v in S.ROOM_WORDS.items() if k != "kitchen"},
                ["kitchen"] + S.BAD_ROOMS)
VAC_ROOM = Enum({k: v for k, v in S.ROOM_WORDS.items() if k != "study"},
                ["study"] + S.BAD_ROOMS)
PCT = Num(0, 100, ("{n}%", "{n} percent", "{n}", "{n} %"), [(101, 250)], words=True)
TEMP = Num(10, 30, ("{n}", "{n} degrees", "{n}°C", "{n} degrees celsius", "{n}°", "{n} C"),
           [(31, 45), (0, 9), (60, 85)], words=True, round_to=1)

SMART_HOME = [
    Intent("smart_home", "lights_on",
           ["turn on the {room} lights", "turn the {room} lights on", "switch on the lights in the {room}",
            "switch the {room} light on", "put the {room} lights on", "light up the {room}",
            "power on the {room} lights", "turn on the light in the {room}", "get the {room} lights on",
            "flip on the {room} lights", "switch on the {room} lights", "turn the lights on in the {room}",
            "activate the lights in the {room}", "bring the {room} lights on", "turn on the {room} light"],
           ["lights on in the {room}", "{room} lights on", "I need the lights on in the {room}",
            "it's dark in the {room}, turn the lights on", "can the {room} lights come on",
            "the {room} lights should be on", "{room} lights, on", "I want the {room} lights on"],
           ["turn on the lights", "switch the lights on", "lights on", "turn on the light"],
           {"room": ROOM}, lambda v: [call("control_lights", room=v["room"], action="on")]),
    Intent("smart_home", "lights_off",
           ["turn off the {room} lights", "switch off the lights in the {room}", "kill the lights in the {room}",
            "shut off the {room} lights", "turn the {room} lights off", "cut the lights in the {room}",
            "power down the {room} lights", "switch the {room} light off", "turn off the light in the {room}",
            "shut the lights off in the {room}", "turn the lights off in the {room}", "switch off the {room} lights"],
           ["lights off in the {room}", "{room} lights off", "I'm leaving the {room}, turn the lights off",
            "the {room} lights should be off", "no lights in the {room} please, switch them off",
            "{room} lights, off"],
           ["turn off the lights", "switch the lights off", "lights off", "kill the lights"],
           {"room": ROOM}, lambda v: [call("control_lights", room=v["room"], action="off")]),
    Intent("smart_home", "lights_dim_to",
           ["dim the {room} lights to {pct}", "dim the lights in the {room} to {pct}",
            "set the {room} lights to {pct}", "bring the {room} lights down to {pct}",
            "lower the {room} lights to {pct}", "set the brightness in the {room} to {pct}",
            "make the {room} lights {pct}", "turn the {room} lights down to {pct}",
            "adjust the {room} lighting to {pct} brightness", "put the lights in the {room} at {pct}",
            "dim the {room} to {pct}", "set the {room} light brightness to {pct}",
            "change the {room} lights to {pct} brightness"],
           ["{room} lights at {pct}", "{room} brightness {pct}", "I'd like the {room} lights at {pct}",
            "can the {room} lights go to {pct}", "{room} lights to {pct} please"],
           ["dim the lights to {pct}", "set the lights to {pct}", "set the brightness to {pct}",
            "lights at {pct}"],
           {"room": ROOM, "pct": PCT},
           lambda v: [call("control_lights", room=v["room"], action="dim", brightness_percent=v["pct"])]),
    Intent("smart_home", "lights_dim",
           ["dim the {room} lights", "dim the lights in the {room}", "lower the lights in the {room}",
            "turn the {room} lights down", "make the {room} lights dimmer", "dim the {room}",
            "turn down the lights in the {room}", "dim the light in the {room}"],
           ["the {room} is too bright, dim the lights", "{room} lights dimmer please",
            "can you dim the {room} lights"],
           ["dim the lights", "make the lights dimmer", "turn the lights down a bit"],
           {"room": ROOM}, lambda v: [call("control_lights", room=v["room"], action="dim")]),
    Intent("smart_home", "lights_color",
           ["turn the {room} lights {color}", "set the {room} lights to {color}",
            "make the lights in the {room} {color}", "change the {room} light color to {color}",
            "switch the {room} lights to {color}", "turn on the {color} lights in the {room}",
            "set the {room} lighting to {color}", "make the {room} lights {color}",
            "change the lights in the {room} to {color}", "turn the lights in the {room} to {color}"],
           ["{color} lights in the {room}", "I want {color} light in the {room}",
            "{room} lights {color} please", "can the {room} lights be {color}"],
           ["make the lights {color}", "set the lights to {color}", "change the light color to {color}"],
           {"room": ROOM, "color": Enum(S.COLORS, S.BAD_COLORS, {"warm white": ["warm-white"], "cool white": ["cool-white"]})},
           lambda v: [call("control_lights", room=v["room"], action="on", color=v["color"])]),
    Intent("smart_home", "thermostat",
           ["set the thermostat to {temp}", "set the temperature to {temp}", "make it {temp} in here",
            "heat the house to {temp}", "change the thermostat to {temp}", "adjust the temperature to {temp}",
            "turn the heat up to {temp}", "cool the house down to {temp}", "put the heating on {temp}",
            "bump the thermostat to {temp}", "keep the house at {temp}", "set the heat to {temp}",
            "change the temperature to {temp}", "raise the thermostat to {temp}",
            "lower the thermostat to {temp}", "turn the thermostat to {temp}"],
           ["thermostat {temp}", "thermostat to {temp}", "I want it {temp} in the house",
            "{temp} on the thermostat please", "can you make the house {temp}",
            "it's cold, set the thermostat to {temp}", "it's too warm, drop the temperature to {temp}",
            "the house should be {temp}"],
           ["set the thermostat", "change the temperature", "adjust the thermostat",
            "turn up the heat", "make it warmer", "lower the temperature a bit"],
           {"temp": TEMP}, lambda v: [call("set_thermostat", temperature=v["temp"])]),
    Intent("smart_home", "fan_on",
           ["turn on the {froom} fan", "switch the fan on in the {froom}", "start the {froom} fan",
            "get the {froom} fan going", "power on the fan in the {froom}", "turn the {froom} fan on",
            "switch on the fan in the {froom}", "run the fan in the {froom}"],
           ["fan on in the {froom}", "{froom} fan on", "I'm hot, turn on the {froom} fan",
            "the {froom} fan should be on"],
           ["turn on the fan", "switch the fan on", "start the fan"],
           {"froom": FAN_ROOM}, lambda v: [call("control_fan", room=v["froom"], action="on")]),
    Intent("smart_home", "fan_speed",
           ["turn on the {froom} fan on {speed}", "set the {froom} fan to {speed}",
            "run the {froom} fan at {speed} speed", "turn the fan in the {froom} on {speed}",
            "start the {froom} fan on {speed}", "put the {froom} fan on {speed} speed",
            "switch on the {froom} fan at {speed}", "turn on the fan in the {froom} at {speed} speed"],
           ["{froom} fan on {speed}", "{froom} fan, {speed} speed", "I want the {froom} fan on {speed}"],
           ["set the fan to {speed}", "turn the fan on {speed}", "fan on {speed}"],
           {"froom": FAN_ROOM, "speed": Enum(S.FAN_SPEEDS, S.BAD_SPEEDS)},
           lambda v: [call("control_fan", room=v["froom"], action="on", speed=v["speed"])]),
    Intent("smart_home", "fan_off",
           ["turn off the {froom} fan", "switch off the fan in the {froom}", "stop the {froom} fan",
            "shut the {froom} fan off", "kill the fan in the {froom}", "power down the {froom} fan",
            "turn the fan off in the {froom}", "switch the {froom} fan off"],
           ["fan off in the {froom}", "{froom} fan off", "it's chilly, turn off the {froom} fan"],
           ["turn off the fan", "switch the fan off", "stop the fan"],
           {"froom": FAN_ROOM}, lambda v: [call("control_fan", room=v["froom"], action="off")]),
    Intent("smart_home", "blinds_open",
           ["open the {room} blinds", "open the blinds in the {room}", "raise the {room} blinds",
            "pull up the blinds in the {room}", "roll up the {room} blinds", "lift the blinds in the {room}",
            "open up the {room} blinds", "put the {room} blinds up"],
           ["{room} blinds up", "{room} blinds open please", "let some light into the {room}, open the blinds",
            "I want the {room} blinds open"],
           ["open the blinds", "raise the blinds", "blinds up"],
           {"room": ROOM}, lambda v: [call("control_blinds", room=v["room"], action="open")]),
    Intent("smart_home", "blinds_close",
           ["close the {room} blinds", "shut the blinds in the {room}", "lower the {room} blinds",
            "pull down the blinds in the {room}", "draw the {room} blinds", "roll down the blinds in the {room}",
            "close the blinds in the {room}", "put the {room} blinds down"],
           ["{room} blinds down", "{room} blinds closed please", "too much sun in the {room}, close the blinds",
            "I want the {room} blinds shut"],
           ["close the blinds", "lower the blinds", "blinds down"],
           {"room": ROOM}, lambda v: [call("control_blinds", room=v["room"], action="close")]),
    Intent("smart_home", "vacuum_start",
           ["start the robot vacuum", "start the vacuum", "run the vacuum", "start vacuuming",
            "vacuum the floors", "begin a cleaning run", "turn on the robot vacuum", "get the vacuum going",
            "run the robot vacuum", "start a vacuum run", "vacuum the house"],
           ["robot vacuum, start cleaning", "time to vacuum, start the robot", "the floors need a vacuum, start it"],
           [], {}, lambda v: [call("start_robot_vacuum", action="start")]),
    Intent("smart_home", "vacuum_room",
           ["vacuum the {vroom}", "start the vacuum in the {vroom}", "clean the {vroom} with the robot vacuum",
            "send the robot vacuum to clean the {vroom}", "run the vacuum in the {vroom}",
            "start a cleaning run in the {vroom}", "have the vacuum clean the {vroom}",
            "start the robot vacuum in the {vroom}", "run the robot vacuum in the {vroom}"],
           ["robot vacuum, clean the {vroom}", "the {vroom} floor is dirty, vacuum it",
            "{vroom} needs vacuuming, start the robot"],
           [], {"vroom": VAC_ROOM},
           lambda v: [call("start_robot_vacuum", action="start", room=v["vroom"])]),
    Intent("smart_home", "vacuum_stop",
           ["stop the vacuum", "stop the robot vacuum", "halt the vacuum", "turn off the robot vacuum",
            "stop vacuuming", "make the vacuum stop", "shut the vacuum off", "stop the cleaning run"],
           ["robot vacuum, stop", "the vacuum is too loud, stop it", "vacuum off"],
           [], {}, lambda v: [call("start_robot_vacuum", action="stop")]),
    Intent("smart_home", "vacuum_dock",
           ["send the vacuum back to its dock", "dock the vacuum", "send the robot vacuum home",
            "return the vacuum to the charger", "send the vacuum to charge", "park the vacuum on its dock",
            "dock the robot vacuum", "return the robot vacuum to its base"],
           ["robot vacuum, go home", "the vacuum should go back and charge", "vacuum back to the dock please"],
           [], {}, lambda v: [call("start_robot_vacuum", action="dock")]),
]

SMART_HOME_UNSUPPORTED = [
    "lock the front door", "turn on the TV", "open the garage door", "water the plants",
    "set an alarm for 7am", "arm the security system", "ring the doorbell", "turn on the sprinklers",
    "open the window", "mop the kitchen floor", "start the washing machine", "feed the cat",
    "is the kitchen light on", "what's the temperature inside", "unlock the back door",
    "turn on the hot tub", "show me the front door camera", "order more vacuum bags",
    "make the bed", "turn on the fireplace", "close the garage", "what's the humidity",
    "preheat the oven to 200", "start the dishwasher", "play some music in the kitchen",
    "schedule the vacuum for every Monday", "how much energy did I use today",
    "turn on the TV in the bedroom", "lock all the doors", "open the curtains on the porch"]

# ---------------------------------------------------------------- media_player

def _music(rng, split):
    kind = rng.random()
    if kind < 0.3:
        song = rng.choice(_split_pool(S.SONGS, split))
        return song, song
    if kind < 0.5:
        value = f"{rng.choice(_split_pool(S.SONGS, split))} by {rng.choice(_split_pool(S.ARTISTS, split))}"
        return value, value
    if kind < 0.75:
        artist = rng.choice(_split_pool(S.ARTISTS, split))
        return artist, artist
    if kind < 0.85:
        album = rng.choice(_split_pool(S.ALBUMS, split))
        return album, album
    genre = rng.choice(_split_pool(S.GENRES, split))
    return genre, genre


MUSIC = Custom(open_or(_music, C.music))
GENRE = Text(S.GENRES, lambda rng: C.music(rng) if rng.random() < 0.3 else
             f"{rng.choice(C.ADJECTIVES)} {rng.choice(['jazz', 'rock', 'pop', 'beats', 'folk', 'soul', 'blues', 'techno'])}")
ARTIST = Text(S.ARTISTS, C.band)
SONG = Text(S.SONGS, C.title)
ALBUM = Text(S.ALBUMS, C.title)
VOLUME = Num(0, 100, ("{n}", "{n}%", "{n} percent", "level {n}"), [(101, 300)], words=True)

MEDIA_PLAYER = [
    Intent("media_player", "play",
           ["play {music}", "put on {music}", "start playing {music}", "queue up {music}",
            "play {music} for me", "throw on {music}", "blast {music}", "stream {music}",
            "play {music} on the speaker", "put {music} on", "start {music}"],
           ["I want to hear {music}", "let's listen to {music}", "can I get {music}",
            "how about some {music}", "I'm in the mood for {music}", "music time: {music}"],
           ["play music", "play something", "put on a song", "play a song", "start some music",
            "play that song", "put something on"],
           {"music": MUSIC}, lambda v: [call("play_music", query=v["music"])]),
    Intent("media_player", "play_genre",
           ["play some {genre}", "put on some {genre}", "play me some {genre}", "start some {genre}"],
           ["I feel like some {genre}", "some {genre} please", "let's have some {genre}"],
           [], {"genre": GENRE}, lambda v: [call("play_music", query=v["genre"])]),
    Intent("media_player", "play_song",
           ["play the song {song}", "play the track {song}", "put on the song {song}"],
           ["I want to hear the song {song}"], [],
           {"song": SONG}, lambda v: [call("play_music", query=v["song"])]),
    Intent("media_player", "play_album",
           ["play the album {album}", "put on the album {album}", "play {album}, the album"],
           ["I want to listen to the album {album}"], [],
           {"album": ALBUM}, lambda v: [call("play_music", query=v["album"])]),
    Intent("media_player", "play_artist",
           ["play music by {artist}", "play songs by {artist}", "play something by {artist}",
            "put on some {artist}", "play some {artist}"],
           ["anything by {artist} please"], [],
           {"artist": ARTIST}, lambda v: [call("play_music", query=v["artist"])]),
    Intent("media_player", "pause",
           ["pause", "pause the music", "pause this", "pause playback", "pause the song", "pause it",
            "hold the music", "put the music on hold", "pause what's playing", "hit pause",
            "pause the track", "pause the audio", "pause it for a sec", "pause the speaker"],
           ["can you pause it", "music on pause please", "hold on, pause", "wait, pause that",
            "someone's at the door, pause the music"],
           [], {}, lambda v: [call("pause_media")]),
    Intent("media_player", "resume",
           ["resume", "resume the music", "resume playback", "unpause", "continue playing",
            "keep playing", "unpause the music", "carry on with the music", "resume the song",
            "continue the song", "pick up where we left off", "resume what was playing",
            "start the music again", "hit play again"],
           ["ok, you can resume", "back on, resume the music", "music back on please",
            "I'm back, continue the music"],
           [], {}, lambda v: [call("resume_media")]),
    Intent("media_player", "skip",
           ["skip", "skip this song", "skip the track", "skip this one", "skip ahead to the next track",
            "go to the next song", "move on to the next track", "skip to the next song",
            "jump to the next track", "skip the song", "change the song"],
           ["next song", "next track", "next", "I don't like this one, skip it", "not this song, next",
            "this track is boring, skip"],
           [], {}, lambda v: [call("skip_track")]),
    Intent("media_player", "volume",
           ["set the volume to {vol}", "turn the volume to {vol}", "change the volume to {vol}",
            "set volume at {vol}", "put the volume on {vol}", "adjust the volume to {vol}",
            "turn it up to {vol}", "turn it down to {vol}", "lower the volume to {vol}",
            "raise the volume to {vol}", "make the volume {vol}", "bring the volume to {vol}",
            "turn the volume up to {vol}", "drop the volume to {vol}"],
           ["volume {vol}", "volume to {vol}", "I want the volume at {vol}", "speaker volume {vol}",
            "can you put the volume at {vol}", "too loud, volume {vol} please"],
           ["set the volume", "change the volume", "turn it up", "turn the volume down", "louder",
            "make it quieter", "adjust the volume", "turn the volume up a bit"],
           {"vol": VOLUME}, lambda v: [call("set_volume", level=v["vol"])]),
]

MEDIA_UNSUPPORTED = [
    "go back to the previous song", "previous track", "shuffle my playlist", "repeat this song",
    "like this song", "what song is this", "add this to my favorites", "rewind 30 seconds",
    "fast forward a minute", "who sings this", "create a new playlist", "show me the lyrics",
    "play it on the TV", "connect to my bluetooth headphones", "turn on shuffle",
    "what's next in the queue", "remove this song from the playlist", "set a sleep timer",
    "download this album", "turn on the lights", "set the thermostat to 21",
    "how long is this song", "recommend me some new music", "turn on repeat"]

# ---------------------------------------------------------------- kitchen_appliance

OVEN_T = Num(50, 250, ("{n}", "{n} degrees", "{n}°C", "{n} degrees celsius", "{n}°", "{n} C"),
             [(260, 500), (0, 45)], round_to=10)


def _minutes(rng, split):
    r = rng.random()
    if r < 0.12:
        h = rng.randint(1, 6)
        return rng.choice([f"{h} hour" + ("s" if h > 1 else ""), f"{h} hr" + ("s" if h > 1 else "")]), 60 * h
    if r < 0.18:
        return rng.choice([("an hour", 60), ("half an hour", 30), ("an hour and a half", 90),
                           ("a minute", 1), ("two hours", 120)])
    n = balanced_int(rng, 1, 360) if _mixed() and rng.random() < 0.5 else \
        rng.randint(1, 360) if rng.random() < 0.35 else rng.randint(1, 60)
    unit = rng.choice(["minutes", "minutes", "minute", "mins", "min"]) if n != 1 else "minute"
    return f"{n} {unit}", n


def _bad_minutes(rng, split):
    n = rng.randint(361, 1000)
    return rng.choice([f"{n} minutes", f"{rng.randint(7, 24)} hours"])


MINUTES = Custom(_minutes, _bad_minutes)
LABEL = Text(S.TIMER_LABELS, C.label)
APPLIANCE = Enum(S.APPLIANCE_WORDS, S.BAD_APPLIANCES, {"coffee_maker": ["coffeemaker", "coffee pot"]})

KITCHEN = [
    Intent("kitchen_appliance", "oven",
           ["preheat the oven to {ot}", "set the oven to {ot}", "heat the oven to {ot}",
            "turn the oven on to {ot}", "bake at {ot}", "get the oven going at {ot}", "preheat to {ot}",
            "warm the oven up to {ot}", "set the oven temperature to {ot}", "heat up the oven to {ot}",
            "put the oven on {ot}", "turn on the oven at {ot}", "crank the oven to {ot}"],
           ["oven to {ot}", "I need the oven at {ot}", "oven at {ot} please", "the oven should be {ot}",
            "can you preheat the oven to {ot}", "time to bake, oven {ot}"],
           ["preheat the oven", "set the oven temperature", "turn on the oven", "heat up the oven",
            "set the oven", "warm up the oven"],
           {"ot": OVEN_T}, lambda v: [call("set_oven", temperature=v["ot"])]),
    Intent("kitchen_appliance", "coffee_brew",
           ["brew some coffee", "make coffee", "start the coffee maker", "brew a pot of coffee",
            "make me a coffee", "start brewing", "get the coffee going", "brew coffee",
            "start a pot of coffee", "brew a fresh pot", "make a cup of coffee"],
           ["coffee please", "I need coffee, start brewing", "coffee time, brew it",
            "coffee maker, brew"],
           [], {}, lambda v: [call("control_coffee_maker", action="brew")]),
    Intent("kitchen_appliance", "coffee_stop",
           ["stop the coffee maker", "stop brewing", "turn off the coffee maker", "cancel the coffee",
            "halt the coffee maker", "shut off the coffee machine", "stop the coffee",
            "stop the coffee machine"],
           ["coffee maker, stop", "that's enough coffee, stop the machine", "coffee maker off"],
           [], {}, lambda v: [call("control_coffee_maker", action="stop")]),
    Intent("kitchen_appliance", "coffee_warm",
           ["keep the coffee warm", "warm the coffee", "set the coffee maker to warm",
            "put the coffee maker on warm", "switch the coffee maker to keep warm", "warm up the coffee",
            "keep my coffee hot", "turn on the coffee warmer"],
           ["coffee maker on warm", "coffee's getting cold, warm it", "coffee maker, keep it warm"],
           [], {}, lambda v: [call("control_coffee_maker", action="warm")]),
    Intent("kitchen_appliance", "dishwasher",
           ["start the dishwasher", "run the dishwasher", "turn on the dishwasher",
            "start a dishwasher load", "wash the dishes", "get the dishwasher going",
            "kick off the dishwasher", "run a load in the dishwasher", "start the dishes"],
           ["dishwasher on please", "the dishwasher is full, start it", "time to run the dishwasher"],
           [], {}, lambda v: [call("start_dishwasher")]),
    Intent("kitchen_appliance", "dishwasher_cycle",
           ["run the dishwasher on {cycle}", "start the dishwasher on the {cycle} cycle",
            "start a {cycle} wash", "run a {cycle} cycle on the dishwasher", "wash the dishes on {cycle}",
            "use the {cycle} setting on the dishwasher", "start the dishwasher in {cycle} mode",
            "run the dishwasher with the {cycle} cycle", "start a {cycle} dishwasher cycle"],
           ["dishwasher, {cycle} cycle", "dishwasher on {cycle} please", "{cycle} cycle on the dishwasher"],
           ["set the dishwasher cycle", "pick a dishwasher cycle"],
           {"cycle": Enum(S.CYCLES, S.BAD_CYCLES)}, lambda v: [call("start_dishwasher", cycle=v["cycle"])]),
    Intent("kitchen_appliance", "timer",
           ["set a {label} timer for {min}", "start a timer called {label} for {min}",
            "set a timer named {label} for {min}", "time the {label} for {min}",
            "set the {label} timer to {min}", "start a {label} timer for {min}",
            "give me a {label} timer for {min}", "set a timer for the {label} for {min}",
            "count down {min} for the {label}", "set a {min} timer for the {label}",
            "start a {min} timer for the {label}", "set a cooking timer for the {label}, {min}",
            "put a {min} timer on the {label}"],
           ["{label} timer, {min}", "I need a {min} timer for the {label}", "{label}: {min}",
            "the {label} needs {min}, set a timer", "timer for {label}, {min}",
            "can you time the {label} for {min}"],
           ["set a timer for the {label}", "start a {label} timer", "time the {label}",
            "set a cooking timer", "start a timer", "set a timer for {min}", "start a {min} timer",
            "give me a {min} timer"],
           {"label": LABEL, "min": MINUTES},
           lambda v: [call("set_cooking_timer", label=v["label"], minutes=v["min"])]),
    Intent("kitchen_appliance", "status",
           ["check the {app}", "check on the {app}", "get the {app} status", "check the {app} status",
            "check the status of the {app}", "look at the {app}", "show me the {app} status",
            "tell me the status of the {app}"],
           ["what's the status of the {app}", "is the {app} done", "how's the {app} doing",
            "is the {app} on", "status of the {app}", "{app} status", "is the {app} still running",
            "what is the {app} doing"],
           ["check the status", "what's the status", "how's it doing", "check on the appliance",
            "is it done yet"],
           {"app": APPLIANCE}, lambda v: [call("get_appliance_status", appliance=v["app"])]),
]

KITCHEN_UNSUPPORTED = [
    "turn on the microwave", "start the air fryer", "toast some bread", "order groceries",
    "set the fridge temperature to 4", "turn off the oven", "stop the dishwasher",
    "preheat the grill", "make an espresso", "froth some milk", "boil the kettle",
    "what's a good recipe for lasagna", "defrost the chicken in the microwave",
    "add eggs to the shopping list", "unload the dishwasher", "clean the oven",
    "how long should I bake cookies", "turn on the range hood", "open the oven door",
    "set the slow cooker to low", "make a smoothie", "grind some coffee beans",
    "turn on the kitchen lights", "play some jazz"]

# ---------------------------------------------------------------- productivity

def _duration(rng, split):
    value = rng.choice(_split_pool(S.DURATIONS, split))
    return value, value


def _clock(rng, split):
    value = rng.choice(_split_pool(S.CLOCKS, split))
    return value, value


def _held_out_duration(value, split):
    """With spoken lengths on (phase 39), a built timer length that is a validation-only listed
    value ('six minutes') is not used in training, so the split by value holds for it too."""
    return bool(C.SPOKEN_DURATIONS) and split == "train" and value in _split_pool(S.DURATIONS, "val")


DURATION = Custom(open_or(_duration, C.duration, _held_out_duration))
CLOCK = Custom(open_or(_clock, lambda rng: "at " + C.clock(rng)))
MESSAGE = Text(S.REMINDER_MESSAGES, C.verb_phrase)
WHEN = Text(S.WHEN, C.when, edits=False)
TITLE = Text(S.EVENT_TITLES, C.title)
LOCATION = Text(S.LOCATIONS, C.place)
TASK = Text(S.TASKS, C.verb_phrase)
PRIORITY = Enum(S.PRIORITIES, S.BAD_PRIORITIES)
NOTE = Text(S.NOTE_TEXTS, C.note)
NOTE_TITLE = Text(S.NOTE_TITLES, C.short_title)

PRODUCTIVITY = [
    Intent("productivity", "timer",
           ["set a timer for {dur}", "start a {dur} timer", "set a {dur} timer", "start a timer for {dur}",
            "count down {dur}", "set a countdown for {dur}", "time {dur} for me", "make a timer for {dur}",
            "put a timer on for {dur}", "run a timer for {dur}"],
           ["timer for {dur}", "{dur} timer please", "I need a timer for {dur}", "timer, {dur}",
            "can you set a timer for {dur}"],
           ["set a timer", "start a timer", "start a countdown", "I need a timer"],
           {"dur": DURATION}, lambda v: [call("set_timer", time_human=v["dur"])]),
    Intent("productivity", "timer_clock",
           ["set a timer that ends {clock}", "set a timer to go off {clock}", "start a timer until {clock}",
            "make a timer that rings {clock}"],
           ["timer that goes off {clock}", "I need a timer ending {clock}"], [],
           {"clock": CLOCK}, lambda v: [call("set_timer", time_human=v["clock"])]),
    Intent("productivity", "reminder",
           ["remind me to {msg} {when}", "remind me {when} to {msg}", "set a reminder to {msg} {when}",
            "create a reminder to {msg} {when}", "set a reminder {when} to {msg}",
            "ping me {when} to {msg}", "add a reminder to {msg} {when}", "remind me {when}: {msg}",
            "make a reminder to {msg} {when}", "nudge me {when} to {msg}"],
           ["can you remind me to {msg} {when}", "{when}, remind me to {msg}",
            "reminder: {msg} {when}", "I need a reminder {when} to {msg}",
            "don't let me forget to {msg} {when}", "please remind me to {msg} {when}",
            "could you set a reminder to {msg} {when}"],
           ["remind me to {msg}", "set a reminder to {msg}", "create a reminder to {msg}",
            "remind me {when}", "set a reminder for {when}", "set a reminder", "remind me about something",
            "I need a reminder"],
           {"msg": MESSAGE, "when": WHEN},
           lambda v: [call("create_reminder", message=v["msg"], date_time_human=v["when"])]),
    Intent("productivity", "event",
           ["schedule {title} {when}", "add {title} to my calendar {when}",
            "create a calendar event called {title} {when}", "put {title} on my calendar {when}",
            "set up {title} {when}", "book {title} {when}", "create an event titled {title} {when}",
            "add an event called {title} {when}", "put {title} on the calendar {when}",
            "schedule an event called {title} {when}"],
           ["new event: {title}, {when}", "calendar: {title} {when}", "I have {title} {when}, add it to my calendar",
            "can you schedule {title} {when}"],
           ["schedule a meeting", "add an event to my calendar", "create a calendar event",
            "put {title} on my calendar", "schedule {title}", "add {title} to my calendar",
            "book something {when}", "create an event {when}"],
           {"title": TITLE, "when": WHEN},
           lambda v: [call("create_calendar_event", title=v["title"], start_time_human=v["when"])]),
    Intent("productivity", "event_location",
           ["schedule {title} {when} at {loc}", "add {title} at {loc} to my calendar {when}",
            "create a calendar event called {title} {when} at {loc}", "book {title} at {loc} {when}",
            "put {title} on my calendar {when} at {loc}", "set up {title} {when} in {loc}",
            "create an event titled {title} {when}, location {loc}", "schedule {title} at {loc} {when}"],
           ["new event: {title}, {when}, at {loc}", "{title} {when} at {loc}, put it on my calendar",
            "I have {title} at {loc} {when}, add it to the calendar"],
           ["schedule a meeting at {loc}", "add an event at {loc}"],
           {"title": TITLE, "when": WHEN, "loc": LOCATION},
           lambda v: [call("create_calendar_event", title=v["title"], start_time_human=v["when"],
                           location=v["loc"])]),
    Intent("productivity", "task",
           ["add {task} to my to-do list", "add a task to {task}", "put {task} on my task list",
            "add {task} to my tasks", "create a task to {task}", "make a task to {task}",
            "add the task {task}", "put {task} on my to-do list", "note a task: {task}",
            "add {task} to the task list", "create a to-do: {task}"],
           ["new task: {task}", "to-do: {task}", "I need to {task}, add it to my list",
            "task: {task}", "can you add {task} to my to-do list"],
           ["add a task", "create a new task", "add something to my to-do list", "make a to-do"],
           {"task": TASK}, lambda v: [call("add_task", title=v["task"])]),
    Intent("productivity", "task_priority",
           ["add a {prio} priority task to {task}", "add {task} as {prio} priority",
            "create a {prio} priority task to {task}", "add task {task} with {prio} priority",
            "make a task to {task} with {prio} priority", "add {task} to my to-do list as {prio} priority",
            "put {task} on my list, {prio} priority", "add a {prio}-priority task: {task}"],
           ["new {prio} priority task: {task}", "{prio} priority: {task}",
            "to-do, {prio} priority: {task}"],
           ["add a {prio} priority task", "create a task with {prio} priority"],
           {"task": TASK, "prio": PRIORITY}, lambda v: [call("add_task", title=v["task"], priority=v["prio"])]),
    Intent("productivity", "note",
           ["take a note: {note}", "make a note saying {note}", "save a note: {note}", "write down {note}",
            "jot down {note}", "add a note: {note}", "note that {note}", "save a note that says {note}",
            "create a note: {note}", "write a note saying {note}", "keep a note that {note}"],
           ["note to self: {note}", "new note: {note}", "can you note that {note}",
            "quick note, {note}", "please save this note: {note}"],
           ["take a note", "make a note", "save a note", "create a new note", "jot something down"],
           {"note": NOTE}, lambda v: [call("create_note", text=v["note"])]),
    Intent("productivity", "note_title",
           ["create a note titled {ntitle} that says {note}", "save a note called {ntitle}: {note}",
            "make a note named {ntitle} saying {note}", "add a note titled {ntitle}: {note}",
            "take a note called {ntitle} with {note}", "write a note titled {ntitle} that says {note}"],
           ["new note {ntitle}: {note}", "note titled {ntitle}: {note}"],
           ["create a note titled {ntitle}", "make a note called {ntitle}"],
           {"ntitle": NOTE_TITLE, "note": NOTE},
           lambda v: [call("create_note", text=v["note"], title=v["ntitle"])]),
]

PRODUCTIVITY_UNSUPPORTED = [
    "send an email to Bob", "call mom", "what's on my calendar today", "delete my last reminder",
    "cancel my 3pm meeting", "read my notes", "mark the task as done", "how long is left on my timer",
    "stop the timer", "text Sarah that I'm running late", "what time is it", "share my note with Alex",
    "move my dentist appointment to Friday", "show my to-do list", "clear all my tasks",
    "what reminders do I have", "invite Priya to the team meeting", "snooze that reminder",
    "pause the timer", "rename my note", "turn on the lights", "play some music",
    "how many tasks do I have left", "sync my calendar with Outlook"]

# ---------------------------------------------------------------- wearable

SENDER = Enum(S.SENDERS, S.BAD_SENDERS)
REPLY = Text(S.REPLY_TEXTS, C.reply)


WORKOUT_MORE = {"running": ["jogging"], "cycling": ["biking"], "strength": ["strength training", "weightlifting"]}


def _workout(rng, split):
    value = rng.choice(sorted(S.WORKOUTS))
    if _mixed() and value in WORKOUT_MORE and rng.random() < 0.4:
        return rng.choice(WORKOUT_MORE[value]), value
    return S.WORKOUTS[value][0], value


def _workout_noun(rng, split):
    value = rng.choice(sorted(S.WORKOUTS))
    return S.WORKOUTS[value][1], value


WORKOUT = Custom(_workout, lambda rng, split: rng.choice(_split_pool(S.BAD_WORKOUTS, split)))
WORKOUT_NOUN = Custom(_workout_noun,
                      lambda rng, split: "a " + rng.choice(_split_pool(S.BAD_WORKOUTS, split)) + " session")

WEARABLE = [
    Intent("wearable", "reply",
           ["reply to {sender} saying {reply}", "reply to {sender}: {reply}", "tell {sender} {reply}",
            "respond to {sender} with {reply}", "send a reply to {sender} that says {reply}",
            "answer {sender}'s message with {reply}", "write back to {sender}: {reply}",
            "reply to the message from {sender} saying {reply}", "text back {sender}: {reply}",
            "reply {reply} to {sender}", "respond to {sender}'s notification with {reply}",
            "send {sender} a reply: {reply}"],
           ["reply to {sender} with the message {reply}", "{sender} messaged, reply {reply}",
            "can you reply to {sender}: {reply}", "quick reply to {sender}: {reply}"],
           ["reply to {sender}", "send a reply to {sender}", "answer {sender}'s message",
            "reply saying {reply}", "send a reply: {reply}", "reply to the notification", "respond to the message"],
           {"sender": SENDER, "reply": REPLY},
           lambda v: [call("reply_to_notification", notification_match=v["sender"], text=v["reply"])]),
    Intent("wearable", "dismiss",
           ["dismiss {sender}'s notification", "dismiss the notification from {sender}",
            "clear {sender}'s message", "clear the notification from {sender}", "swipe away {sender}'s notification",
            "dismiss {sender}'s message", "ignore the notification from {sender}", "clear {sender}'s alert",
            "get rid of {sender}'s notification", "dismiss the message from {sender}"],
           ["{sender}'s notification can go, dismiss it", "no need to reply to {sender}, just dismiss it",
            "clear the one from {sender}"],
           ["dismiss the notification", "clear the notification", "dismiss that message", "clear my notification"],
           {"sender": SENDER}, lambda v: [call("dismiss_notification", notification_match=v["sender"])]),
    Intent("wearable", "workout",
           ["start a {wt} workout", "begin a {wt} workout", "start tracking a {wt} workout", "start {wt}",
            "track a {wt} session", "kick off a {wt} workout", "record a {wt} workout", "start my {wt} workout",
            "start a {wt} session", "begin tracking {wt}"],
           ["I'm going {wt}, start a workout", "{wt} workout, start", "time for {wt}, start tracking",
            "let's do some {wt}, track it"],
           ["start a workout", "begin a workout", "start tracking my workout", "track my exercise",
            "start an exercise session"],
           {"wt": WORKOUT}, lambda v: [call("start_workout", workout_type=v["wt"])]),
    Intent("wearable", "workout_noun",
           ["start {wtn}", "track {wtn}", "start tracking {wtn}", "begin {wtn}", "record {wtn}",
            "log {wtn} as a workout"],
           ["I'm heading out for {wtn}, track it", "going for {wtn}, start the workout"],
           [], {"wtn": WORKOUT_NOUN}, lambda v: [call("start_workout", workout_type=v["wtn"])]),
    Intent("wearable", "end_workout",
           ["end my workout", "stop the workout", "finish my workout", "end the session", "stop tracking my workout",
            "end workout", "wrap up my workout", "stop my workout", "end the current workout",
            "finish the workout session", "stop the exercise tracking"],
           ["I'm done working out", "workout over, end it", "that's it for today, end the workout",
            "I'm finished with my workout", "done exercising, stop tracking"],
           [], {}, lambda v: [call("end_workout")]),
    Intent("wearable", "find_phone",
           ["find my phone", "ring my phone", "make my phone ring", "help me find my phone", "locate my phone",
            "ping my phone", "find the phone", "make the phone ring", "trigger my phone to ring"],
           ["where's my phone", "I can't find my phone", "I lost my phone", "where did I leave my phone",
            "my phone is missing, make it ring", "phone, where are you"],
           [], {}, lambda v: [call("find_my_phone")]),
]

WEARABLE_UNSUPPORTED = [
    "check my heart rate", "how many steps did I take today", "set an alarm for 6am", "call Maya",
    "read my messages", "start a timer for 5 minutes", "turn on do not disturb", "play music on my watch",
    "pause my workout", "show my sleep data", "what's my blood oxygen", "change my watch face",
    "how many calories did I burn", "send a new message to Leo", "turn on the flashlight",
    "what time is sunset", "call Dr. Patel", "mute all notifications", "check my battery",
    "set my daily step goal to 10000", "log a glass of water", "turn off the lights", "what's the weather"]

# ---------------------------------------------------------------- data_capture

def _phone(rng, split):
    style = rng.random()
    d = lambda n: "".join(str(rng.randint(0, 9)) for _ in range(n))
    if style < 0.35:
        return f"{rng.randint(2, 9)}{d(2)}-{d(3)}-{d(4)}"
    if style < 0.55:
        return f"+1 {rng.randint(2, 9)}{d(2)} {d(3)} {d(4)}"
    if style < 0.7:
        return f"+44 {d(4)} {d(6)}"
    if style < 0.85:
        return f"{rng.randint(2, 9)}{d(9)}"
    return f"0{d(2)} {d(4)} {d(4)}"


def _email(rng, name):
    first, last = name.replace("Dr. ", "").split()[0].lower(), name.split()[-1].lower().replace("'", "")
    user = rng.choice([f"{first}.{last}", f"{first}{last[0]}", f"{first[0]}{last}", f"{first}_{last}",
                       f"{first}{rng.randint(1, 99)}"])
    return f"{user}@{rng.choice(S.EMAIL_DOMAINS)}"


def _contact(rng, split):
    if _mixed() and rng.random() < OPEN_SHARE:
        name = C.person(rng)
    else:
        pool = _split_pool(S.NAMES, split)
        name = rng.choice(pool)
        if NAME_MISS and rng.random() < NAME_MISS:  # a new pairing of a listed first and last name
            name = name.split()[0] + " " + rng.choice(pool).split()[-1]
    return name, {"name": name, "phone": _phone(rng, split), "email": _email(rng, name)}


def _amount(rng, split):
    r = rng.random()
    if _mixed() and r < 0.5:
        text = str(balanced_int(rng, 0, 100000))
        if rng.random() < 0.5 and text != "100000":
            text += "." + str(rng.randint(0, 99)).zfill(rng.choice([1, 2, 2]))[:2]
    elif r < 0.45:
        n = rng.choice([rng.randint(1, 120), rng.randint(1, 2000), rng.randint(1, 60) * 5])
        text = str(n)
    else:
        text = f"{rng.randint(0, 300)}.{rng.randint(0, 99):02d}"
        if text.startswith("0.00"):
            text = "0.50"
    surface = rng.choice(["${a}", "{a} dollars", "${a}", "{a}", "{a} bucks", "€{a}", "{a} euros", "£{a}"])
    return surface.format(a=text), Lit(text)


def _bad_amount(rng, split):
    return rng.choice(["${a}", "{a} dollars"]).format(a=rng.randint(100001, 5000000))


def _water(rng, split):
    if rng.random() < 0.12:
        litres = rng.choice(["1", "2", "1.5", "0.5", "3", "2.5", "4"])
        unit = rng.choice(["liters", "litres", "L", "liter"]) if litres != "1" else rng.choice(["liter", "litre", "L"])
        return f"{litres} {unit}", int(round(float(litres) * 1000))
    n = rng.choice([rng.randint(1, 50) * 50, rng.randint(1, 5000), rng.randint(1, 20) * 100])
    if _mixed() and rng.random() < 0.5:
        n = balanced_int(rng, 1, 5000)
    return rng.choice(["{n} ml", "{n}ml", "{n} milliliters", "{n} mL", "{n} millilitres"]).format(n=n), n


def _bad_water(rng, split):
    return rng.choice(["{n} ml", "{n} milliliters"]).format(n=rng.randint(5001, 20000))


def _weight(rng, split):
    text = str(rng.randint(35, 160)) if rng.random() < 0.5 else f"{rng.randint(35, 160)}.{rng.randint(1, 9)}"
    if _mixed() and rng.random() < 0.4:
        text = str(balanced_int(rng, 20, 300)) + rng.choice(["", "", f".{rng.randint(0, 9)}", f".{rng.randint(0, 99):02d}"])
    return rng.choice(["{w} kg", "{w}kg", "{w} kilograms", "{w} kilos"]).format(w=text), Lit(text)


def _bad_weight(rng, split):
    n = rng.choice([rng.randint(301, 900), rng.randint(1, 19)])
    return rng.choice(["{n} kg", "{n} kilograms"]).format(n=n)


CONTACT = Custom(_contact)
AMOUNT = Custom(_amount, _bad_amount)
CATEGORY = Enum(S.CATEGORY_WORDS, S.BAD_CATEGORIES, {"groceries": ["grocery", "the groceries"]})
MERCHANT = Text(S.MERCHANTS, C.merchant)
FOOD = Text(S.FOODS, C.food)
MEAL = Enum(S.MEALS, (), {"snack": ["a snack"]})
WATER = Custom(_water, _bad_water)
WEIGHT = Custom(_weight, _bad_weight)


def _contact_calls(fields):
    def build(v):
        c = v["who"]
        return [call("create_contact", name=c["name"], phone=c["phone"] if "phone" in fields else None,
                     email=c["email"] if "email" in fields else None)]
    return build


DATA_CAPTURE = [
    Intent("data_capture", "contact",
           ["add {who} to my contacts", "save {who} as a new contact", "create a contact for {who}",
            "add a contact named {who}", "save a contact: {who}", "add {who} as a contact",
            "create a new contact called {who}", "store {who} in my contacts"],
           ["new contact: {who}", "contact: {who}, please save"],
           ["add a new contact", "save a contact", "create a contact", "add someone to my contacts"],
           {"who": CONTACT}, _contact_calls(())),
    Intent("data_capture", "contact_phone",
           ["add {who} to my contacts with the number {phone}", "save {who}'s number: {phone}",
            "create a contact for {who} with phone number {phone}", "save a new contact: {who}, {phone}",
            "add contact {who}, phone {phone}", "store {who} with phone {phone}",
            "add {who}, number {phone}, to my contacts", "save {phone} as {who}"],
           ["new contact {who}, phone number {phone}", "{who}'s number is {phone}, save it",
            "contact: {who} {phone}"],
           ["save this number: {phone}", "add {phone} to my contacts", "create a contact with number {phone}",
            "save the number {phone}"],
           {"who": CONTACT}, _contact_calls(("phone",))),
    Intent("data_capture", "contact_email",
           ["add {who} to my contacts with email {email}", "create a contact for {who}, email {email}",
            "save {who}'s email: {email}", "add contact {who}, email address {email}",
            "save a new contact {who} with the email {email}", "store {who}, {email}"],
           ["new contact: {who}, {email}", "{who}'s email is {email}, add them to contacts"],
           ["save this email address: {email}", "add {email} to my contacts"],
           {"who": CONTACT}, _contact_calls(("email",))),
    Intent("data_capture", "contact_full",
           ["add {who} to my contacts, phone {phone}, email {email}",
            "create a contact for {who} with number {phone} and email {email}",
            "save a new contact: {who}, {phone}, {email}",
            "add contact {who}, phone number {phone}, email {email}"],
           ["new contact {who}: {phone}, {email}", "{who}, number {phone}, email {email}, save as a contact"],
           [], {"who": CONTACT}, _contact_calls(("phone", "email"))),
    Intent("data_capture", "expense",
           ["log {amt} for {cat}", "record a {cat} expense of {amt}", "add a {amt} {cat} expense",
            "log an expense of {amt} for {cat}", "log {amt} spent on {cat}", "record {amt} for {cat}",
            "add an expense: {amt}, {cat}", "track {amt} on {cat}", "put {amt} under {cat}"],
           ["I spent {amt} on {cat}", "spent {amt} on {cat}", "just paid {amt} for {cat}",
            "expense: {amt}, {cat}", "{amt} on {cat} today", "I paid {amt} for {cat}"],
           ["log an expense", "record an expense", "I spent {amt}", "log {amt}", "I spent money on {cat}",
            "log a {cat} expense", "track my spending", "record what I spent on {cat}"],
           {"amt": AMOUNT, "cat": CATEGORY}, lambda v: [call("log_expense", amount=v["amt"], category=v["cat"])]),
    Intent("data_capture", "expense_merchant",
           ["log {amt} for {cat} at {merchant}", "record a {cat} expense of {amt} at {merchant}",
            "log an expense of {amt} for {cat} at {merchant}", "add {amt} at {merchant} under {cat}",
            "log {amt} spent at {merchant} on {cat}", "record {amt} at {merchant} for {cat}"],
           ["I spent {amt} on {cat} at {merchant}", "spent {amt} at {merchant} on {cat}",
            "paid {amt} at {merchant} for {cat}", "{amt} on {cat} at {merchant}",
            "just spent {amt} at {merchant}, {cat}"],
           ["I spent {amt} at {merchant}", "log {amt} at {merchant}", "log an expense at {merchant}",
            "I spent money at {merchant} on {cat}"],
           {"amt": AMOUNT, "cat": CATEGORY, "merchant": MERCHANT},
           lambda v: [call("log_expense", amount=v["amt"], category=v["cat"], merchant=v["merchant"])]),
    Intent("data_capture", "meal",
           ["log {food}", "log a meal: {food}", "record {food} in my food log", "add {food} to my meal log",
            "log that I ate {food}", "track {food}", "add {food} to my food diary"],
           ["I ate {food}", "just had {food}", "I had {food}", "ate {food}", "meal: {food}"],
           ["log a meal", "log what I ate", "record my meal", "add to my food log", "log my food"],
           {"food": FOOD}, lambda v: [call("log_meal", description=v["food"])]),
    Intent("data_capture", "meal_type",
           ["log {food} for {meal}", "log my {meal}: {food}", "record {food} as my {meal}",
            "add {food} to my food log for {meal}", "log {food} as a {meal}", "track my {meal}: {food}"],
           ["I had {food} for {meal}", "for {meal} I ate {food}", "{meal} was {food}", "just ate {food} for {meal}",
            "I ate {food} for {meal}", "{meal}: {food}"],
           ["log my {meal}", "record my {meal}", "log {meal}", "I just had {meal}, log it", "track my {meal}"],
           {"food": FOOD, "meal": MEAL}, lambda v: [call("log_meal", description=v["food"], meal_type=v["meal"])]),
    Intent("data_capture", "water",
           ["log {water} of water", "add {water} to my water log", "record {water} of water",
            "log water: {water}", "track {water} of water", "log {water} water intake", "add {water} of water"],
           ["I drank {water} of water", "just had {water} of water", "drank {water} of water",
            "water: {water}", "I had {water} of water"],
           ["log my water intake", "log some water", "I drank some water", "record my water",
            "I drank a glass of water", "add water to my log", "track my water"],
           {"water": WATER}, lambda v: [call("log_water_intake", amount_ml=v["water"])]),
    Intent("data_capture", "weight",
           ["log my weight: {kg}", "record my weight as {kg}", "log {kg} as my weight", "log a weight of {kg}",
            "record {kg} on the scale", "track my weight at {kg}", "save my weight, {kg}"],
           ["I weigh {kg}", "weight today {kg}", "weighed in at {kg} this morning", "my weight is {kg}",
            "scale says {kg}", "I'm at {kg} today"],
           ["log my weight", "record my weight", "track my weight", "I weighed myself today"],
           {"kg": WEIGHT}, lambda v: [call("log_weight", weight_kg=v["kg"])]),
]

DATA_CAPTURE_UNSUPPORTED = [
    "delete the contact for John Smith", "how much have I spent this month", "log my sleep",
    "log 5000 steps", "how much water have I had today", "call Maria Garcia", "log my blood pressure",
    "set a monthly budget of 500", "email Wei Chen", "track my mood", "show my expenses",
    "what did I eat yesterday", "edit Grace Lee's number", "log my run", "what's my average weight",
    "export my expense report", "log my heart rate at 72", "split the bill with Tom",
    "remind me to drink water", "set a timer for 10 minutes", "turn on the lights"]

ENVIRONMENTS = {
    "smart_home": (SMART_HOME, SMART_HOME_UNSUPPORTED),
    "media_player": (MEDIA_PLAYER, MEDIA_UNSUPPORTED),
    "kitchen_appliance": (KITCHEN, KITCHEN_UNSUPPORTED),
    "productivity": (PRODUCTIVITY, PRODUCTIVITY_UNSUPPORTED),
    "wearable": (WEARABLE, WEARABLE_UNSUPPORTED),
    "data_capture": (DATA_CAPTURE, DATA_CAPTURE_UNSUPPORTED),
}
