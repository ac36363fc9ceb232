"""A fourth round for the browser environment (`datagen.py --browser-refusals`, phase 83): where
the browser's tools stop.

Written from `browser.json`'s system prompt and schemas only ("Unsupported, ambiguous and
negated requests return no call", "never invent one", group_tabs requires a name). Refusals on
the held-out browser requests have stayed at 13/18 since phase 79. The browser phases never pass
`--unsupported-ops`, so the environment's composed operations (`browser.UNSUPPORTED_OPS`) were
never drawn, and its fixed list of unsupported requests has 35 entries, of which training sees 31
("print this page" is one it holds out, and phase 82 answers it). So this adds:
- more browser actions no tool does (history, reading, tab order, windows, media, settings,
  forms, group and bookmark editing, timer queries) and requests to do nothing, appended to the
  fixed list so its index split holds every 8th out as before;
- more composed operations, and a share (OPS_SHARE) of the browser's training refusals of the
  irrelevant kind drawn from them, with that kind weighted up (IRRELEVANT_SCALE);
- incomplete requests: carrier words with no value after them, a group with no name.
Nothing here mentions printing, so "print this page" stays a held-out test.
"""
import browser as B
import intents as I
import more_phrasings
import unsupported as U

# Whether the round is on; then a share OPS_SHARE of the browser's training irrelevant examples
# is composed from `UNSUPPORTED_OPS` and its irrelevant weight is scaled by IRRELEVANT_SCALE.
ACTIVE = False
OPS_SHARE = 0.3
IRRELEVANT_SCALE = 1.5

UNSUPPORTED = [
    "go back two pages", "go to my home page", "show my history", "reopen the window I closed",
    "restore my last session", "clear the cache", "delete the cookies for this site", "save this page as a PDF",
    "view the page source", "open the developer tools", "select all the text", "read this article to me",
    "switch to reader mode", "stop loading the page", "scroll to the top", "jump to the bottom of the page",
    "duplicate this tab", "move this tab to the left", "move this tab into a new window", "sort my tabs by name",
    "reload every tab", "put this tab to sleep", "which tab is playing sound", "how many windows are open",
    "list my open tabs", "close this window", "minimize the window", "maximize this window",
    "switch to the other window", "collapse the tab group", "remove this tab from its group",
    "ungroup all my tabs", "delete the tab group", "export my bookmarks", "delete this bookmark",
    "edit this bookmark", "show my bookmarks bar", "stop the timer", "pause my timer", "what timers do I have",
    "snooze the timer", "play the video", "pause the video", "skip this ad", "turn on captions",
    "turn the volume down a little", "change my default search engine", "set the browser language to French",
    "update the browser", "disable my ad blocker", "turn off notifications for this site", "fill in my address",
    "submit this form", "sign out of everything", "allow pop-ups on this site", "copy the selected text",
    "copy all the text on this page", "copy this image", "open my downloads folder", "pause the download",
    "cast this tab to the TV", "what's the address of this page", "what time is it", "leave my tabs alone",
    "keep all my tabs open", "leave the zoom as it is", "leave the sound as it is",
]

UNSUPPORTED_OPS = [
    "duplicate the {short} tab", "reload the {short} tab", "save the {short} page as a PDF",
    "open my {short} bookmark", "delete the {short} bookmark folder", "collapse the {short} group",
    "take the {short} tab out of its group", "cast the {short} tab to the {label} TV",
    "pause the video in the {short} tab", "what's the address of the {short} tab",
    "clear the cookies for {short}", "sign out of {short}", "show the history for {short}",
    "fill in the form with {person}'s address", "snooze the {label} timer for {mins}", "stop the {label} timer",
    "move the {short} tab to the end", "sort the {short} tabs", "turn on dark mode on {short}",
    "go back to the page before {short}", "how many {short} tabs are open", "read the {short} article to me",
]

MISSING = {
    "open": ["open the website", "go to the address", "take me to the site", "load the web page"],
    "switch": ["switch to the tab", "go back to my other tab", "switch to the tab I had before"],
    "close_matching": ["close the tabs about that topic", "close some of my tabs"],
    "bookmark_folder": ["bookmark this in a new folder", "save this to one of my folders"],
    "find": ["find the word", "search for the term", "look for the words", "find that phrase",
             "highlight the text"],
    "zoom": ["zoom in some more", "make the page bigger"],
    "timer": ["set a timer for a bit", "start a timer for later", "remind me soon"],
    "group": ["group the {tab} tabs together", "make a group of the {tab} tabs", "group my {tab} tabs"],
    "group_color": ["group the {tab} tabs in {color}", "make the {tab} tabs a {color} group",
                    "put my {tab} tabs in a {color} tab group", "color the {tab} tabs {color}"],
}


def extend():
    """Add the round (after `browser.register()` and the earlier rounds)."""
    I.ENVIRONMENTS[B.NAME][1].extend(u for u in UNSUPPORTED if u not in I.ENVIRONMENTS[B.NAME][1])
    U.TEMPLATES[B.NAME] = U.TEMPLATES[B.NAME] + UNSUPPORTED_OPS
    U.ENV_SHARE[B.NAME] = OPS_SHARE
    more_phrasings.append({(B.NAME, name): {"missing": phrasings} for name, phrasings in MISSING.items()})
    global ACTIVE
    ACTIVE = True
