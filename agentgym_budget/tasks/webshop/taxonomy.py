"""The product types of the generated catalog, across WebShop's five categories.

Each :class:`ProductType` says how products of one kind look: their WebShop category
(``beauty``, ``electronics``, ``fashion``, ``food``, ``furniture``), the Amazon-style
breadcrumb (``product_category``), the search queries they were "scraped" under,
the head nouns of their titles, the attribute phrases they can have (what instructions
ask for), their option groups (name and value pool from
:data:`~agentgym_budget.tasks.webshop.vocabulary.OPTION_POOLS`), a price range, and
title descriptors and a usage sentence for descriptions.

Example:
    >>> len(PRODUCT_TYPES) >= 40, sorted({t.category for t in PRODUCT_TYPES})
    (True, ['beauty', 'electronics', 'fashion', 'food', 'furniture'])
    >>> shirt = next(t for t in PRODUCT_TYPES if t.key == "mens_tshirt")
    >>> shirt.nouns[0], [group for group, _ in shirt.options]
    ('t-shirt', ['color', 'size'])
"""

from __future__ import annotations

from dataclasses import dataclass

from agentgym_budget.tasks.webshop.catalog import BREADCRUMB_SEP
from agentgym_budget.tasks.webshop.vocabulary import OPTION_POOLS

__all__: list[str] = []


@dataclass(frozen=True)
class ProductType:
    """How the generator makes products of one kind.

    Attributes:
        key: Identifier of the type.
        category: WebShop category (``beauty``, ``electronics``, ``fashion``, ``food``, ``furniture``).
        breadcrumb: ``product_category`` text, levels joined by ``BREADCRUMB_SEP`` with spaces.
        queries: Search queries the products are listed under (lowercase).
        nouns: Head nouns used in titles and instructions; the first is canonical.
        attributes: Attribute phrases products of this type can have.
        options: Option groups as ``(group name, pool name)`` pairs.
        price: Price range in dollars ``(low, high)``.
        descriptors: Extra title phrases (materials, styles, models).
        usage: A sentence on what the product is for (used in descriptions).
    """

    key: str
    category: str
    breadcrumb: str
    queries: tuple[str, ...]
    nouns: tuple[str, ...]
    attributes: tuple[str, ...]
    options: tuple[tuple[str, str], ...]
    price: tuple[float, float]
    descriptors: tuple[str, ...]
    usage: str


def _t(
    key: str,
    category: str,
    breadcrumb: str,
    queries: str,
    nouns: str,
    attributes: str,
    options: str,
    price: tuple[float, float],
    descriptors: str,
    usage: str,
) -> ProductType:
    groups = tuple(tuple(part.split(":")) for part in options.split(";") if part)
    for _, pool in groups:
        if pool not in OPTION_POOLS:
            raise KeyError(f"product type {key!r}: unknown option pool {pool!r}")
    return ProductType(
        key=key,
        category=category,
        breadcrumb=f" {BREADCRUMB_SEP} ".join(breadcrumb.split(" > ")),
        queries=tuple(queries.split("|")),
        nouns=tuple(nouns.split("|")),
        attributes=tuple(attributes.split("|")),
        options=groups,  # type: ignore[arg-type]
        price=price,
        descriptors=tuple(descriptors.split("|")),
        usage=usage,
    )


_FASHION = "Clothing, Shoes & Jewelry"
_BEAUTY = "Beauty & Personal Care"
_ELEC = "Electronics"
_FOOD = "Grocery & Gourmet Food"
_HOME = "Home & Kitchen > Furniture"

PRODUCT_TYPES: tuple[ProductType, ...] = (
    # ---------------------------------------------------------------- fashion
    _t("mens_tshirt", "fashion", f"{_FASHION} > Men > Clothing > Shirts > T-Shirts",
       "men's t-shirts|men's graphic tees", "t-shirt|tee", "machine wash|short sleeve|cotton spandex|classic fit|"
       "moisture wicking|slim fit|crew neck|tumble dry|button closure|polyester cotton|v-neck", "color:apparel_color;"
       "size:apparel_size", (7.99, 34.99), "cotton|crew neck|heavyweight|performance|graphic|pocket",
       "for everyday wear, workouts and layering"),
    _t("womens_dress", "fashion", f"{_FASHION} > Women > Clothing > Dresses", "women's dresses|summer dresses",
       "dress|maxi dress|midi dress", "machine wash|hand wash only|short sleeve|long sleeve|elastic waist|"
       "polyester spandex|v-neck|a-line|high waist|floral print|pockets", "color:apparel_color;size:apparel_size",
       (19.99, 69.99), "floral|wrap|casual|boho|cocktail|swing", "for parties, beach vacations and office days"),
    _t("mens_jeans", "fashion", f"{_FASHION} > Men > Clothing > Jeans", "men's jeans|men's denim pants",
       "jeans|denim jeans", "machine wash|straight leg|slim fit|relaxed fit|button closure|zipper closure|"
       "cotton spandex|stretch fabric|regular fit", "color:apparel_color;size:pants_size", (24.99, 79.99),
       "stretch|classic 5-pocket|athletic fit|distressed", "for work, weekends and everything in between"),
    _t("womens_leggings", "fashion", f"{_FASHION} > Women > Clothing > Active > Leggings",
       "women's yoga leggings|workout leggings", "leggings|yoga pants", "high waist|tummy control|butt lift|"
       "moisture wicking|polyester spandex|machine wash|pull on closure|squat proof|side pockets",
       "color:apparel_color;size:apparel_size", (12.99, 39.99), "seamless|capri|full length|compression",
       "for yoga, running, gym workouts and lounging"),
    _t("mens_sneakers", "fashion", f"{_FASHION} > Men > Shoes > Fashion Sneakers", "men's running shoes|men's sneakers",
       "running shoes|sneakers", "rubber sole|lace up|non slip|memory foam|breathable mesh|arch support|"
       "lightweight|slip resistant|cushioned insole", "color:shoe_color;size:shoe_size", (29.99, 119.99),
       "walking|trail|road running|knit|athletic", "for running, walking, gym training and daily wear"),
    _t("womens_boots", "fashion", f"{_FASHION} > Women > Shoes > Boots > Ankle & Bootie",
       "women's ankle boots|women's boots", "ankle boots|booties", "rubber sole|side zipper|faux leather|"
       "block heel|pointed toe|memory foam|non slip|water resistant", "color:shoe_color;size:shoe_size",
       (34.99, 99.99), "chelsea|western|suede|platform", "for fall outfits, work and nights out"),
    _t("mens_hoodie", "fashion", f"{_FASHION} > Men > Clothing > Fashion Hoodies & Sweatshirts",
       "men's hoodies|men's pullover sweatshirt", "hoodie|sweatshirt", "machine wash|long sleeve|fleece lined|"
       "drawstring closure|kangaroo pocket|cotton blend|relaxed fit|zipper closure", "color:apparel_color;"
       "size:apparel_size", (19.99, 59.99), "pullover|full zip|heavyweight|sherpa", "for cool evenings and layering"),
    _t("womens_handbag", "fashion", f"{_FASHION} > Women > Handbags & Wallets > Shoulder Bags",
       "women's handbags|crossbody bags", "handbag|crossbody bag|shoulder bag", "vegan leather|zipper closure|"
       "adjustable strap|multiple pockets|lightweight|large capacity|water resistant", "color:accessory_color",
       (18.99, 89.99), "tote|hobo|satchel|quilted", "for work, travel and everyday errands"),
    _t("mens_watch", "fashion", f"{_FASHION} > Men > Watches > Wrist Watches", "men's watches|analog watches",
       "watch|wrist watch", "stainless steel|water resistant|quartz movement|leather band|date display|"
       "luminous hands|scratch resistant", "color:accessory_color", (24.99, 199.99), "chronograph|dress|"
       "minimalist|military|diver", "for business, sport and gifts"),
    _t("kids_pajamas", "fashion", f"{_FASHION} > Girls > Clothing > Sleepwear & Robes", "kids pajamas|toddler pajama set",
       "pajama set|pajamas", "100% cotton|snug fit|long sleeve|machine wash|elastic waist|tagless|flame resistant",
       "color:apparel_color;size:apparel_size", (12.99, 32.99), "2-piece|holiday|cartoon|fleece",
       "for bedtime, sleepovers and lazy mornings"),
    _t("socks", "fashion", f"{_FASHION} > Men > Clothing > Socks", "athletic socks|crew socks", "socks|crew socks",
       "moisture wicking|cushioned sole|arch support|cotton blend|machine wash|breathable mesh|non slip",
       "color:apparel_color;size:pack", (9.99, 24.99), "ankle|no show|compression|merino wool",
       "for sports, hiking and everyday comfort"),
    _t("sunglasses", "fashion", f"{_FASHION} > Women > Accessories > Sunglasses & Eyewear Accessories",
       "polarized sunglasses|women's sunglasses", "sunglasses", "polarized lens|uv400 protection|lightweight|"
       "metal frame|scratch resistant|oversized", "color:accessory_color", (12.99, 79.99),
       "aviator|cat eye|retro round|square", "for driving, the beach and outdoor sports"),
    # ---------------------------------------------------------------- beauty
    _t("shampoo", "beauty", f"{_BEAUTY} > Hair Care > Shampoo & Conditioner > Shampoos", "sulfate free shampoo|"
       "shampoo for dry hair", "shampoo|shampoo and conditioner set", "sulfate free|paraben free|natural ingredients|"
       "dry hair|color treated|hair growth|argan oil|cruelty free|damaged hair|tea tree", "scent:scent;size:volume",
       (7.99, 34.99), "moisturizing|clarifying|volumizing|repair", "to cleanse and nourish hair from root to tip"),
    _t("face_moisturizer", "beauty", f"{_BEAUTY} > Skin Care > Face > Creams & Moisturizers",
       "face moisturizer|anti aging cream", "moisturizer|face cream", "hyaluronic acid|anti aging|fine lines|"
       "sensitive skin|fragrance free|dry skin|oil free|cruelty free|vitamin c|non greasy|spf 30",
       "size:volume", (9.99, 59.99), "daily|night|gel|whipped", "to hydrate and protect your skin every day"),
    _t("lipstick", "beauty", f"{_BEAUTY} > Makeup > Lips > Lipstick", "matte lipstick|long lasting lipstick",
       "lipstick|lip color", "long lasting|matte finish|cruelty free|highly pigmented|moisturizing|"
       "waterproof|paraben free|vegan", "color:lip_color;size:pack", (5.99, 28.99), "liquid|velvet|satin|creamy",
       "for bold looks that last all day"),
    _t("foundation", "beauty", f"{_BEAUTY} > Makeup > Face > Foundation", "liquid foundation|full coverage foundation",
       "foundation|liquid foundation", "full coverage|oil free|long lasting|natural finish|sensitive skin|"
       "spf 15|cruelty free|lightweight|matte finish", "color:shade;size:volume", (8.99, 48.99),
       "liquid|serum|mineral|cushion", "for an even, natural looking complexion"),
    _t("hair_extensions", "beauty", f"{_BEAUTY} > Hair Care > Hair Extensions, Wigs & Accessories > Extensions",
       "clip in hair extensions|human hair extensions", "hair extensions|clip in extensions", "human hair|"
       "natural looking|easy apply|long lasting|heat resistant|straight hair|double weft", "color:hair_color;"
       "size:hair_length", (19.99, 129.99), "remy|seamless|balayage|wavy", "to add length and volume in minutes"),
    _t("nail_polish", "beauty", f"{_BEAUTY} > Foot, Hand & Nail Care > Nail Art & Polish > Nail Polish",
       "gel nail polish|nail polish set", "nail polish|gel polish", "long lasting|quick dry|non toxic|"
       "high gloss|chip resistant|easy apply|vegan", "color:lip_color;size:pack", (6.99, 29.99),
       "gel|glitter|soak off|nude", "for salon quality manicures at home"),
    _t("body_wash", "beauty", f"{_BEAUTY} > Skin Care > Body > Washes", "moisturizing body wash|shower gel",
       "body wash|shower gel", "natural ingredients|sensitive skin|paraben free|dry skin|cruelty free|"
       "essential oils|sulfate free|gentle formula", "scent:scent;size:volume", (5.99, 24.99),
       "foaming|exfoliating|hydrating|aromatherapy", "to cleanse and soften skin in the shower"),
    _t("perfume", "beauty", f"{_BEAUTY} > Fragrance > Women's > Eau de Parfum", "women's perfume|eau de parfum",
       "perfume|eau de parfum", "long lasting|travel size|alcohol free|natural ingredients|cruelty free|"
       "floral scent", "scent:scent;size:volume", (14.99, 89.99), "spray|rollerball|gift set|mist",
       "for special occasions and everyday elegance"),
    _t("hair_dryer", "beauty", f"{_BEAUTY} > Hair Care > Styling Tools & Appliances > Hair Dryers",
       "ionic hair dryer|blow dryer", "hair dryer|blow dryer", "ionic technology|fast drying|lightweight|"
       "low noise|cool shot|diffuser attachment|ceramic tourmaline", "color:device_color", (19.99, 99.99),
       "professional|travel|compact|salon", "for quick, frizz free drying at home"),
    _t("toothbrush", "beauty", f"{_BEAUTY} > Oral Care > Toothbrushes & Accessories > Electric Toothbrushes",
       "electric toothbrush|sonic toothbrush", "electric toothbrush|toothbrush", "rechargeable battery|"
       "sensitive teeth|built-in timer|travel case|deep clean|waterproof|long battery life", "color:device_color;"
       "size:pack", (19.99, 79.99), "sonic|whitening|kids|travel", "for a deeper clean than a manual brush"),
    # ---------------------------------------------------------------- electronics
    _t("headphones", "electronics", f"{_ELEC} > Headphones, Earbuds & Accessories > Headphones > Over-Ear",
       "wireless headphones|noise cancelling headphones", "headphones|headset", "noise cancelling|bluetooth 5.0|"
       "long battery life|built-in microphone|foldable design|hands free|hi-fi sound|memory foam",
       "color:device_color", (24.99, 199.99), "over ear|on ear|gaming|studio", "for music, calls and travel"),
    _t("earbuds", "electronics", f"{_ELEC} > Headphones, Earbuds & Accessories > Earbuds", "wireless earbuds|"
       "bluetooth earbuds", "earbuds|earphones", "noise cancelling|water resistant|charging case|touch control|"
       "bluetooth 5.3|long battery life|built-in microphone", "color:device_color", (15.99, 149.99),
       "true wireless|sport|in ear|open ear", "for workouts, commutes and calls"),
    _t("phone_case", "electronics", f"{_ELEC} > Cell Phones & Accessories > Cases, Holsters & Sleeves",
       "phone case|shockproof phone case", "phone case|case", "shockproof|slim fit|wireless charging compatible|"
       "raised edges|scratch resistant|drop protection|magnetic", "color:device_color;size:phone_model",
       (7.99, 39.99), "clear|rugged|wallet|silicone", "to protect your phone from drops and scratches"),
    _t("charging_cable", "electronics", f"{_ELEC} > Computers & Accessories > Cables > USB Cables",
       "usb c cable|fast charging cable", "charging cable|usb c cable", "fast charging|braided nylon|"
       "data transfer|durable|high speed|tangle free", "color:device_color;size:cable_length", (5.99, 24.99),
       "usb c to usb c|usb a to usb c|lightning|3-in-1", "for charging and syncing phones, tablets and laptops"),
    _t("power_bank", "electronics", f"{_ELEC} > Cell Phones & Accessories > Chargers & Power Adapters > "
       "Portable Power Banks", "portable charger|power bank", "power bank|portable charger", "fast charging|"
       "high capacity|usb c|led display|compact|dual output|airline approved", "color:device_color",
       (15.99, 69.99), "10000mah|20000mah|magnetic|solar", "to keep your devices charged on the go"),
    _t("bluetooth_speaker", "electronics", f"{_ELEC} > Portable Audio & Video > Portable Speakers & Docks",
       "bluetooth speaker|portable speaker", "speaker|bluetooth speaker", "waterproof|long battery life|"
       "deep bass|stereo pairing|built-in microphone|hands free|dustproof", "color:device_color",
       (19.99, 149.99), "portable|outdoor|mini|party", "for parties, camping and the shower"),
    _t("usb_flash_drive", "electronics", f"{_ELEC} > Computers & Accessories > Data Storage > USB Flash Drives",
       "usb flash drive|thumb drive", "flash drive|usb drive", "high speed|usb 3.0|plug and play|durable|"
       "key ring|metal casing", "size:storage;color:device_color", (5.99, 49.99), "usb 3.1|dual|swivel|mini",
       "to store and move files between computers"),
    _t("smart_watch", "electronics", f"{_ELEC} > Wearable Technology > Smartwatches", "smart watch|fitness tracker",
       "smart watch|fitness tracker", "heart rate monitor|sleep tracking|water resistant|long battery life|"
       "gps|step counter|blood oxygen", "color:device_color", (29.99, 199.99), "fitness|sport|kids|amoled",
       "to track workouts, sleep and notifications"),
    _t("laptop_sleeve", "electronics", f"{_ELEC} > Computers & Accessories > Laptop Accessories > Bags, Cases & "
       "Sleeves > Sleeves", "laptop sleeve|laptop case", "laptop sleeve|laptop case", "water resistant|"
       "shockproof|zipper closure|lightweight|accessory pocket|slim fit", "color:device_color;size:screen_size",
       (12.99, 39.99), "neoprene|felt|hard shell|briefcase", "to carry and protect your laptop"),
    _t("hdmi_cable", "electronics", f"{_ELEC} > Television & Video > Accessories > Cables > HDMI Cables",
       "hdmi cable|4k hdmi cable", "hdmi cable|cable", "4k 60hz|high speed|gold plated|braided nylon|"
       "ethernet|durable", "size:cable_length", (6.99, 29.99), "8k|ultra high speed|flat|right angle",
       "to connect tvs, consoles and monitors"),
    _t("tablet", "electronics", f"{_ELEC} > Computers & Accessories > Tablets", "android tablet|tablet",
       "tablet|android tablet", "quad core|long battery life|hd display|dual camera|wifi|expandable storage",
       "color:device_color;size:storage", (59.99, 299.99), "kids|10 inch|octa core|2-in-1",
       "for streaming, reading, games and video calls"),
    # ---------------------------------------------------------------- food
    _t("coffee", "food", f"{_FOOD} > Beverages > Coffee, Tea & Cocoa > Coffee > Ground Coffee",
       "ground coffee|whole bean coffee", "coffee|ground coffee", "medium roast|dark roast|organic|"
       "fair trade|single origin|low acid|100% arabica|gluten free", "flavor:flavor;size:food_size",
       (7.99, 29.99), "whole bean|espresso|cold brew|breakfast blend", "for a rich cup every morning"),
    _t("tea", "food", f"{_FOOD} > Beverages > Coffee, Tea & Cocoa > Tea > Green", "green tea bags|herbal tea",
       "tea|tea bags", "caffeine free|organic|non gmo|gluten free|kosher|individually wrapped|natural "
       "ingredients", "flavor:flavor;size:tea_count", (4.99, 24.99), "green|herbal|chamomile|matcha",
       "for a calming cup any time of day"),
    _t("protein_bar", "food", f"{_FOOD} > Snack Foods > Bars > Protein", "protein bars|keto snack bars",
       "protein bars|snack bars", "gluten free|high protein|low sugar|keto friendly|non gmo|plant based|"
       "dairy free|individually wrapped", "flavor:flavor;size:food_size", (9.99, 39.99),
       "whey|vegan|chewy|crispy", "for a quick snack before or after workouts"),
    _t("potato_chips", "food", f"{_FOOD} > Snack Foods > Chips & Crisps > Potato", "potato chips|kettle chips",
       "potato chips|chips", "gluten free|non gmo|kettle cooked|no artificial flavors|vegan|"
       "individually wrapped|low sodium", "flavor:flavor;size:food_size", (3.99, 24.99),
       "kettle|baked|ridged|thin", "for lunch boxes, parties and snacking"),
    _t("honey", "food", f"{_FOOD} > Pantry Staples > Jams, Jellies & Sweet Spreads > Honey", "raw honey|organic honey",
       "honey|raw honey", "raw|unfiltered|organic|non gmo|gluten free|kosher|natural ingredients",
       "flavor:flavor;size:food_size", (6.99, 34.99), "wildflower|manuka|clover|creamed",
       "for tea, baking and breakfast"),
    _t("olive_oil", "food", f"{_FOOD} > Pantry Staples > Cooking & Baking > Oils > Olive", "extra virgin olive oil|"
       "cooking oil", "olive oil|extra virgin olive oil", "cold pressed|extra virgin|non gmo|organic|"
       "kosher|first cold pressed|gluten free", "size:food_size", (8.99, 39.99), "italian|greek|spanish|garlic "
       "infused", "for salads, cooking and dipping"),
    _t("candy", "food", f"{_FOOD} > Candy & Chocolate > Chocolate", "dark chocolate|chocolate candy",
       "chocolate|chocolate bars", "gluten free|fair trade|non gmo|individually wrapped|low sugar|vegan|"
       "kosher|gift box", "flavor:flavor;size:food_size", (4.99, 39.99), "dark|milk|truffle|assorted",
       "for gifts, desserts and sweet cravings"),
    _t("jerky", "food", f"{_FOOD} > Snack Foods > Jerky & Dried Meats > Beef", "beef jerky|meat snacks",
       "beef jerky|jerky", "high protein|gluten free|low fat|no preservatives|keto friendly|grass fed",
       "flavor:flavor;size:food_size", (6.99, 34.99), "original|teriyaki|peppered|smoked",
       "for hiking, road trips and high protein snacking"),
    # ---------------------------------------------------------------- furniture
    _t("office_chair", "furniture", f"{_HOME} > Home Office Furniture > Home Office Chairs > Desk Chairs",
       "ergonomic office chair|desk chair", "office chair|desk chair", "lumbar support|adjustable height|"
       "high back|swivel|breathable mesh|easy assembly|padded armrests|heavy duty", "color:furniture_color",
       (59.99, 299.99), "ergonomic|executive|gaming|mid back", "for long hours at your desk"),
    _t("bookshelf", "furniture", f"{_HOME} > Living Room Furniture > Bookcases", "bookshelf|bookcase",
       "bookshelf|bookcase", "easy assembly|engineered wood|storage space|living room|5-tier|metal frame|"
       "wall mounted", "color:furniture_color;size:furniture_size", (39.99, 199.99), "industrial|ladder|"
       "corner|cube", "to organize books, plants and decor"),
    _t("coffee_table", "furniture", f"{_HOME} > Living Room Furniture > Tables > Coffee Tables",
       "coffee table|living room table", "coffee table|table", "easy assembly|storage space|living room|"
       "solid wood|metal frame|lift top|engineered wood", "color:furniture_color", (49.99, 299.99),
       "mid century|farmhouse|round|glass top", "to anchor your living room"),
    _t("bed_frame", "furniture", f"{_HOME} > Bedroom Furniture > Beds, Frames & Bases > Beds",
       "platform bed frame|bed frame", "bed frame|platform bed", "easy assembly|heavy duty|storage space|"
       "noise free|metal frame|solid wood|no box spring needed|headboard", "color:furniture_color;size:bed_size",
       (89.99, 499.99), "upholstered|platform|canopy|wooden", "for a sturdy, quiet night's sleep"),
    _t("sofa", "furniture", f"{_HOME} > Living Room Furniture > Sofas & Couches", "sectional sofa|loveseat",
       "sofa|loveseat|couch", "living room|easy assembly|solid wood|high density foam|removable cushions|"
       "velvet fabric|pet friendly", "color:furniture_color", (249.99, 999.99), "sectional|convertible|"
       "tufted|modular", "for family movie nights and guests"),
    _t("area_rug", "furniture", f"{_HOME} > Home Décor Products > Area Rugs, Runners & Pads > Area Rugs",
       "area rug|living room rug", "area rug|rug", "non slip|machine washable|living room|stain resistant|"
       "low pile|easy clean|non shedding", "color:furniture_color;size:rug_size", (29.99, 249.99),
       "boho|vintage|shag|geometric", "to warm up bedrooms and living rooms"),
    _t("curtains", "furniture", f"{_HOME} > Home Décor Products > Window Treatments > Curtains & Drapes",
       "blackout curtains|window curtains", "curtains|curtain panels", "blackout|thermal insulated|"
       "machine washable|grommet top|noise reducing|living room|energy saving", "color:furniture_color;"
       "size:curtain_size", (17.99, 69.99), "linen|velvet|sheer|room darkening", "for privacy and better sleep"),
    _t("nightstand", "furniture", f"{_HOME} > Bedroom Furniture > Nightstands", "nightstand|bedside table",
       "nightstand|bedside table|end table", "easy assembly|storage space|charging station|engineered wood|"
       "solid wood|drawer|bedroom", "color:furniture_color;size:furniture_size", (29.99, 159.99),
       "modern|rustic|floating|2-drawer", "to keep essentials within reach at night"),
    _t("dining_chair", "furniture", f"{_HOME} > Kitchen & Dining Room Furniture > Chairs",
       "dining chairs|kitchen chairs", "dining chairs|chairs", "easy assembly|solid wood|upholstered seat|"
       "metal legs|dining room|high back|stackable", "color:furniture_color;size:furniture_size",
       (69.99, 299.99), "mid century|farmhouse|velvet|wishbone", "for family dinners and entertaining"),
)  # fmt: skip
"""Every product type of the generated catalog."""
