"""Word lists shared by the catalog generator, the instruction generator, search and the reward.

Everything here is plain data: colour words (the order matters for
:func:`~agentgym_budget.tasks.webshop.reward.normalize_color`, which returns the first
colour of :data:`COLOR_WORDS` found in a string, as WebShop does), option value pools
for the generated catalog, brand syllables, title modifiers and Lucene's stop words.

Example:
    >>> len(COLOR_WORDS), COLOR_WORDS == tuple(sorted(COLOR_WORDS))
    (102, True)
    >>> "navy" in OPTION_POOLS["apparel_color"], "large" in OPTION_POOLS["apparel_size"]
    (True, True)
"""

from __future__ import annotations

from collections.abc import Mapping

__all__: list[str] = []

COLOR_WORDS: tuple[str, ...] = (
    "alabaster", "apricot", "aqua", "ash", "asphalt", "azure", "banana", "beige", "black", "blue", "blush",
    "bordeaux", "bronze", "brown", "burgundy", "camel", "camo", "caramel", "champagne", "charcoal", "cheetah",
    "chestnut", "chocolate", "christmas", "coffee", "cognac", "copper", "coral", "cranberry", "cream", "crystal",
    "dark", "denim", "eggplant", "elephant", "espresso", "fuchsia", "gold", "granite", "grape", "graphite", "grass",
    "gray", "green", "grey", "heather", "indigo", "ivory", "ivy", "khaki", "lavender", "lemon", "leopard", "light",
    "lilac", "lime", "magenta", "maroon", "mauve", "merlot", "midnight", "mint", "mocha", "multicolor", "mushroom",
    "mustard", "natural", "navy", "nude", "olive", "orange", "peach", "pewter", "pink", "plum", "purple", "rainbow",
    "red", "rose", "royal", "rust", "sand", "sapphire", "seashell", "silver", "skull", "slate", "steel", "stone",
    "stonewash", "sunflower", "tan", "taupe", "teal", "tiger", "turquoise", "violet", "walnut", "wheat", "white",
    "wine", "yellow",
)  # fmt: skip
"""WebShop's colour list (``normalize.py``'s 102 words, in its order); a value is normalised to
the first of them it contains as a substring."""

OPTION_POOLS: Mapping[str, tuple[str, ...]] = {
    "apparel_color": (
        "black", "white", "navy", "heather grey", "charcoal", "red", "royal blue", "olive green",
        "burgundy", "khaki", "light pink", "sky blue", "maroon", "forest green", "beige", "mustard yellow",
        "lavender", "coral", "teal", "camel",
    ),
    "apparel_size": ("x-small", "small", "medium", "large", "x-large", "xx-large", "3x-large"),
    "pants_size": (
        "28w x 30l", "30w x 30l", "30w x 32l", "32w x 30l", "32w x 32l", "34w x 30l", "34w x 32l",
        "36w x 32l", "38w x 32l", "40w x 30l",
    ),
    "shoe_size": (
        "6", "6.5", "7", "7.5", "8", "8.5", "9", "9.5", "10", "10.5", "11", "11.5", "12", "13",
        "8 wide", "9 wide", "10 wide",
    ),
    "shoe_color": (
        "black", "white", "black white", "grey", "navy", "brown", "tan", "triple black", "red", "olive",
        "pink", "blue",
    ),
    "accessory_color": ("black", "brown", "tan", "silver", "gold", "rose gold", "navy", "burgundy", "grey"),
    "pack": ("pack of 1", "pack of 2", "pack of 3", "pack of 4", "pack of 6", "pack of 12"),
    "volume": (
        "1 fl oz (pack of 1)", "1.7 fl oz (pack of 1)", "3.4 fl oz (pack of 1)", "4 fl oz (pack of 2)",
        "6.7 fl oz (pack of 1)", "8 fl oz (pack of 1)", "16 fl oz (pack of 1)", "2 count (pack of 1)",
    ),
    "scent": (
        "unscented", "lavender", "coconut", "citrus", "vanilla", "eucalyptus mint", "rose", "fresh linen",
        "sandalwood", "green tea", "cucumber melon", "tea tree",
    ),
    "shade": (
        "01 fair", "02 light", "03 light medium", "04 medium", "05 medium tan", "06 tan", "07 deep",
        "08 rich espresso", "warm beige", "natural ivory", "soft nude",
    ),
    "lip_color": ("ruby red", "nude pink", "berry", "coral", "mauve", "plum", "rose", "wine", "peach"),
    "hair_color": (
        "jet black", "natural black", "dark brown", "medium brown", "light brown", "ash blonde",
        "honey blonde", "platinum blonde", "auburn", "burgundy",
    ),
    "hair_length": ("12 inch", "14 inch", "16 inch", "18 inch", "20 inch", "22 inch", "24 inch"),
    "flavor": (
        "original", "vanilla", "chocolate", "strawberry", "salted caramel", "honey", "sea salt",
        "cinnamon", "peanut butter", "mixed berry", "unsweetened", "dark chocolate", "maple", "lemon",
        "barbecue", "sour cream and onion", "jalapeno", "coconut",
    ),
    "food_size": (
        "4 ounce (pack of 1)", "8 ounce (pack of 1)", "12 ounce (pack of 1)", "16 ounce (pack of 1)",
        "8 ounce (pack of 2)", "1 pound (pack of 1)", "2 pound (pack of 1)", "12 count (pack of 1)",
        "24 count (pack of 1)", "6.5 ounce (pack of 6)",
    ),
    "tea_count": ("20 count (pack of 1)", "20 count (pack of 6)", "40 count (pack of 1)", "100 count (pack of 1)"),
    "furniture_color": (
        "black", "white", "walnut", "espresso", "grey", "natural", "light oak", "rustic brown", "navy",
        "beige", "cherry", "dark grey", "green", "cream",
    ),
    "bed_size": ("twin", "twin xl", "full", "queen", "king", "california king"),
    "furniture_size": ("small", "medium", "large", "2 pack", "set of 2", "set of 4"),
    "rug_size": ("2' x 3'", "3' x 5'", "4' x 6'", "5' x 7'", "6' x 9'", "8' x 10'", "runner 2' x 8'"),
    "curtain_size": ('52" w x 63" l', '52" w x 84" l', '52" w x 95" l', '42" w x 63" l', '42" w x 84" l'),
    "device_color": ("black", "white", "silver", "space gray", "blue", "red", "rose gold", "midnight green"),
    "storage": ("32gb", "64gb", "128gb", "256gb", "512gb", "1tb", "2tb"),
    "cable_length": ("3ft", "6ft", "10ft", "1ft 3 pack", "6ft 2 pack", "10ft 3 pack"),
    "device_style": ("standard", "with case", "with stand", "bundle", "2 pack", "pro"),
    "screen_size": ('10.1"', '11"', '13.3"', '14"', '15.6"', '17.3"'),
    "phone_model": (
        "iphone 14", "iphone 14 pro", "iphone 15", "iphone 15 pro max", "galaxy s23", "galaxy s24 ultra",
        "pixel 8", "pixel 8 pro",
    ),
}  # fmt: skip
"""Option value pools of the generated catalog, by pool name (see :mod:`.taxonomy`)."""

BRAND_HEADS: tuple[str, ...] = (
    "Al", "Ar", "Bel", "Bri", "Cal", "Cor", "Dal", "Dor", "El", "Fen", "Gal", "Hal", "Is", "Jun",
    "Kal", "Kor", "Lum", "Mar", "Mel", "Nor", "Ov", "Pal", "Quin", "Ros", "Sol", "Tar", "Ul", "Val",
    "Ver", "Wil", "Xan", "Yor", "Zen", "Ash", "Bram", "Cres", "Dun", "Ever", "Fair", "Glen",
)  # fmt: skip
"""First halves of generated brand names."""

BRAND_TAILS: tuple[str, ...] = (
    "ara", "ora", "ex", "ique", "io", "ly", "ton", "wood", "field", "stone", "view", "mont", "crest",
    "line", "era", "ova", "ix", "on", "aro", "vale", "ridge", "haven", "more", "brook", "well",
)  # fmt: skip
"""Second halves of generated brand names."""

ADJECTIVES: tuple[str, ...] = (
    "premium", "classic", "essential", "everyday", "ultra", "deluxe", "modern", "original", "signature",
    "professional", "lightweight", "compact", "heavy duty", "vintage", "luxury", "basic", "advanced",
    "comfort", "natural", "organic", "portable", "soft", "durable", "elegant", "new",
)  # fmt: skip
"""Title modifiers."""


def _words(text: str) -> list[str]:
    return text.split()


LUCENE_STOPWORDS: frozenset[str] = frozenset(
    _words(
        "a an and are as at be but by for if in into is it no not of on or such that the their then "
        "there these they this to was will with"
    )
)
"""Lucene's default English stop words (what WebShop's Pyserini index drops)."""

REVIEW_TITLES: tuple[tuple[int, str], ...] = (
    (5, "Exactly what I needed"), (5, "Love it"), (5, "Great value for the price"), (5, "Highly recommend"),
    (4, "Pretty good overall"), (4, "Works as described"), (4, "Nice quality"), (3, "It's okay"),
    (3, "Mixed feelings"), (2, "Not what I expected"), (2, "Disappointed"), (1, "Would not buy again"),
)  # fmt: skip
"""Review titles by star rating."""

REVIEW_BODIES: Mapping[int, tuple[str, ...]] = {
    5: (
        "This {noun} is fantastic. The {attr} part really shows and it arrived quickly.",
        "I bought the {noun} for my family and everyone loves it. {Attr} as promised.",
        "Second time ordering this {noun}. Consistent quality and {attr}.",
    ),
    4: (
        "Good {noun} overall. {Attr} works well, though the packaging could be better.",
        "Nice {noun} for the money. I took off one star because shipping was slow.",
    ),
    3: (
        "The {noun} is fine but nothing special. I expected it to be more {attr}.",
        "Average {noun}. It does the job, but the description oversells it.",
    ),
    2: (
        "The {noun} looked different from the pictures and was not very {attr}.",
        "Quality of this {noun} is lower than I hoped. Returned it.",
    ),
    1: (
        "Stopped working after a week. I would not recommend this {noun}.",
        "Arrived damaged and the seller never answered. Avoid this {noun}.",
    ),
}  # fmt: skip
"""Review body templates by star rating (``{noun}``, ``{attr}``, ``{Attr}`` are filled in)."""
