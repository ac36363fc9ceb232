"""A second round of phrasings for the browser environment (`datagen.py --browser-phrasings`,
phase 79).

Written from `browser.json`'s tool schemas and descriptions only, never from a held-out browser
phrasing. Phases 72-78 answer ~89% of the generator's own browser requests but ~74% of the
held-out ones, and depth stopped closing that gap at twelve layers (LOG.md, session 36): the
model keys on sentence shapes it has seen, so this adds shapes (questions, statements of a need
or a reason, terse notes, other verbs, the value first) rather than values. Appended to each
intent's lists like more_phrasings.py's rounds, so the index-based split keeps every earlier
phrasing on its side.
"""
import more_phrasings

PHRASINGS = {
    "open": dict(
        imp=["launch {url}", "open the website {url}", "go over to {url}", "fire up {url}", "get me to {url}",
             "jump to {url}", "open the address {url}", "point the browser at {url}", "display {url}",
             "open the url {url}", "take me over to {url}", "pop open {url}"],
        alt=["I want to visit {url}", "could you bring up {url}", "{url} please", "need {url}",
             "I'd like to open {url}", "let me see {url}", "what's on {url}? open it",
             "the site is {url}, go there"],
        missing=["go to the website", "open that address", "load the site", "take me to the page I said"]),
    "open_where": dict(
        imp=["launch {url} {where}", "show {url} {where}", "get {url} up {where}", "open the site {url} {where}",
             "take me to {url} {where}", "head over to {url} {where}"],
        alt=["{url}, {where}", "I'd like {url} {where}", "could you open {url} {where}",
             "put {url} {where}"]),
    "switch": dict(
        imp=["go to the {tab} tab", "open my {tab} tab again", "show me the {tab} tab",
             "flip to the {tab} tab", "move to the {tab} tab", "return to the {tab} tab",
             "find my {tab} tab", "select the {tab} tab", "activate the tab named {tab}",
             "switch over to {tab}", "go back to {tab}"],
        alt=["I need the {tab} tab", "which tab has {tab}? switch to it", "back to the {tab} tab please",
             "let me see the {tab} tab", "I was on the {tab} tab, take me back", "the tab with {tab}"]),
    "close_current": dict(
        imp=["close this one", "close the active tab", "close out this tab", "remove this tab",
             "close the tab I'm looking at", "exit this tab"],
        alt=["I'm finished with this page, close the tab", "done here, close this tab",
             "no need for this tab anymore", "can this tab be closed"]),
    "close_others": dict(
        imp=["close all the other tabs", "close every other tab", "close all tabs except the current one",
             "shut every other tab", "clear out the other tabs", "close the rest of the tabs"],
        alt=["I only need this tab, close the others", "everything but this tab can go",
             "too much clutter, keep just this tab"]),
    "close_duplicates": dict(
        imp=["close the tabs that are duplicates", "remove duplicate tabs", "shut the duplicate tabs",
             "close any tab that's open more than once", "dedupe my tabs"],
        alt=["some pages are open twice, close the extra copies", "I've got duplicate tabs, clean them up"]),
    "close_matching": dict(
        imp=["close the tabs with {tab} in the title", "close all {tab} tabs", "close tabs about {tab}",
             "remove the {tab} tabs", "close out the {tab} tabs", "kill the {tab} tabs",
             "close every tab titled {tab}"],
        alt=["I'm finished with the {tab} tabs, close them", "the tabs about {tab} can be closed",
             "no more {tab} tabs please, close them"]),
    "pin": dict(
        imp=["pin it", "pin the page", "pin the tab I'm on", "make this a pinned tab"],
        alt=["I want this tab pinned", "could you pin the current tab", "keep this one pinned please"]),
    "unpin": dict(
        imp=["unpin it", "unpin the page", "unpin the tab I'm on", "take the pin off this tab"],
        alt=["I don't want this tab pinned anymore", "could you unpin the current tab"]),
    "mute": dict(
        imp=["turn off the audio on {which}", "mute the audio of {which}", "kill the sound on {which}",
             "quiet {which}", "put {which} on mute"],
        alt=["{which} is making noise, mute it", "I don't want to hear {which}",
             "could you mute {which}", "please silence {which}"]),
    "unmute": dict(
        imp=["turn on the sound for {which}", "unmute the audio of {which}", "take {which} off mute",
             "restore the sound on {which}", "turn the audio back on for {which}"],
        alt=["I want to hear {which} again", "could you unmute {which}", "{which} should have sound again"]),
    "bookmark": dict(
        imp=["save this as a bookmark", "bookmark the page", "add a bookmark", "make a bookmark of this page",
             "bookmark the site I'm on", "save a bookmark for this page"],
        alt=["I want to bookmark this", "could you bookmark the page", "save this page for later as a bookmark",
             "I'd like to come back to this page, bookmark it"]),
    "bookmark_folder": dict(
        imp=["save this page under {folder}", "bookmark the page in my {folder} folder",
             "add a bookmark to {folder}", "store this page in the {folder} bookmark folder",
             "put this page in {folder}", "save a bookmark in {folder}"],
        alt=["this one goes in {folder}, bookmark it", "could you bookmark this under {folder}",
             "bookmark this, the folder is {folder}", "I want this page bookmarked in {folder}"],
        missing=["bookmark this under a folder", "put this page in my bookmark folder"]),
    "find": dict(
        imp=["look for {find}", "search for {find} on this page", "find the text {find}",
             "highlight {find} on the page", "find every mention of {find}", "show me where {find} is on this page",
             "search the current page for {find}", "find the phrase {find}", "scan this page for {find}",
             "look up {find} on this page"],
        alt=["where is {find} on this page", "does this page mention {find}", "I can't find {find} on this page",
             "could you find {find} on the page", "on the page: {find}", "find on page: {find}"],
        missing=["find the text", "search the page for it", "highlight the word"]),
    "zoom": dict(
        imp=["set zoom to {pct}", "zoom this page to {pct}", "adjust the zoom to {pct}", "magnify the page to {pct}",
             "put the zoom at {pct}", "zoom the tab to {pct}", "resize the page to {pct}", "make it {pct} zoom"],
        alt=["could you zoom to {pct}", "I'd like the zoom at {pct}", "the text is too small, zoom to {pct}",
             "the page is too big, zoom out to {pct}", "zoom level {pct}", "I want {pct} zoom"],
        missing=["zoom in a bit", "make the page smaller", "change the page zoom", "zoom the page out"]),
    "zoom_reset": dict(
        imp=["reset the page zoom", "go back to the default zoom", "set the zoom to 100 percent",
             "undo the zoom", "zoom back to normal size", "make the page normal size again"],
        alt=["the zoom is weird, put it back to normal", "could you reset the zoom", "default zoom please"]),
    "timer": dict(
        imp=["set me a {mins} timer", "alert me in {mins}", "let me know in {mins}", "start counting {mins}",
             "put on a {mins} timer", "create a timer for {mins}", "buzz me in {mins}",
             "start a countdown of {mins}", "time me for {mins}"],
        alt=["I need {mins} on a timer", "could you time {mins}", "in {mins} let me know",
             "a {mins} timer", "wake me up in {mins}", "{mins} on the clock please"],
        missing=["set a countdown", "start the timer", "time something for me", "let me know in a bit"]),
    "timer_label": dict(
        imp=["set a {mins} timer for {tlabel}", "remind me about {tlabel} in {mins}",
             "start a {tlabel} timer for {mins}", "create a timer for {mins} labeled {tlabel}",
             "give me a {mins} timer for {tlabel}", "set a timer of {mins}, label it {tlabel}",
             "alert me in {mins} for {tlabel}"],
        alt=["{mins} for {tlabel}, set a timer", "I need a timer for {tlabel}, {mins}",
             "could you time {mins} for {tlabel}", "in {mins} remind me of {tlabel}"],
        missing=["set a timer labeled {tlabel}", "start a timer for {tlabel} please"]),
    "group": dict(
        imp=["group the tabs about {tab} as {group}", "make a group {group} out of the {tab} tabs",
             "put all the {tab} tabs into a group named {group}", "group the {tab} tabs and call the group {group}",
             "create a tab group {group} for the {tab} tabs", "gather the {tab} tabs into {group}",
             "bundle the {tab} tabs into a group called {group}"],
        alt=["I want the {tab} tabs grouped as {group}", "could you group the {tab} tabs under {group}",
             "group called {group}, with the {tab} tabs", "the {tab} tabs go in a group named {group}"],
        missing=["group these tabs", "make a tab group", "put the {tab} tabs in a group",
                 "group the tabs under {group}"]),
    "group_color": dict(
        imp=["group the {tab} tabs as {group} and color it {color}", "make a {color} group {group} from the {tab} tabs",
             "put the {tab} tabs in a group named {group}, color {color}",
             "create a {color} tab group called {group} for the {tab} tabs"],
        alt=["I want the {tab} tabs in a {color} group called {group}",
             "group {group} in {color} with the {tab} tabs"],
        missing=["make the group {color}", "put the {tab} tabs in a {color} group"]),
    "window": dict(
        imp=["open another window", "make a new window", "create a new browser window", "open a second window",
             "spawn a new window", "open up a new window"],
        alt=["I'd like a new window", "could you open a new window", "a new browser window please"]),
    "window_private": dict(
        imp=["open a window in {private} mode", "make a new {private} window", "launch a {private} window",
             "switch to a {private} window", "open up an {private} window"],
        alt=["I want to browse {private}", "could you open a {private} window", "a {private} window please"]),
    "copy_url": dict(
        imp=["copy the page link", "copy the url of this page", "put the link on my clipboard",
             "copy this link", "copy the web address", "copy the current url"],
        alt=["I want to share this page, copy the link", "could you copy the link to this page",
             "can I get the url copied", "the link to this page, on the clipboard please"]),
    "copy_markdown": dict(
        imp=["copy a markdown link", "copy this page's link in markdown", "copy the link formatted as markdown",
             "put a markdown link to this page on the clipboard"],
        alt=["I need this page as a markdown link", "could you copy the link as markdown"]),
    "copy_title": dict(
        imp=["copy the page title with the url", "copy the title and the address", "copy the title plus the link",
             "copy this page's name and link"],
        alt=["I want the title and link copied", "could you copy the title along with the url"]),
}


def extend():
    """Append the round to the browser intents' phrasing lists (after `browser.register()`)."""
    more_phrasings.append({("browser", name): kinds for name, kinds in PHRASINGS.items()})
