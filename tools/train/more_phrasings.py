"""Extra phrasings for the two weakest environments (phase 12, `datagen.py --more-phrasings`).

Written from the tool schemas and descriptions only, like intents.py. The models up to
phase 11 fit their training phrasings (loss ~0.01) far better than held-out ones (~0.15),
so these add new sentence shapes rather than more values. They are appended to each
intent's lists, so the index-based split (every 8th phrasing is validation-only) keeps
every earlier phrasing on its side and phase 3's validation set stays held out.
"""
import re

import intents as I

MORE = {
    ("productivity", "timer"): dict(
        imp=["give me a {dur} timer", "set me a timer for {dur}", "begin a {dur} countdown",
             "set the timer for {dur}", "create a timer for {dur}", "kick off a {dur} timer",
             "start counting down {dur}", "please time {dur}"],
        alt=["I'd like a timer for {dur}", "could I get a {dur} timer", "a timer for {dur}, please",
             "would you start a timer for {dur}", "I want a {dur} timer", "let me know when {dur} is up"]),
    ("productivity", "timer_clock"): dict(
        imp=["set a timer to ring {clock}", "start a timer that stops {clock}", "create a timer ending {clock}",
             "make the timer go off {clock}"],
        alt=["I want a timer to go off {clock}", "could you set a timer that ends {clock}",
             "a timer that rings {clock}, please"]),
    ("productivity", "reminder"): dict(
        imp=["set me a reminder to {msg} {when}", "alert me {when} to {msg}", "give me a reminder {when} to {msg}",
             "schedule a reminder to {msg} {when}", "put in a reminder to {msg} {when}",
             "create a reminder for {when} to {msg}", "set up a reminder to {msg} {when}",
             "add a reminder {when}: {msg}", "remind me to {msg}, {when}"],
        alt=["I want a reminder to {msg} {when}", "would you remind me to {msg} {when}",
             "I'd like to be reminded to {msg} {when}", "{when} I need to {msg}, remind me",
             "reminder {when}: {msg}", "can you ping me {when} to {msg}", "make sure I {msg} {when}"],
        missing=["remind me later", "can you remind me to {msg}", "set up a reminder to {msg}"]),
    ("productivity", "event"): dict(
        imp=["create an event named {title} {when}", "make a calendar entry for {title} {when}",
             "add {title} {when} to my calendar", "put {title} in my calendar {when}",
             "block out time for {title} {when}", "set up an event called {title} {when}",
             "enter {title} in the calendar {when}", "create {title} on my calendar {when}"],
        alt=["I've got {title} {when}, put it on the calendar", "there's {title} {when}, please add it to my calendar",
             "could you add {title} to my calendar {when}", "I'd like to schedule {title} {when}",
             "{when} I have {title}, add it to my calendar", "add to my calendar: {title}, {when}"]),
    ("productivity", "event_location"): dict(
        imp=["add {title} {when} at {loc} to my calendar", "create an event named {title} at {loc} {when}",
             "put {title} at {loc} on my calendar {when}", "set up an event called {title} at {loc} {when}",
             "schedule {title} {when}, location {loc}", "block out time for {title} at {loc} {when}"],
        alt=["I have {title} {when} at {loc}, please schedule it", "could you schedule {title} at {loc} {when}",
             "calendar: {title} at {loc} {when}", "{when} there's {title} at {loc}, add it to my calendar"]),
    ("productivity", "task"): dict(
        imp=["add {task} to my list", "put {task} on my to-do", "create a to-do item to {task}",
             "add a to-do to {task}", "log a task: {task}", "add a new task: {task}", "make a to-do to {task}",
             "put a task on my list to {task}", "add to my tasks: {task}"],
        alt=["I have to {task}, put it on my to-do list", "could you add {task} to my tasks",
             "I'd like to add a task: {task}", "add this to my to-do list: {task}", "one more task: {task}",
             "there's a new task, {task}"]),
    ("productivity", "task_priority"): dict(
        imp=["add a task to {task}, {prio} priority", "create a {prio}-priority to-do to {task}",
             "put {task} on my to-do list with {prio} priority", "add {task} with a priority of {prio}",
             "make {task} a {prio} priority task", "set up a {prio} priority task to {task}"],
        alt=["{prio} priority task: {task}", "I need to {task}, mark it {prio} priority",
             "could you add a {prio} priority task to {task}", "new task, {prio} priority: {task}",
             "add this as {prio} priority: {task}"]),
    ("productivity", "note"): dict(
        imp=["record a note: {note}", "put down a note: {note}", "make a note: {note}", "note down {note}",
             "write this down: {note}", "add a note that says {note}", "store a note: {note}",
             "create a note saying {note}"],
        alt=["I want to make a note: {note}", "can you write down {note}", "could you save a note saying {note}",
             "here's a note: {note}", "memo: {note}", "a note for myself: {note}", "please jot this down: {note}"]),
    ("productivity", "note_title"): dict(
        imp=["save a note titled {ntitle} saying {note}", "create a note called {ntitle}: {note}",
             "make a note with the title {ntitle}: {note}", "jot down a note titled {ntitle}: {note}",
             "add a note named {ntitle} that says {note}"],
        alt=["note called {ntitle}: {note}", "could you save a note named {ntitle} saying {note}",
             "a note titled {ntitle}: {note}"]),
    ("data_capture", "contact"): dict(
        imp=["add a new contact called {who}", "make a contact for {who}", "put {who} in my contacts",
             "save {who} to my contacts", "create a contact named {who}", "add {who} to my address book",
             "store a new contact: {who}", "enter {who} as a contact"],
        alt=["I'd like to save {who} as a contact", "could you add {who} to my contacts",
             "please save {who} in my contacts", "new contact, {who}", "I met {who}, save them as a contact"]),
    ("data_capture", "contact_phone"): dict(
        imp=["save {who} with the number {phone}", "put {who} in my contacts, number {phone}",
             "add a contact {who} with phone {phone}", "store {who}'s number, {phone}",
             "create a new contact {who}, phone number {phone}", "add {who} to my address book with number {phone}",
             "save the number {phone} for {who}", "add {phone} as {who}'s number"],
        alt=["could you save {who} with the number {phone}", "{who} can be reached at {phone}, add them to my contacts",
             "I'd like to add {who}, phone {phone}", "the number for {who} is {phone}, please save it",
             "new contact: {who}, number {phone}"]),
    ("data_capture", "contact_email"): dict(
        imp=["save {who} with email {email}", "put {who} in my contacts with the email {email}",
             "create a new contact {who}, email address {email}", "add {who}'s email {email} to my contacts",
             "store {who} with the email address {email}", "add a contact for {who} at {email}"],
        alt=["{who}'s email address is {email}, please save it", "could you add {who} with email {email}",
             "new contact {who}, email {email}", "I'd like to save {who}, {email}"]),
    ("data_capture", "contact_full"): dict(
        imp=["save {who} with phone {phone} and email {email}", "put {who} in my contacts: number {phone}, email {email}",
             "add a new contact {who}, {phone}, {email}", "store {who}, phone {phone}, email address {email}"],
        alt=["could you save {who}, number {phone}, email {email}", "{who}: phone {phone}, email {email}, add as a contact",
             "new contact: {who}, phone {phone}, email {email}"]),
    ("data_capture", "expense"): dict(
        imp=["log a {cat} expense of {amt}", "add an expense of {amt} for {cat}", "record {amt} spent on {cat}",
             "put down {amt} for {cat}", "log {amt} under {cat}", "enter {amt} for {cat}",
             "record an expense: {amt} on {cat}", "log {amt} in {cat}"],
        alt=["I just spent {amt} on {cat}", "paid {amt} for {cat}", "{amt} for {cat}, log it",
             "could you log {amt} for {cat}", "I dropped {amt} on {cat}", "today I spent {amt} on {cat}",
             "{cat} expense: {amt}"]),
    ("data_capture", "expense_merchant"): dict(
        imp=["log {amt} at {merchant} for {cat}", "record {amt} spent at {merchant} on {cat}",
             "add a {cat} expense of {amt} at {merchant}", "log a {amt} {cat} purchase at {merchant}",
             "put down {amt} at {merchant} under {cat}", "enter an expense of {amt} for {cat} at {merchant}"],
        alt=["I paid {amt} at {merchant} for {cat}", "just spent {amt} on {cat} at {merchant}",
             "could you log {amt} for {cat} at {merchant}", "spent {amt} on {cat} at {merchant} today",
             "{merchant}, {amt}, {cat}"]),
    ("data_capture", "meal"): dict(
        imp=["put {food} in my food log", "record a meal of {food}", "track a meal: {food}", "add a meal: {food}",
             "save {food} to my food log", "log my meal: {food}"],
        alt=["I just ate {food}", "I've had {food}", "just finished {food}", "could you log {food} for me",
             "my meal was {food}", "food log: {food}"]),
    ("data_capture", "meal_type"): dict(
        imp=["log {food} for my {meal}", "record my {meal}: {food}", "add {food} as {meal}",
             "log a {meal} of {food}", "put {food} down as my {meal}", "save my {meal} as {food}"],
        alt=["I ate {food} for {meal} today", "{meal} today was {food}", "had {food} for {meal}",
             "for {meal} I had {food}", "my {meal} was {food}", "could you log {food} for {meal}"]),
    ("data_capture", "water"): dict(
        imp=["log that I drank {water} of water", "record {water} water", "add {water} of water to my log",
             "track {water} of water intake", "put {water} of water in my water log"],
        alt=["I just drank {water} of water", "had {water} of water", "{water} of water, please log it",
             "drank {water} water just now", "could you log {water} of water"]),
    ("data_capture", "weight"): dict(
        imp=["record a weight of {kg}", "save {kg} as my weight", "log my body weight: {kg}",
             "enter my weight as {kg}", "put my weight down as {kg}", "track a weight of {kg}"],
        alt=["I weighed {kg} today", "weighed myself, {kg}", "today's weight: {kg}", "my scale shows {kg}",
             "I'm {kg} this morning", "could you log my weight at {kg}"]),
}


# Phase 15 (`--more-phrasings 2`): a second round, now also for wearable and kitchen_appliance
# (the next-weakest environments), and more shapes for the two above. Same rules as MORE.
SECOND = {
    ("kitchen_appliance", "oven"): dict(
        imp=["get the oven to {ot}", "bring the oven up to {ot}", "fire up the oven to {ot}",
             "switch the oven on at {ot}", "start preheating to {ot}", "preheat it to {ot}"],
        alt=["I'm baking, oven at {ot}", "could you set the oven for {ot}", "I'd like the oven preheated to {ot}",
             "the recipe says {ot}, preheat the oven", "oven, {ot}"]),
    ("kitchen_appliance", "coffee_brew"): dict(
        imp=["fire up the coffee maker", "turn on the coffee maker", "switch on the coffee machine",
             "run the coffee maker", "put some coffee on"],
        alt=["I'd love a coffee", "could you brew some coffee", "I want coffee, start the machine"]),
    ("kitchen_appliance", "coffee_stop"): dict(
        imp=["cut the coffee maker", "end the brew", "switch off the coffee maker"],
        alt=["no more coffee, turn the machine off", "could you stop the coffee maker"]),
    ("kitchen_appliance", "coffee_warm"): dict(
        imp=["hold the coffee warm", "leave the coffee maker on warm", "switch the coffee maker to warm"],
        alt=["could you keep the coffee warm", "I want my coffee kept warm"]),
    ("kitchen_appliance", "dishwasher"): dict(
        imp=["turn the dishwasher on", "fire up the dishwasher", "switch on the dishwasher", "do the dishes"],
        alt=["could you run the dishwasher", "dishes are loaded, run it", "I'd like the dishwasher started"]),
    ("kitchen_appliance", "dishwasher_cycle"): dict(
        imp=["do a {cycle} wash in the dishwasher", "set the dishwasher to {cycle} and start it",
             "run the {cycle} program on the dishwasher", "wash on {cycle}"],
        alt=["could you run the dishwasher on {cycle}", "I want a {cycle} cycle on the dishwasher",
             "dishwasher, {cycle} please"]),
    ("kitchen_appliance", "timer"): dict(
        imp=["create a {label} timer for {min}", "time {min} for the {label}", "set {min} on the {label} timer",
             "start counting {min} for the {label}", "make a {min} timer called {label}",
             "set a kitchen timer for the {label}, {min}", "put {min} on a timer for the {label}"],
        alt=["the {label} takes {min}, time it", "could you set a {min} timer for the {label}",
             "I'd like a {label} timer of {min}", "{min} for the {label}, please", "timer: {label}, {min}"]),
    ("kitchen_appliance", "status"): dict(
        imp=["give me the {app} status", "report on the {app}", "check how the {app} is doing",
             "see if the {app} is finished", "find out what the {app} is doing"],
        alt=["is the {app} finished", "what's going on with the {app}", "could you check the {app}",
             "has the {app} finished", "I'd like the status of the {app}"]),
    ("wearable", "reply"): dict(
        imp=["send {sender} back {reply}", "reply back to {sender}: {reply}", "answer {sender} with {reply}",
             "write {sender} back saying {reply}", "respond to {sender} saying {reply}",
             "message {sender} back: {reply}"],
        alt=["tell {sender} I said {reply}", "could you reply to {sender} with {reply}",
             "{sender} wrote, answer {reply}", "send this to {sender} as a reply: {reply}",
             "reply to {sender}'s text: {reply}"]),
    ("wearable", "dismiss"): dict(
        imp=["remove {sender}'s notification", "close the notification from {sender}", "clear out {sender}'s alert",
             "hide {sender}'s notification", "dismiss the alert from {sender}"],
        alt=["could you dismiss {sender}'s notification", "I don't need {sender}'s message, clear it",
             "get {sender}'s notification off my screen"]),
    ("wearable", "workout"): dict(
        imp=["log a {wt} workout", "start recording {wt}", "track my {wt}", "begin a {wt} session",
             "start a new {wt} workout"],
        alt=["I'm about to go {wt}, track it", "could you start a {wt} workout", "starting {wt} now, record it",
             "track this {wt} workout"]),
    ("wearable", "end_workout"): dict(
        imp=["stop recording my workout", "end this workout", "finish tracking my workout", "close out my workout"],
        alt=["I'm done, end the workout", "could you stop my workout", "workout's finished, stop tracking"]),
    ("wearable", "find_phone"): dict(
        imp=["ring the phone", "get my phone to ring", "make my phone beep", "find where my phone is"],
        alt=["I misplaced my phone", "could you ring my phone", "can't see my phone anywhere, ring it"]),
    ("productivity", "timer"): dict(
        imp=["time {dur} for me", "run a {dur} timer", "put a {dur} timer on", "count down {dur}"],
        alt=["could you time {dur}", "{dur} timer please", "I need {dur} on the clock"]),
    ("productivity", "reminder"): dict(
        imp=["remind me {when} that I need to {msg}", "set a reminder for {when}: {msg}",
             "nudge me {when} to {msg}", "ping me {when} to {msg}"],
        alt=["could you remind me {when} to {msg}", "I have to {msg} {when}, set a reminder",
             "don't let me forget to {msg} {when}"]),
    ("productivity", "event"): dict(
        imp=["schedule {title} for {when}", "add an event {title} {when}", "pencil in {title} {when}",
             "book {title} {when} on my calendar"],
        alt=["I have {title} {when}", "please put {title} on my calendar {when}",
             "could you create an event for {title} {when}"]),
    ("productivity", "task"): dict(
        imp=["add {task} to my to-do list", "remember to add a task to {task}", "note a task to {task}"],
        alt=["I need to {task}, add it to my tasks", "put this on my list: {task}", "to-do: {task}"]),
    ("productivity", "note"): dict(
        imp=["jot this down: {note}", "take down a note: {note}", "make a quick note: {note}"],
        alt=["I want to remember this: {note}", "could you note that {note}", "quick note: {note}"]),
    ("data_capture", "contact_phone"): dict(
        imp=["add {who} with number {phone}", "save {who} under the number {phone}"],
        alt=["here's {who}'s number: {phone}, save it", "{who}, {phone}, add to my contacts"]),
    ("data_capture", "expense"): dict(
        imp=["log {amt} spent for {cat}", "add {amt} to my {cat} expenses", "book {amt} under {cat}"],
        alt=["I spent {amt} for {cat}", "{amt} went on {cat}, log it", "could you record {amt} for {cat}"]),
    ("data_capture", "meal_type"): dict(
        imp=["log {food} as my {meal}", "add {food} to my {meal} log"],
        alt=["{meal} was {food} today", "I had {food} at {meal}", "ate {food} for {meal}, log it"]),
    ("data_capture", "water"): dict(
        imp=["add {water} water to my log", "log that I had {water} of water"],
        alt=["I just finished {water} of water", "{water} of water just now"]),
    ("data_capture", "weight"): dict(
        imp=["log today's weight as {kg}", "put down {kg} for my weight"],
        alt=["I'm at {kg}", "my weight this morning was {kg}"]),
}


# Phase 19 (`--more-phrasings 3`): a third round for the two environments still under 70%,
# every intent, with shapes the first two rounds lack (value first, clause order swapped,
# terse list-like forms). Same rules as MORE.
THIRD = {
    ("productivity", "timer"): dict(
        imp=["start timing {dur}", "get a {dur} timer going", "set up a {dur} countdown", "make it a {dur} timer"],
        alt=["{dur}, set a timer", "need a {dur} countdown", "can I have a {dur} timer", "timer please, {dur}"]),
    ("productivity", "timer_clock"): dict(
        imp=["have a timer go off {clock}", "set the timer to end {clock}", "run a timer until {clock}"],
        alt=["I need the timer to ring {clock}", "timer until {clock}, please"]),
    ("productivity", "reminder"): dict(
        imp=["get me a reminder {when} to {msg}", "drop a reminder to {msg} {when}",
             "make me a reminder for {when}: {msg}", "set a reminder, {msg}, {when}",
             "remind me {when} about this: {msg}", "book a reminder to {msg} {when}"],
        alt=["{when} I must {msg}, remind me", "I'll need to {msg} {when}, so remind me",
             "reminder for {when}: {msg}", "please make sure I remember to {msg} {when}",
             "would you set a reminder {when} to {msg}"]),
    ("productivity", "event"): dict(
        imp=["schedule an event {title} {when}", "log {title} on my calendar {when}",
             "make an event called {title} {when}", "calendar {title} for {when}",
             "add a calendar event, {title}, {when}"],
        alt=["{when} is {title}, put it in my calendar", "there's {title} {when}, schedule it",
             "I'd like {title} on my calendar {when}", "event: {title}, {when}"]),
    ("productivity", "event_location"): dict(
        imp=["add {title} {when} in {loc}", "make an event {title} at {loc} {when}",
             "calendar {title} at {loc} for {when}", "create an event called {title} at {loc} {when}"],
        alt=["{title} is {when} at {loc}, schedule it", "event: {title} at {loc}, {when}",
             "I'm going to {title} at {loc} {when}, add it to my calendar"]),
    ("productivity", "task"): dict(
        imp=["write {task} on my to-do list", "stick {task} on my to-do list", "list a task to {task}",
             "track a task to {task}", "add an item to {task}"],
        alt=["my to-do list needs {task}", "remember this task: {task}", "don't forget the task {task}, add it",
             "new to-do item: {task}", "add to the list: {task}"]),
    ("productivity", "task_priority"): dict(
        imp=["add {task}, priority {prio}", "create a task to {task} marked {prio} priority",
             "list {task} as a {prio} priority task"],
        alt=["task to {task}, it's {prio} priority", "{prio}-priority to-do: {task}",
             "I need a {prio} priority task to {task}"]),
    ("productivity", "note"): dict(
        imp=["write a note: {note}", "save this as a note: {note}", "keep this note: {note}",
             "log a note saying {note}", "put this in a note: {note}"],
        alt=["note this: {note}", "save a quick note, {note}", "remember this note: {note}",
             "can you make a note that {note}"]),
    ("productivity", "note_title"): dict(
        imp=["write a note called {ntitle} saying {note}", "save a note with the title {ntitle}: {note}",
             "create a note, title {ntitle}, saying {note}"],
        alt=["note, title {ntitle}: {note}", "make a note titled {ntitle}, it says {note}"]),
    ("data_capture", "contact"): dict(
        imp=["save a new contact named {who}", "register {who} as a contact", "put {who} into my contacts",
             "make {who} a contact"],
        alt=["add {who}, new contact", "contact to save: {who}", "could you store {who} as a contact"]),
    ("data_capture", "contact_phone"): dict(
        imp=["save {who}, phone {phone}", "enter {who} with the number {phone}", "record {who}'s number as {phone}",
             "create a contact {who} at {phone}"],
        alt=["{who}'s phone is {phone}, add them", "number {phone} belongs to {who}, save it",
             "contact {who}, number {phone}", "I got {who}'s number, {phone}, please save it"]),
    ("data_capture", "contact_email"): dict(
        imp=["save {who}, email {email}", "enter {who} with the email {email}", "record {who}'s email as {email}"],
        alt=["{who} uses {email}, save them as a contact", "contact {who}, email {email}"]),
    ("data_capture", "contact_full"): dict(
        imp=["save {who}, number {phone}, email {email}", "enter {who} with phone {phone} and email {email}"],
        alt=["contact {who}, phone {phone}, email {email}", "{who} is at {phone} and {email}, save them"]),
    ("data_capture", "expense"): dict(
        imp=["note {amt} for {cat}", "charge {amt} to {cat}", "file {amt} under {cat}",
             "log a {amt} expense in {cat}", "add {amt} as a {cat} expense"],
        alt=["{amt} spent on {cat}", "spent {amt} for {cat} today", "{cat}: {amt}",
             "my {cat} cost {amt}", "I paid {amt} on {cat} just now"]),
    ("data_capture", "expense_merchant"): dict(
        imp=["log {amt} from {merchant} under {cat}", "file {amt} at {merchant} as {cat}",
             "add a {amt} expense at {merchant} for {cat}", "note {amt} spent at {merchant}, {cat}"],
        alt=["{amt} at {merchant} for {cat}", "I paid {merchant} {amt} for {cat}",
             "{merchant} charged me {amt} for {cat}, log it", "spent {amt} on {cat}, it was at {merchant}"]),
    ("data_capture", "meal"): dict(
        imp=["note down {food} in my food log", "log a meal of {food}", "enter {food} in my meal log"],
        alt=["I've just eaten {food}", "had {food} just now", "{food}, log it please"]),
    ("data_capture", "meal_type"): dict(
        imp=["log {meal}: {food}", "enter {food} for {meal}", "note my {meal} as {food}"],
        alt=["{food} for {meal}", "{food} was my {meal}", "ate {food} at {meal} today",
             "this {meal} I had {food}"]),
    ("data_capture", "water"): dict(
        imp=["note {water} of water", "enter {water} of water", "log a {water} water"],
        alt=["{water} of water down", "I've had {water} of water", "just drank {water} water"]),
    ("data_capture", "weight"): dict(
        imp=["note my weight as {kg}", "enter {kg} for my weight", "log today's weigh-in: {kg}"],
        alt=["weighed {kg} this morning", "I'm {kg} now", "weigh-in: {kg}"]),
}


def extend(rounds=1):
    """Append the first `rounds` of MORE, SECOND and THIRD to the intents' phrasing lists, once
    per run; the split stays index-based."""
    for table in (MORE, SECOND, THIRD)[:rounds]:
        append(table)


def append(table, repeat=1):
    """Append a round {(env, intent): {kind: phrasings}} to the intents' lists, checking that each
    phrasing names only the intent's slots; with `repeat` > 1 its training phrasings are drawn that
    many times as often (phase 82)."""
    by_key = {(intent.env, intent.name): intent for intents, _ in I.ENVIRONMENTS.values() for intent in intents}
    for key, kinds in table.items():
        intent = by_key[key]
        allowed = set(intent.slots) | ({"phone", "email"} if "who" in intent.slots else set())
        for kind, phrasings in kinds.items():
            for phrasing in phrasings:
                unknown = set(re.findall(r"{(\w+)}", phrasing)) - allowed
                if unknown:
                    raise ValueError(f"{key} {phrasing!r}: no slot {sorted(unknown)}")
            current = getattr(intent, kind)
            current += [p for p in phrasings if p not in current]
            _repeat(current, phrasings, repeat)


def _repeat(current, phrasings, times):
    """Copy the training positions' `phrasings` of `current` until each is there `times` times.
    Every 8th position (validation's) gets again a phrasing already there, so the index-based split
    is unchanged; a list under 8 long has no such phrasing and gets no copies."""
    held = [p for i, p in enumerate(current) if i % 8 == 7]
    copies = [p for i, p in enumerate(current) if i % 8 != 7 and p in phrasings] * (times - 1) if held else []
    while copies:
        current.append(held[len(current) // 8 % len(held)] if len(current) % 8 == 7 else copies.pop(0))
