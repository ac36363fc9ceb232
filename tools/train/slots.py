"""Slot values for the synthetic generator, written from the tool schemas alone.

Every pool is split deterministically: items at index % 8 == 7 are validation-only,
so the validation split measures unseen slot values as well as unseen templates.
"""

ROOM_WORDS = {"kitchen": ["kitchen"], "living_room": ["living room"], "bedroom": ["bedroom"],
              "study": ["study"]}
BAD_ROOMS = ["garage", "bathroom", "hallway", "basement", "dining room", "attic", "porch",
             "laundry room", "guest room", "nursery", "den", "patio"]
COLORS = ["warm white", "cool white", "red", "green", "blue"]
BAD_COLORS = ["purple", "orange", "pink", "yellow", "teal", "magenta", "turquoise", "gold"]
FAN_SPEEDS = ["low", "medium", "high"]
BAD_SPEEDS = ["turbo", "ludicrous", "extreme", "super", "hurricane"]

SONGS = ["Bohemian Rhapsody", "Hotel California", "Shape of You", "Blinding Lights",
         "Hey Jude", "Imagine", "Yesterday", "Wonderwall", "Billie Jean", "Let It Be",
         "Smells Like Teen Spirit", "Rolling in the Deep", "Someone Like You", "Bad Guy",
         "Levitating", "Uptown Funk", "Take On Me", "Dancing Queen", "Purple Rain",
         "Sweet Child O' Mine", "Stairway to Heaven", "Africa", "Clocks", "Viva la Vida",
         "Mr. Brightside", "Thunderstruck", "Despacito", "Halo", "Toxic", "Crazy in Love",
         "As It Was", "Anti-Hero", "Flowers", "Perfect", "Thinking Out Loud", "Believer",
         "Radioactive", "Counting Stars", "Happy", "Shake It Off", "Hallelujah",
         "Wake Me Up", "Titanium", "Lose Yourself", "Superstition", "Respect",
         "Here Comes the Sun", "Fix You", "Creep", "Heroes", "Dreams", "Jolene",
         "Landslide", "Redbone", "Riptide", "Cruel Summer", "Golden Hour", "Yellow",
         "Moonlight Sonata", "Clair de Lune", "Feeling Good", "Fly Me to the Moon"]
ARTISTS = ["Queen", "Taylor Swift", "The Beatles", "Adele", "Drake", "Beyonce", "Coldplay",
           "Ed Sheeran", "Billie Eilish", "Radiohead", "Miles Davis", "Daft Punk", "Eminem",
           "Fleetwood Mac", "Kendrick Lamar", "Dua Lipa", "The Weeknd", "Nirvana", "ABBA",
           "Bruno Mars", "Lady Gaga", "Metallica", "Bob Marley", "Frank Sinatra", "Rihanna",
           "Norah Jones", "Arctic Monkeys", "Harry Styles", "Bach", "Mozart", "Dolly Parton",
           "Stevie Wonder", "Led Zeppelin", "Pink Floyd", "Bad Bunny", "Olivia Rodrigo",
           "John Coltrane", "Elton John", "Lorde", "Tame Impala", "SZA", "Muse", "Hozier",
           "Kacey Musgraves", "Nina Simone", "The Rolling Stones", "Aretha Franklin",
           "Bon Iver"]
ALBUMS = ["Thriller", "Abbey Road", "Rumours", "1989", "Back in Black", "Nevermind",
          "Kind of Blue", "The Dark Side of the Moon", "Random Access Memories", "21",
          "Lemonade", "OK Computer", "Midnights", "Future Nostalgia", "Blue", "Purple Rain",
          "Folklore", "After Hours", "Currents", "Graceland", "Back to Black", "Renaissance",
          "Golden Hour", "Divide"]
GENRES = ["jazz", "classical music", "lo-fi beats", "rock", "hip hop", "country", "blues",
          "reggae", "pop", "techno", "heavy metal", "bossa nova", "80s hits", "chill jazz",
          "piano music", "workout music", "indie folk", "R&B", "salsa", "ambient music",
          "90s rock", "k-pop", "soul", "disco", "acoustic covers", "sleep sounds",
          "punk rock", "gospel", "movie soundtracks", "latin pop", "smooth jazz", "opera"]

TIMER_LABELS = ["pasta", "eggs", "rice", "cookies", "bread", "pizza", "roast", "chicken",
                "tea", "steak", "cake", "potatoes", "lasagna", "muffins", "soup", "brownies",
                "boiled eggs", "garlic bread", "banana bread", "pie", "salmon", "veggies",
                "oatmeal", "noodles", "dumplings", "turkey", "ribs", "popcorn", "cornbread",
                "quiche", "risotto", "bagels", "french fries", "meatballs", "stew", "biscuits",
                "tofu", "broccoli", "pork chops", "cupcakes"]
APPLIANCE_WORDS = {"oven": ["oven"], "coffee_maker": ["coffee maker", "coffee machine"],
                   "dishwasher": ["dishwasher"]}
BAD_APPLIANCES = ["microwave", "toaster", "fridge", "air fryer", "blender", "freezer",
                  "kettle", "stove", "grill", "slow cooker", "rice cooker", "washing machine"]
CYCLES = ["eco", "heavy", "quick"]
BAD_CYCLES = ["sanitize", "rinse", "normal", "delicate", "pots and pans", "steam", "turbo"]

DURATIONS = ["5 minutes", "10 minutes", "45 minutes", "1 hour", "90 seconds", "2 hours",
             "an hour", "half an hour", "20 mins", "1 hour and 15 minutes", "10 min",
             "30 seconds", "three minutes", "an hour and a half", "25 minutes", "15 minutes",
             "8 minutes", "12 minutes", "40 minutes", "3 hours", "2 and a half hours",
             "one minute", "7 minutes", "35 minutes", "90 minutes", "4 minutes",
             "1 minute 30 seconds", "55 minutes", "six minutes", "2 minutes", "18 minutes",
             "twenty minutes", "50 seconds", "3 minutes", "an hour and 20 minutes", "60 minutes"]
CLOCKS = ["at 13:30", "at 5pm", "at 7:45", "at noon", "at 6:15 pm", "at 9", "at 22:00",
          "at 4:30", "at midnight", "at 11:05 am", "at 3 pm", "at 8:20", "at 16:40",
          "at half past two", "at quarter to six", "at 10am"]
REMINDER_MESSAGES = [
    "call mom", "take my medicine", "pick up the kids", "submit the report", "water the plants",
    "pay the electric bill", "buy milk", "email Sarah", "book a dentist appointment",
    "take out the trash", "check the oven", "walk the dog", "renew my passport",
    "call the bank", "feed the cat", "stretch", "join the team call", "move the car",
    "send the invoice to Acme", "charge my laptop", "pick up dry cleaning",
    "grab coffee with Leo", "review the contract", "order flowers for Anna",
    "drink water", "back up my photos", "return the library books", "call grandma",
    "prepare slides for Monday", "pay rent", "check on the laundry", "buy a birthday card",
    "text Jake about dinner", "schedule the car service", "cancel the gym membership",
    "update my resume", "bring the umbrella", "confirm the hotel booking", "pack my gym bag",
    "defrost the chicken", "take the cake out", "print the boarding pass",
    "sign the permission slip", "water the garden", "refill my prescription",
    "call the plumber", "read chapter 5", "turn in my timesheet"]
WHEN = ["at 5pm", "tomorrow at 9am", "in 20 minutes", "tonight at 8", "on Friday at noon",
        "next Monday at 10am", "at 7:30", "in an hour", "this evening", "tomorrow morning",
        "at 6 pm today", "on March 3rd", "in two hours", "Saturday at 3pm", "at noon",
        "tomorrow", "on Sunday", "at 8:15 tomorrow", "in 45 minutes", "next week",
        "on the 15th at 2pm", "at 11pm", "tonight", "Thursday morning", "in 3 days",
        "at 4:30 this afternoon", "on June 12 at 10:00", "next Tuesday", "in 10 minutes",
        "at 9 tomorrow night", "Friday at 5", "at 14:00", "on Wednesday evening",
        "in 90 minutes", "tomorrow afternoon", "at lunchtime", "on New Year's Eve",
        "at 6:45 am", "before bed tonight", "this Saturday at 10"]
EVENT_TITLES = [
    "Team meeting", "Lunch with Sarah", "Dentist appointment", "Project review",
    "Mom's birthday dinner", "Yoga class", "1:1 with Alex", "Budget planning",
    "Flight to Denver", "Parent-teacher conference", "Book club", "Quarterly sync",
    "Coffee with Priya", "Soccer practice", "Design review", "Haircut", "Date night",
    "Board meeting", "Doctor's appointment", "Product launch", "Game night",
    "Client call with Acme", "Sprint planning", "Piano lesson", "Wedding rehearsal",
    "Interview with Jordan", "Car service", "Study group", "Farewell party for Tom",
    "Vet appointment", "Standup", "Marketing offsite", "Dinner with the Hendersons",
    "Guitar lesson", "Open house", "Team lunch", "Therapy session", "Tennis with Max"]
LOCATIONS = ["Conference Room B", "Blue Bottle Cafe", "Room 204", "Central Park",
             "Joe's Diner", "City Hall", "Main Street Library", "Building 4",
             "Starbucks on 5th", "the office", "Zoom", "Pier 39", "Gate 12", "Studio A",
             "St. Mary's Hospital", "Lincoln Elementary", "the community center",
             "Harbor Grill", "WeWork Downtown", "my place", "Riverside Park", "Room 3B",
             "Union Station", "the gym"]
TASKS = ["buy groceries", "clean the garage", "finish the quarterly report", "call the plumber",
         "fix the leaky faucet", "write thank you notes", "renew car insurance",
         "organize the closet", "read the onboarding doc", "update the budget spreadsheet",
         "book flights for the trip", "return the Amazon package", "sort the mail",
         "plan the team offsite", "replace the air filter", "wash the car",
         "schedule a haircut", "prepare the tax documents", "clean out the fridge",
         "research new laptops", "mow the lawn", "paint the fence", "email the landlord",
         "backup the server", "review pull requests", "buy a gift for Dad",
         "cancel the magazine subscription", "file the expense report", "vacuum the stairs",
         "learn the guitar chords", "draft the newsletter", "pick a paint color",
         "repot the basil", "set up the printer", "donate old clothes", "call the insurance company"]
PRIORITIES = ["low", "medium", "high"]
BAD_PRIORITIES = ["urgent", "critical", "top", "extreme", "maximum"]
NOTE_TEXTS = [
    "the wifi password is sunshine42", "parking spot is level 3 row F", "gate code 4471",
    "Sarah's birthday is June 12", "ideas for the party: tacos, music, balloons",
    "the blue paint is Benjamin Moore 2067", "locker combination 12-34-56",
    "flight confirmation code is QX7PLM", "buy more coffee filters next time",
    "the plumber said the pipe needs replacing in spring",
    "dentist recommended an electric toothbrush", "Leo likes dark chocolate, not milk",
    "tire pressure should be 35 psi", "the recipe needs two cups of flour",
    "meeting room moved to the fourth floor", "Anna's new address is 14 Elm Street",
    "passport expires in 2027", "gym opens at 6am on weekends",
    "book recommendation: The Midnight Library", "car registration number 7XYZ219",
    "call the vet back about the vaccine schedule", "the spare key is under the blue pot",
    "kids' soccer jerseys are size medium", "Q3 revenue target is 2.4 million",
    "hotel check-in is after 3pm", "the printer model is HP 4155",
    "lunch order: two veggie wraps and a soup", "remember the umbrella is in the trunk",
    "Maria prefers email over calls", "the movie we wanted was Past Lives",
    "water the orchid once a week", "password hint: first pet plus year"]
NOTE_TITLES = ["Groceries", "Wifi", "Party ideas", "Book list", "Meeting notes", "Travel",
               "Recipes", "Gift ideas", "Car", "Passwords hint", "Work", "House",
               "Garden", "Kids", "Health", "Movies"]

SENDERS = {"Maya": ["Maya"], "Leo": ["Leo"], "Dr. Patel": ["Dr. Patel", "Dr Patel"],
           "Cactus Team": ["Cactus Team", "the Cactus Team"]}
BAD_SENDERS = ["John", "Sam", "Mom", "Alex", "Dr. Smith", "Emma", "the HR team", "Chris",
               "Priya", "Grandpa", "Nora", "the Design Team"]
REPLY_TEXTS = [
    "On my way!", "Sounds good, see you at 6", "I'll call you back later",
    "Running 10 minutes late", "Thanks, Doctor!", "Can we move it to Friday?", "OK",
    "Love you too", "Yes, I'll be there", "Got it, thanks", "Be there in five",
    "No worries", "Can't talk right now, in a meeting", "Happy birthday!!",
    "Let's do Thursday instead", "Perfect, thank you", "I'm outside",
    "Will do", "See you tomorrow", "Sorry, I missed your call", "Yes please",
    "What time works for you?", "Great job everyone", "I need to reschedule",
    "Thanks for the update", "Call me when you land", "Almost done",
    "Count me in", "Not today, maybe next week", "Just leaving the gym",
    "Please send the results", "LOL that's hilarious", "Meet at the usual spot",
    "I'll bring the snacks", "Confirmed for 3pm", "Miss you"]
WORKOUTS = {"running": ["running", "a run"], "walking": ["walking", "a walk"],
            "cycling": ["cycling", "a bike ride"], "swimming": ["swimming", "a swim"],
            "strength": ["strength", "a strength session"], "yoga": ["yoga", "a yoga session"]}
BAD_WORKOUTS = ["hiking", "rowing", "boxing", "pilates", "tennis", "dancing", "skiing",
                "climbing", "golf", "kayaking", "crossfit", "skating"]

NAMES = ["John Smith", "Maria Garcia", "Wei Chen", "Aisha Khan", "Tom Baker", "Lena Fischer",
         "Carlos Mendez", "Priya Sharma", "James O'Neil", "Sofia Rossi", "Kenji Tanaka",
         "Emily Clarke", "Omar Haddad", "Grace Lee", "Lucas Martin", "Hannah Schmidt",
         "David Kim", "Fatima Ali", "Noah Williams", "Chloe Dubois", "Ravi Patel",
         "Isabella Costa", "Ethan Wright", "Yuki Sato", "Mateo Silva", "Olivia Brown",
         "Ahmed Hassan", "Zoe Turner", "Jonas Berg", "Amara Okafor", "Liam Murphy",
         "Nina Petrova", "Samuel Green", "Mia Johansson", "Diego Torres", "Ava Wilson",
         "Kofi Mensah", "Sara Cohen", "Henry Adams", "Leila Nasser", "Marco Bianchi",
         "Elena Popescu", "Dr. Alan Reed", "Jack Li", "Rosa Alvarez", "Ben Carter"]
EMAIL_DOMAINS = ["gmail.com", "example.com", "outlook.com", "acme.io", "company.org",
                 "yahoo.com", "mail.de", "proton.me"]
CATEGORIES = ["food", "groceries", "transport", "entertainment", "utilities", "shopping"]
CATEGORY_WORDS = {"food": ["food"], "groceries": ["groceries"],
                  "transport": ["transport", "transportation"],
                  "entertainment": ["entertainment"], "utilities": ["utilities"],
                  "shopping": ["shopping"]}
BAD_CATEGORIES = ["travel", "rent", "health", "education", "gifts", "insurance", "pets",
                  "charity", "childcare", "subscriptions"]
MERCHANTS = ["Starbucks", "Whole Foods", "Shell", "Amazon", "Target", "Uber", "Netflix",
             "Chipotle", "Trader Joe's", "Costco", "Best Buy", "AMC Theatres", "Walmart",
             "Lyft", "Spotify", "IKEA", "Safeway", "PG&E", "McDonald's", "Zara", "Kroger",
             "Comcast", "Subway", "H&M", "Aldi", "Delta", "Panera Bread", "Apple Store",
             "Home Depot", "Sephora", "7-Eleven", "Domino's"]
FOODS = ["oatmeal with blueberries", "a turkey sandwich", "chicken caesar salad",
         "two scrambled eggs", "a bowl of ramen", "greek yogurt with honey", "a banana",
         "spaghetti bolognese", "a protein bar", "avocado toast", "a cheeseburger and fries",
         "sushi", "vegetable stir fry", "a slice of pizza", "pancakes with syrup",
         "lentil soup", "an apple", "grilled salmon with rice", "a handful of almonds",
         "beef tacos", "a smoothie", "chicken curry", "a bagel with cream cheese",
         "mac and cheese", "a green salad", "pho", "two boiled eggs", "a burrito bowl",
         "granola with milk", "a chocolate chip cookie", "tomato soup and bread",
         "pad thai", "a croissant", "steak and potatoes", "hummus and carrots",
         "a tuna wrap", "cereal", "fruit salad", "a veggie burger", "popcorn"]
MEALS = ["breakfast", "lunch", "dinner", "snack"]

GENERAL_OFFTOPIC = [
    "what's the weather like today", "tell me a joke", "what is the capital of France",
    "how tall is Mount Everest", "translate hello into Spanish", "what's 15 times 23",
    "who won the game last night", "book me a flight to Chicago", "order a large pizza",
    "call a taxi", "what time is it in Tokyo", "how do I make pancakes",
    "send an email to my boss", "what's the news today", "find a good sushi restaurant nearby",
    "how far is the moon", "recommend a good book", "what does photosynthesis mean",
    "help me write a poem", "is it going to rain tomorrow", "how old is the universe",
    "get me directions to the airport", "what's the stock price of Apple",
    "who wrote Pride and Prejudice", "spell necessary", "what's the meaning of life",
    "tell me about black holes", "convert 10 miles to kilometers", "good morning",
    "thank you", "how are you today", "what can you do", "hello there",
    "what's my horoscope", "buy a new phone charger online", "check my bank balance",
    "post a photo to Instagram", "what's the score of the Lakers game",
    "how many calories are in an avocado", "who is the president of Brazil",
    "define serendipity", "open YouTube", "what's a good name for a dog",
    "flip a coin", "roll a die", "what year did World War II end", "sing me a song",
    "how do you say thank you in Japanese", "I love you", "what should I eat tonight",
    "explain quantum computing", "where is the nearest gas station", "random fact please",
    "how long do I boil an egg", "is the pharmacy open", "summarize this article",
    "what's trending on Twitter", "are you a robot", "what day is it", "lol", "never mind",
    "hmm", "okay", "nothing", "cancel", "forget it"]
