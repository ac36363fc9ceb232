"""A third round for the browser environment (`datagen.py --browser-values`, phase 81): values
said around words that are not part of them.

Written from `browser.json`'s schemas and descriptions only ("the exact words to find, as the
user said them", "convert hours to minutes", "what the timer is for, as the user said it").
Phases 76-80 tie at 74% on the held-out browser requests; the generator's own validation
phrasings (LOG.md, session 38) fail where a value comes with a carrier word the training data
never put before it ("find the word X" copies "the word X", "open the website X"), where a timer
is said in hours, where the label follows "to" ("... for 2 hours to check the oven"), and where
a second request says "it" for the current tab ("pin this tab and mute it": `mute it` was
taught as incomplete). So this adds:
- carrier phrasings whose value is only what follows the carrier word;
- timer lengths in hours and minutes (`browser.MORE_HOURS`), inside the schema's 24 hours;
- a timer intent whose label is a thing to do, said after "to";
- "mute it" / "unmute it" as the current tab (and out of the incomplete requests);
- "for later" bookmarks with no folder, beside the folder named Later.
Phrasings are appended to the intents' lists like the earlier rounds; new intents are appended
to the environment, so the index-based split holds their phrasings out the same way.
"""
import browser as B
import compose as C
import intents as I
import more_phrasings
from intents import Intent, Text, call

PHRASINGS = {
    "open": dict(
        imp=["visit the website {url}", "open the web page {url}", "go to the site {url}",
             "load the website {url}", "open the link {url}", "go to the address {url}",
             "take me to the website {url}", "visit the site {url}", "navigate to the page {url}"],
        alt=["the website is {url}, open it", "the address is {url}", "I want the website {url}"]),
    "find": dict(
        imp=["find the word {find}", "search for the word {find}", "find the term {find}",
             "look for the word {find} on this page", "highlight the word {find}",
             "search the page for the term {find}", "find the words {find} on the page",
             "find every mention of the word {find}", "find where it says {find}",
             "look up the term {find}", "find the text that says {find}"],
        alt=["where's the word {find} on this page", "is the word {find} on this page",
             "the word is {find}, find it", "the term {find}, where is it on the page"]),
    "switch": dict(
        imp=["switch to the tab named {tab}", "go to the tab titled {tab}",
             "bring up the tab that says {tab}"],
        alt=["the tab is called {tab}, switch to it"]),
    "close_matching": dict(
        imp=["close the tabs named {tab}", "close every tab that says {tab}",
             "close the tabs titled {tab}"]),
    "bookmark": dict(
        imp=["save this page for later", "bookmark this for later", "bookmark this to read later",
             "keep this page for later"],
        alt=["I'll read this later, bookmark it", "save it for later please"]),
    "bookmark_folder": dict(
        imp=["bookmark this in the folder {folder}", "save this page in the folder called {folder}",
             "bookmark this page to the folder named {folder}", "put this in the bookmark folder {folder}"],
        alt=["the folder is called {folder}, bookmark this page there"]),
    "group": dict(
        imp=["group the {tab} tabs and name the group {group}", "group the tabs titled {tab} as {group}"]),
    "timer_label": dict(
        imp=["set a timer for {mins} and call it {tlabel}", "set a {mins} timer with the label {tlabel}",
             "start a timer for {mins}, the label is {tlabel}"]),
}

TODOS = ["check the oven", "call mom", "stretch", "stand up", "take out the laundry", "move the car",
         "flip the steak", "feed the cat", "take my pills", "join the meeting", "water the plants",
         "leave for the train", "turn off the stove", "switch the laundry", "pick up the kids",
         "drink some water"]
TODO = Text(TODOS, C.verb_phrase)

INTENTS = [
    Intent(B.NAME, "timer_todo",
           ["set a timer for {mins} to {todo}", "remind me to {todo} in {mins}", "set a {mins} timer to {todo}",
            "start a timer for {mins} to {todo}", "in {mins} remind me to {todo}",
            "give me a {mins} timer to {todo}", "set a timer to {todo} in {mins}",
            "ping me in {mins} to {todo}", "notify me in {mins} to {todo}"],
           ["{mins} timer to {todo}", "I need to {todo} in {mins}, set a timer",
            "timer for {mins} so I remember to {todo}", "can you remind me to {todo} in {mins}"],
           ["remind me to {todo}", "set a timer to {todo}", "I need a timer to {todo}"],
           {"mins": B.MINUTES, "todo": TODO},
           lambda v: [call("set_timer", minutes=v["mins"], label=v["todo"])]),
]

# "it" after a request about this tab is this tab.
for name, muted, imp, alt in (
        ("mute_it", True, ["mute it", "mute this", "silence it", "mute this one", "mute it too"],
         ["it's too loud, mute it", "make it stop playing sound"]),
        ("unmute_it", False, ["unmute it", "unmute this", "unmute this one", "turn its sound back on"],
         ["I want to hear it, unmute it"])):
    INTENTS.append(Intent(B.NAME, name, imp, alt, [], {},
                          lambda v, muted=muted: [call("mute_tabs", which="current", muted=muted)]))
NOT_INCOMPLETE = {"mute it", "unmute it", "silence that"}


def extend(repeat=1):
    """Add the round (after `browser.register()`): phrasings, intents, and more hours; with
    `repeat` > 1 the round's training phrasings are drawn that many times as often."""
    more_phrasings.append({(B.NAME, name): kinds for name, kinds in PHRASINGS.items()}, repeat)
    intents = I.ENVIRONMENTS[B.NAME][0]
    for intent in intents:
        intent.missing = [m for m in intent.missing if m not in NOT_INCOMPLETE]
    intents += INTENTS
    B.TIMERS[B.NAME] |= {"timer_todo"}
    # "remind me to X in 20 minutes" is now a browser timer: productivity's reminders stop
    # being browser refusals.
    B.TIMERS["productivity"] |= {"reminder"}
    B.MORE_HOURS = 0.35
