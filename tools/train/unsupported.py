"""Requests an environment's tools cannot serve, composed from operations and slot values
(`datagen.py --unsupported-ops U`, phase 42).

Written from the tool schemas alone: each environment's tools create, start or set particular
things, so reading, listing, changing, cancelling or deleting them, and neighbouring devices
and measurements no tool covers, must be refused with `[]`. The irrelevant class otherwise
draws from a fixed list of ~25 requests per environment, which a model can learn by heart
instead of learning where the tools stop. Each template here is filled with the generator's
own open-ended values, so the same operation comes with ever new objects.

A template starting with a question word is dressed as a question; others as requests.
"""
import re

import compose as C

# Share of the training split's irrelevant examples drawn from here (`datagen.py
# --unsupported-ops`). At 0 no extra random number is drawn, so earlier phases reproduce.
SHARE = 0.0
# Environments whose own share replaces SHARE (the browser's, browser_refusals.py, phase 83).
ENV_SHARE = {}

SENDERS = ["Maya", "Leo", "Dr. Patel", "Cactus Team"]
WORKOUTS = ["running", "walking", "cycling", "swimming", "strength", "yoga"]
METRICS = ["steps", "hours of sleep", "minutes of meditation", "flights of stairs", "km cycled"]


def _slots(rng):
    """Lazy slot values: each drawn only when its template names it."""
    return {
        "person": lambda: C.person(rng),
        "msg": lambda: C.verb_phrase(rng),
        "title": lambda: C.title(rng),
        "short": lambda: C.short_title(rng),
        "when": lambda: C.when(rng),
        "day": lambda: C.day(rng),
        "clock": lambda: C.clock(rng),
        "mins": lambda: rng.choice([f"{rng.randint(2, 90)} minutes", f"{rng.randint(2, 90)} min", "an hour",
                                      f"{rng.randint(2, 5)} hours", f"{rng.randint(10, 50)} seconds"]),
        "note": lambda: C.note(rng),
        "food": lambda: C.food(rng),
        "merchant": lambda: C.merchant(rng),
        "label": lambda: C.label(rng),
        "music": lambda: C.music(rng),
        "place": lambda: C.place(rng),
        "sender": lambda: rng.choice(SENDERS),
        "workout": lambda: rng.choice(WORKOUTS),
        "metric": lambda: rng.choice(METRICS),
        "n": lambda: str(rng.choice([rng.randint(2, 12), rng.randint(10, 90), rng.randint(100, 9000)])),
        "money": lambda: rng.choice(["$", "", "£", "€"]) + str(rng.randint(2, 400)),
    }


TEMPLATES = {
    "smart_home": [
        "lock the {short} door", "unlock the front door for {person}", "open the garage for {person}",
        "turn on the TV in the {label}", "water the {label} plants", "arm the alarm {when}",
        "schedule the vacuum for {day}", "turn the sprinklers on for {mins}", "set the hot tub to {n} degrees",
        "show me the {label} camera", "is the {label} light still on", "what's the humidity in the {label}",
        "how warm is it in the {label} right now", "order a new {label} filter", "start the washing machine {when}",
        "feed the {label} at {clock}", "turn on the fireplace for {mins}", "rename the {label} room to {short}",
        "how much energy did the {label} use {day}",
    ],
    "media_player": [
        "go back to the previous track", "turn shuffle on", "repeat this one",
        "add {music} to my {short} playlist", "remove {music} from the queue", "who sings {music}",
        "show me the lyrics of {music}", "like {music}", "rewind {n} seconds", "fast forward {n} seconds",
        "set a sleep timer for {mins}", "download {music}", "what's the name of this song",
        "how long is {music}", "recommend something like {music}", "connect to the {label} speaker",
        "create a playlist called {short}", "what's playing next",
    ],
    "kitchen_appliance": [
        "turn on the microwave for {mins}", "start the air fryer at {n} degrees", "toast {food}",
        "boil the kettle", "set the fridge to {n} degrees", "add {food} to the shopping list",
        "order {food}", "what's a good recipe for {food}", "how long should I cook {food}",
        "cancel the {label} timer", "how much time is left on the {label} timer", "pause the {label} timer",
        "unload the dishwasher", "open the oven door", "turn on the {label} blender",
        "set the slow cooker to low for {mins}", "grind some beans for {person}",
    ],
    "productivity": [
        "delete my reminder to {msg}", "snooze the reminder to {msg} for {mins}", "cancel {title}",
        "move {title} to {when}", "rename {title} to {short}", "invite {person} to {title}",
        "what's on my calendar {day}", "when is {title}", "mark {msg} as done", "delete the task {msg}",
        "show my high priority tasks", "read me the note called {short}", "share my {short} note with {person}",
        "delete the note about {note}", "stop the timer", "how much time is left on my timer",
        "add {mins} to the timer", "email {person} about {title}", "call {person}", "text {person} that {note}",
        "what reminders do I have {day}", "did I finish {msg}",
    ],
    "wearable": [
        "read me {sender}'s message", "show my notifications", "mark everything from {sender} as read",
        "mute {sender} for {mins}", "call {sender}", "send a new message to {person} saying {note}",
        "pause my {workout} workout", "resume my workout", "how far did I go on my {workout} {day}",
        "what's my heart rate", "how many steps have I done {day}", "set an alarm for {clock}",
        "start a timer for {mins}", "turn on do not disturb until {clock}", "change my watch face to {short}",
        "how did I sleep {day}", "set my step goal to {n}", "what's my pace",
    ],
    "data_capture": [
        "delete the contact {person}", "change {person}'s number", "what's {person}'s email",
        "call {person}", "text {person} that {note}", "how much did I spend at {merchant}",
        "delete my last expense", "show my expenses for {day}", "set a budget of {money} for food",
        "split the {merchant} bill with {person}", "what did I have for lunch {day}",
        "how many calories were in {food}", "delete my dinner log", "log {n} {metric}",
        "track {n} {metric} for {day}", "what's my weight trend", "how much water did I drink {day}",
        "set a water goal of {n} ml", "export my contacts", "log my mood as {label}",
    ],
}

QUESTION = re.compile(r"(what|how|who|when|is|did)\b")


def request(env, rng):
    """(text, is_question): one unsupported request for `env`."""
    template = rng.choice(TEMPLATES[env])
    slots = _slots(rng)
    text = template.format_map(_Lazy(slots))
    return text, bool(QUESTION.match(template))


class _Lazy(dict):
    """format_map helper that draws a slot only when the template names it."""

    def __init__(self, slots):
        super().__init__()
        self.slots = slots

    def __missing__(self, key):
        return self.slots[key]()
