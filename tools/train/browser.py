"""The browser environment (`datagen.py --browser B`, phase 54): intents, slot values and
unsupported requests for `www/presets/browser.json`'s 12 tools.

Written from that file's tool schemas and descriptions only (its system prompt and tools are
used exactly as they are), never from a held-out browser phrasing. `register()` adds the
environment beside upstream's six: its intents and fixed unsupported requests to
`intents.ENVIRONMENTS`, its composed unsupported operations to `unsupported.TEMPLATES`; the
generator then also uses its positives as the six environments' refusals and theirs as its own.
"""
import json
import os

import compose as C
import intents as I
import unsupported as U
from intents import Custom, Enum, Intent, Num, Text, balanced_int, call

NAME = "browser"
PRESET = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "www", "presets",
                      "browser.json")
# Share of the training examples drawn from this environment (`datagen.py --browser`); the rest
# keep the six environments' weights. At 0 the environment is not registered at all.
SHARE = 0.0
# Share of its training examples shown a short tool list (datagen.py --browser-subset, phase 55).
SUBSET = 0.0
# Whether its invalid examples are spread by intent (datagen.py --browser-invalid-balanced, phase 77).
INVALID_BALANCED = False
# Free-text slots copied into the call (datagen's FREE: no filler words after them).
FREE = {"url", "tab", "folder", "find", "group", "tlabel", "todo"}
# The intents, here and in the environments with a timer tool too, that ask for a timer: never
# each other's refusals (datagen's CONFLICTS).
TIMERS = {NAME: {"timer", "timer_label"}, "kitchen_appliance": {"timer"},
          "productivity": {"timer", "timer_clock"}}

SITES = ["example.org", "github.com", "wikipedia.org", "news.ycombinator.com", "docs.python.org",
         "mail.google.com", "nytimes.com", "reddit.com", "youtube.com", "developer.mozilla.org",
         "stackoverflow.com", "maps.google.com", "bbc.co.uk", "weather.com", "amazon.de", "arxiv.org",
         "https://example.org/docs", "www.theguardian.com", "calendar.google.com", "npmjs.com",
         "https://github.com/rust-lang/rust", "en.wikipedia.org/wiki/Cactus", "imdb.com", "etsy.com",
         "localhost:8080", "http://192.168.1.1", "figma.com", "notion.so", "crates.io", "espn.com"]
TLDS = ["com", "org", "net", "io", "dev", "co.uk", "de", "fr", "app", "edu", "gov", "ca", "info"]
TAB_WORDS = ["inbox", "budget spreadsheet", "YouTube", "recipes", "Jira board", "pull request",
             "weather", "flight booking", "Wikipedia", "invoice", "Google Docs", "the map",
             "release notes", "pricing", "Slack", "Figma", "tax return", "hotel", "news", "dashboard",
             "cart", "calendar", "lecture notes", "apartment listings", "bank", "tickets"]
FOLDERS = ["Recipes", "work", "Reading list", "travel", "Later", "research", "Shopping", "Taxes 2026",
           "music", "Kids", "to read", "Projects", "house hunting", "Gifts", "dev docs", "Inspiration"]
FINDS = ["refund policy", "deadline", "pricing", "Chapter 3", "error 404", "contact us", "total",
         "ingredients", "opening hours", "shipping", "password", "TODO", "installation", "Section 2.1",
         "terms", "the summary", "free trial", "John", "API key", "results"]
GROUPS = ["Work", "Trip", "Research", "Shopping", "News", "Reading", "Thesis", "Wedding", "Q3 report",
          "Music", "Apartments", "Side project", "Bills", "Recipes", "Job search", "Gaming"]
TIMER_LABELS = ["tea", "laundry", "a break", "stand up", "the meeting", "pizza", "parking meter",
                "call mom", "stretch", "the bus", "pomodoro", "homework", "eggs", "check the oven"]
COLORS = {"grey": ["grey", "gray"], "blue": ["blue"], "red": ["red"], "yellow": ["yellow"],
          "green": ["green"], "pink": ["pink"], "purple": ["purple"], "cyan": ["cyan"],
          "orange": ["orange"]}
BAD_COLORS = ["brown", "black", "white", "magenta", "teal", "gold", "navy", "beige", "silver"]


def _domain(rng):
    """An address as users type one: 'kelomart.io', 'https://docs.brenfield.org/setup'."""
    parts = [C.name_word(rng).lower() for _ in range(rng.choice([1, 1, 2]))]
    host = rng.choice(["", "-"]).join(parts) + "." + rng.choice(TLDS)
    if rng.random() < 0.25:
        host = rng.choice(["www.", "docs.", "app.", "blog.", "shop."]) + host
    if rng.random() < 0.25:
        host += "/" + "/".join(C.noun(rng) for _ in range(rng.randint(1, 2)))
    if rng.random() < 0.2:
        host = rng.choice(["https://", "http://"]) + host
    return host


# Share of timer lengths drawn by `_hours` first (browser_values.py, phase 81); at 0 nothing
# extra is drawn.
MORE_HOURS = 0.0


def _hours(rng):
    """A length in hours, or hours and minutes, within the schema's 1440 minutes."""
    whole, h = rng.randint(1, 24), rng.randint(1, 23)
    m = rng.choice([5, 10, 15, 20, 30, 40, 45, 50]) if rng.random() < 0.5 else rng.randint(1, 59)
    said = I.number_words(h) if rng.random() < 0.3 else str(h)
    hours = "hour" if h == 1 else "hours"
    return rng.choice([
        (f"{whole} " + ("hour" if whole == 1 else rng.choice(["hours", "hrs"])), 60 * whole),
        (f"{I.number_words(whole)} " + ("hour" if whole == 1 else "hours"), 60 * whole),
        (f"{whole}h", 60 * whole), (f"{said} {hours} and {m} minutes", 60 * h + m),
        (f"{h}h {m}m", 60 * h + m), (f"{h} hr {m} min", 60 * h + m),
        (f"{said} and a half hours", 60 * h + 30), (f"{h}.5 hours", 60 * h + 30),
        (f"an hour and {m} minutes", 60 + m), ("a quarter of an hour", 15),
        ("three quarters of an hour", 45), ("half an hour", 30), ("a day", 1440)])


def _minutes(rng, split):
    """A timer length as said, with its minutes (hours converted, as the schema asks)."""
    if MORE_HOURS and rng.random() < MORE_HOURS:
        return _hours(rng)
    r = rng.random()
    if r < 0.2:
        h = rng.randint(1, 24)
        return rng.choice([f"{h} hour" + ("s" if h > 1 else ""), f"{h} hr" + ("s" if h > 1 else ""),
                           f"{h}h"]), 60 * h
    if r < 0.28:
        return rng.choice([("an hour", 60), ("half an hour", 30), ("an hour and a half", 90),
                           ("a minute", 1), ("two hours", 120), ("a quarter of an hour", 15)])
    n = balanced_int(rng, 1, 1440) if rng.random() < 0.4 else rng.randint(1, 60)
    unit = rng.choice(["minutes", "minutes", "mins", "min", "minute"]) if n != 1 else "minute"
    return f"{n} {unit}", n


def _bad_minutes(rng, split):
    r = rng.random()
    if r < 0.4:
        return f"{rng.randint(1441, 9000)} minutes"
    if r < 0.8:
        return f"{rng.randint(25, 96)} hours"
    return rng.choice(["0 minutes", "zero minutes", "-5 minutes", "3 days", "a week"])


URL = Text(SITES, _domain, edits=False)  # an edited address is no address
TAB = Text(TAB_WORDS, lambda rng: C.short_title(rng) if rng.random() < 0.6 else C.noun(rng))
FOLDER = Text(FOLDERS, C.short_title)
FIND = Text(FINDS, lambda rng: C.words(rng, 1, 4))
GROUP = Text(GROUPS, C.short_title)
TLABEL = Text(TIMER_LABELS, C.label)
MINUTES = Custom(_minutes, _bad_minutes)
PERCENT = Num(25, 500, ("{n}%", "{n} percent", "{n}", "{n} %"), [(501, 2000), (1, 24)])
NEW_TAB = Enum({True: ["in a new tab", "in another tab", "in a separate tab", "in a fresh tab"],
                False: ["in this tab", "in the current tab", "here, replacing this page",
                        "in the same tab"]})
COLOR = Enum(COLORS, BAD_COLORS)
PRIVATE = Enum({True: ["private", "incognito"]})
WHICH_MUTE = {"current": ["this tab", "the current tab", "this page"],
              "all": ["all tabs", "every tab", "all my tabs", "all the tabs"],
              "others": ["the other tabs", "every other tab", "all other tabs", "the rest of the tabs",
                         "all tabs except this one"]}


def _mute(name, muted, imp, alt, miss):
    which = Enum(WHICH_MUTE)
    return Intent(NAME, name, imp, alt, miss, {"which": which},
                  lambda v: [call("mute_tabs", which=v["which"], muted=muted)])


def _copy(name, fmt, imp, alt):
    return Intent(NAME, name, imp, alt, [], {},
                  lambda v: [call("copy_page_link", format=fmt)])


INTENTS = [
    Intent(NAME, "open",
           ["open {url}", "go to {url}", "open the page {url}", "take me to {url}", "load {url}",
            "navigate to {url}", "visit {url}", "pull up {url}", "bring up {url}", "head to {url}",
            "open the site {url}", "browse to {url}", "open up {url}", "show me {url}"],
           ["{url}, please open it", "I want to go to {url}", "let's go to {url}", "site: {url}",
            "can you open {url}", "I need {url} open", "I'd like to see {url}"],
           ["open a website", "go to that site", "open the page", "take me to the website",
            "open the link", "visit the site I mentioned"],
           {"url": URL}, lambda v: [call("open_page", url=v["url"])]),
    Intent(NAME, "open_where",
           ["open {url} {where}", "go to {url} {where}", "load {url} {where}", "open up {url} {where}",
            "navigate to {url} {where}", "visit {url} {where}", "pull up {url} {where}",
            "bring up {url} {where}"],
           ["{where}, open {url}", "I want {url} {where}", "can you load {url} {where}"],
           ["open a page {where}", "open something {where}", "load a site {where}"],
           {"url": URL, "where": NEW_TAB},
           lambda v: [call("open_page", url=v["url"], new_tab=v["where"])]),
    Intent(NAME, "switch",
           ["switch to the {tab} tab", "go to my {tab} tab", "bring up the {tab} tab",
            "jump to the tab with {tab}", "show the {tab} tab", "switch to the tab called {tab}",
            "take me back to the {tab} tab", "focus the {tab} tab", "open the tab titled {tab}",
            "bring the {tab} tab to the front", "go back to the tab about {tab}",
            "switch tabs to {tab}"],
           ["where's my {tab} tab", "the {tab} tab, please", "I want the {tab} tab in front",
            "back to {tab}", "can I see the {tab} tab again"],
           ["switch tabs", "go to the other tab", "switch to that tab", "bring up the tab",
            "take me to my tab"],
           {"tab": TAB}, lambda v: [call("switch_to_tab", title_contains=v["tab"])]),
    Intent(NAME, "close_current",
           ["close this tab", "close the current tab", "shut this tab", "close the tab I'm on",
            "get rid of this tab", "kill this tab", "close this page", "close the tab"],
           ["this tab can go, close it", "I'm done with this tab, close it", "tab closed please"],
           [], {}, lambda v: [call("close_tabs", which="current")]),
    Intent(NAME, "close_others",
           ["close the other tabs", "close all other tabs", "close every tab except this one",
            "close all tabs but this one", "get rid of the other tabs", "shut all the other tabs",
            "close everything except the current tab", "keep only this tab open"],
           ["only this tab, close the rest", "too many tabs, close all the others"],
           [], {}, lambda v: [call("close_tabs", which="others")]),
    Intent(NAME, "close_duplicates",
           ["close duplicate tabs", "close the duplicate tabs", "get rid of duplicate tabs",
            "remove the duplicated tabs", "close tabs that are open twice", "clean up duplicate tabs",
            "close any duplicates"],
           ["I have the same page open twice, close the duplicates", "duplicate tabs, close them"],
           [], {}, lambda v: [call("close_tabs", which="duplicates")]),
    Intent(NAME, "close_matching",
           ["close the {tab} tabs", "close all tabs with {tab} in the title", "close every {tab} tab",
            "close the tabs about {tab}", "shut the tabs titled {tab}", "close all my {tab} tabs",
            "get rid of the {tab} tabs", "close any tab that says {tab}"],
           ["the {tab} tabs can go, close them", "I'm done with {tab}, close those tabs"],
           ["close some tabs", "close those tabs", "close the tabs about that"],
           {"tab": TAB},
           lambda v: [call("close_tabs", which="matching", title_contains=v["tab"])]),
    Intent(NAME, "pin",
           ["pin this tab", "pin the current tab", "pin the tab", "make this tab pinned", "pin this page",
            "keep this tab pinned"],
           ["this tab should be pinned", "can you pin this"], [], {},
           lambda v: [call("pin_tab", pinned=True)]),
    Intent(NAME, "unpin",
           ["unpin this tab", "unpin the current tab", "unpin the tab", "remove the pin from this tab",
            "make this tab unpinned", "stop pinning this tab"],
           ["this tab shouldn't be pinned", "can you unpin this"], [], {},
           lambda v: [call("pin_tab", pinned=False)]),
    _mute("mute", True,
          ["mute {which}", "silence {which}", "turn off the sound on {which}", "mute the sound of {which}",
           "make {which} quiet", "shut up {which}"],
          ["{which} is too loud, mute it", "no sound from {which}", "{which} muted please"],
          ["mute it", "mute the tabs", "silence that"]),
    _mute("unmute", False,
          ["unmute {which}", "turn the sound back on for {which}", "unsilence {which}",
           "bring back the sound on {which}", "let {which} play sound again"],
          ["I can't hear {which}, unmute it", "sound back on {which}"],
          ["unmute it", "unmute the tabs"]),
    Intent(NAME, "bookmark",
           ["bookmark this page", "bookmark this", "save this page as a bookmark", "add a bookmark for this page",
            "bookmark the current page", "add this page to my bookmarks", "star this page"],
           ["I want to keep this page, bookmark it", "this one's worth a bookmark"], [], {},
           lambda v: [call("bookmark_page")]),
    Intent(NAME, "bookmark_folder",
           ["bookmark this page in {folder}", "bookmark this in the {folder} folder",
            "save this page to my {folder} bookmarks", "add this page to the {folder} folder",
            "bookmark the current page under {folder}", "put a bookmark for this in {folder}",
            "file this page under {folder}"],
           ["bookmark it in {folder}", "save to bookmarks, folder {folder}"],
           ["bookmark this page in a folder", "save this to a bookmark folder", "bookmark it in the folder"],
           {"folder": FOLDER}, lambda v: [call("bookmark_page", folder=v["folder"])]),
    Intent(NAME, "find",
           ["find {find}", "find {find} on this page", "search this page for {find}",
            "look for {find} on the page", "highlight {find}", "find the words {find}",
            "where does it say {find}", "search the page for {find}", "locate {find} on this page",
            "ctrl-f {find}", "find where the page mentions {find}"],
           ["is {find} anywhere on this page", "I'm looking for {find} on this page",
            "on this page, find {find}"],
           ["find something on this page", "search this page", "find the word on the page",
            "look for it on the page"],
           {"find": FIND}, lambda v: [call("find_in_page", text=v["find"])]),
    Intent(NAME, "zoom",
           ["zoom to {pct}", "set the zoom to {pct}", "zoom the page to {pct}", "make the page {pct}",
            "change the zoom to {pct}", "zoom in to {pct}", "zoom out to {pct}", "set page zoom at {pct}",
            "scale the page to {pct}"],
           ["zoom {pct}", "page zoom {pct} please", "I want the page at {pct}", "{pct} zoom"],
           ["zoom in", "zoom out", "zoom the page", "change the zoom", "make the text bigger"],
           {"pct": PERCENT}, lambda v: [call("zoom_page", percent=v["pct"])]),
    Intent(NAME, "zoom_reset",
           ["reset the zoom", "reset zoom", "set the zoom back to normal", "zoom back to 100%",
            "put the zoom back to default", "restore the normal zoom"],
           ["normal zoom please", "the zoom is off, reset it"], [], {},
           lambda v: [call("zoom_page", percent=100)]),
    Intent(NAME, "timer",
           ["set a timer for {mins}", "start a {mins} timer", "set a {mins} timer", "remind me in {mins}",
            "start a timer for {mins}", "notify me in {mins}", "count down {mins}", "ping me in {mins}",
            "give me a {mins} timer", "time {mins} for me"],
           ["timer for {mins}", "{mins} timer please", "I need a timer for {mins}", "timer, {mins}",
            "can you set a timer for {mins}"],
           ["set a timer", "start a timer", "remind me later", "give me a timer"],
           {"mins": MINUTES}, lambda v: [call("set_timer", minutes=v["mins"])]),
    Intent(NAME, "timer_label",
           ["set a timer for {mins} for {tlabel}", "start a {mins} timer for {tlabel}",
            "set a {tlabel} timer for {mins}", "start a timer called {tlabel} for {mins}",
            "set a {mins} timer labeled {tlabel}", "remind me in {mins} about {tlabel}",
            "set a timer named {tlabel} for {mins}"],
           ["{tlabel} timer, {mins}", "I need a {mins} timer for {tlabel}",
            "timer for {tlabel}: {mins}"],
           ["set a timer for {tlabel}", "start a {tlabel} timer", "remind me about {tlabel}"],
           {"mins": MINUTES, "tlabel": TLABEL},
           lambda v: [call("set_timer", minutes=v["mins"], label=v["tlabel"])]),
    Intent(NAME, "group",
           ["group the {tab} tabs as {group}", "put the {tab} tabs in a group called {group}",
            "group my {tab} tabs into {group}", "make a tab group {group} with the {tab} tabs",
            "group all tabs with {tab} in the title under {group}",
            "move the {tab} tabs into a group named {group}"],
           ["the {tab} tabs should be a group called {group}", "tab group {group}: the {tab} tabs"],
           ["group my tabs", "group the {tab} tabs", "make a tab group called {group}",
            "put these tabs in a group"],
           {"tab": TAB, "group": GROUP},
           lambda v: [call("group_tabs", name=v["group"], title_contains=v["tab"])]),
    Intent(NAME, "group_color",
           ["group the {tab} tabs as {group} in {color}", "put the {tab} tabs in a {color} group called {group}",
            "make a {color} tab group {group} with the {tab} tabs",
            "group my {tab} tabs into {group} and make it {color}",
            "group all {tab} tabs under {group}, colored {color}"],
           ["a {color} group called {group} for the {tab} tabs"],
           ["make a {color} tab group", "group the tabs in {color}"],
           {"tab": TAB, "group": GROUP, "color": COLOR},
           lambda v: [call("group_tabs", name=v["group"], title_contains=v["tab"], color=v["color"])]),
    Intent(NAME, "window",
           ["open a new window", "new window", "open another browser window", "give me a new window",
            "start a new browser window", "open a fresh window"],
           ["I need another window", "can I get a new window"], [], {},
           lambda v: [call("new_window")]),
    Intent(NAME, "window_private",
           ["open a new {private} window", "open an {private} window", "start a {private} window",
            "give me a {private} window", "open a {private} browser window", "go {private}"],
           ["I need a {private} window", "{private} window please"], [],
           {"private": PRIVATE}, lambda v: [call("new_window", private=v["private"])]),
    _copy("copy_url", "url",
          ["copy the link", "copy this page's link", "copy the url", "copy the address",
           "copy the link to this page", "copy this page's address", "grab the link",
           "copy the page url to the clipboard"],
          ["I need the link to this page copied", "link to this page, copy it"]),
    _copy("copy_markdown", "markdown",
          ["copy the link as markdown", "copy this page as a markdown link", "copy a markdown link to this page",
           "copy the url in markdown format", "give me a markdown link for this page"],
          ["markdown link to this page, copy it"]),
    _copy("copy_title", "title_and_url",
          ["copy the title and the link", "copy the page title and url", "copy this page's title and address",
           "copy the title followed by the link", "copy the link with its title"],
          ["title plus link, copy it"]),
]

UNSUPPORTED = [
    "go back", "go forward", "reload the page", "refresh this page", "clear my browsing history",
    "download this page", "translate this page", "print this page", "reopen the last closed tab",
    "scroll down", "take a screenshot", "show my downloads", "delete all my cookies",
    "what's the weather today", "tell me a joke", "show my bookmarks", "how many tabs do I have open",
    "cancel my timer", "how much time is left on the timer", "read this page out loud",
    "turn off dark mode", "install this extension", "close the browser", "log me out of this site",
    "save my password", "search the web for cheap flights", "open my last tab", "summarize this page",
    "make this page full screen", "block this site", "turn the volume up", "turn on the kitchen lights",
    "play some music", "send this page to my phone", "rename this tab",
]

UNSUPPORTED_OPS = [
    "delete the bookmark for {short}", "rename the {short} group to {label}", "ungroup the {short} tabs",
    "move this tab to the {short} window", "what is the {short} tab about", "is {short} open in a tab",
    "email this page to {person}", "share this tab with {person}", "search the web for {label}",
    "translate this page to {label}", "cancel the {label} timer", "change the {label} timer to {mins}",
    "how long is left on the {label} timer", "download {short}", "replace {short} with {label} on this page",
    "read me the {short} section", "reopen the {short} tab", "sign me in as {person}",
    "set {short} as my home page", "clear the history from {day}",
]


def catalogue():
    """{NAME: {"system", "tools"}}, exactly as the preset has them."""
    with open(PRESET, encoding="utf-8") as handle:
        env = json.load(handle)
    return {NAME: {"system": env["system"], "tools": env["tools"]}}


def conflicts(env, other):
    """The intents of `other` that are no refusal for `env`: a timer, when both set timers."""
    return TIMERS.get(other, set()) if NAME in (env, other) and env in TIMERS else set()


def register():
    I.ENVIRONMENTS[NAME] = (INTENTS, UNSUPPORTED)
    U.TEMPLATES[NAME] = UNSUPPORTED_OPS
