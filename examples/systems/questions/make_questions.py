"""The question set of the LLM+RAG systems, built from the Wikipedia summaries.

No question-answering dataset installs here, so the questions come from the 10,033 summaries
themselves: one question per summary whose first sentence states a short answer in a form
people ask about — a person's profession or nationality, a country's capital or region, the
country a city is in, the capital a city is of, who made a work, the year a work came out or
something was founded, a population, an element's atomic number. The answer is always stated
in the summary's text, is never the article title and never appears in the question, so
answering needs the summary (closed-book the small LLM rarely knows it).

Output: NQ-open JSONL (`{"question": str, "answer": [str, ...]}` per line), split by a seeded
shuffle into tune.jsonl and eval.jsonl, eval five times tune, no summary in both:

    python examples/systems/questions/make_questions.py [--seed 0] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from workloads.data import wiki

HERE = Path(__file__).resolve().parent

NATIONALITIES = (
    "American British English French German Italian Spanish Russian Chinese Japanese Indian "
    "Greek Roman Dutch Austrian Polish Swedish Norwegian Danish Scottish Irish Welsh Canadian "
    "Australian Mexican Brazilian Argentine Persian Egyptian Hungarian Czech Belgian Swiss "
    "Portuguese Turkish Korean Soviet Ukrainian Finnish Israeli Iranian Nigerian Chilean "
    "Colombian Cuban Flemish Prussian Ottoman Byzantine Mongol Venetian Florentine Icelandic "
    "Romanian Serbian Croatian Bulgarian Pakistani Vietnamese Thai Indonesian Filipino "
    "Peruvian Venezuelan Jamaican Ghanaian Kenyan Ethiopian Lebanese Syrian Iraqi Afghan "
    "Bangladeshi Nepalese Tibetan Mughal Macedonian Athenian Carthaginian Babylonian"
).split()
_NAT = "|".join(NATIONALITIES)
# A capitalised name, accented letters included ("Asunción", "Poznań").
_NAME = r"[A-Z][^\W\d_]+(?:[ -](?:[A-Z]\.|[A-Z][^\W\d_]+|de|da|van|von)){0,3}"

# Work verbs: the participle in the text, the question's verb.
_MADE_BY = {"written": "wrote", "directed": "directed", "composed": "composed",
            "painted": "painted", "designed": "designed", "invented": "invented",
            "founded": "founded", "developed": "developed", "created": "created",
            "sculpted": "sculpted"}
_YEAR_VERBS = ("founded established invented completed built published released signed "
               "formed opened launched adopted ratified constructed premiered").split()


def _first_sentence(text: str) -> str:
    return re.split(r"(?<=[a-z)\]])\.\s", text.strip(), maxsplit=1)[0]


def _subject(title: str) -> str:
    return re.sub(r"\s*\([^)]*\)$", "", title).strip()


def _about_subject(sentence: str, subject: str) -> bool:
    """The sentence is about the article's subject: the subject's last word comes before the
    sentence's verb ("Mikhail Sergeyevich Gorbachev was ...", "The Danube is ...")."""
    head = re.split(r"\b(?:is|was|are|were)\b", sentence, maxsplit=1)[0].lower()
    return subject.lower().split()[-1] in head


Question = tuple[str, str, list[str]]  # kind, question, answers


@dataclass(frozen=True)
class Summary:
    subject: str   # the title without its disambiguation
    first: str     # the first sentence, when it is about the subject, else ""
    text: str      # the whole summary
    topic: str


Maker = Callable[[Summary, set[str]], Question | None]


def _person_question(doc: Summary) -> str:
    """Half the people are asked their profession, a quarter their nationality (closed-book a
    model guesses nationality from the name too often for more), a stable choice."""
    return ("profession", "nationality", "profession", "none")[zlib.crc32(doc.subject.encode())
                                                               % 4]


def _asks_profession(doc: Summary) -> bool:
    return _person_question(doc) == "profession"


def nationality(doc: Summary, countries: set[str]) -> Question | None:
    if _person_question(doc) != "nationality":
        return None
    m = re.search(rf"\b(was|is) an? (?:[a-z-]+ )?({_NAT})(?:-born)? [a-z]", doc.first)
    if doc.topic != "People" or not m:
        return None
    return "nationality", f"What nationality {m.group(1)} {doc.subject}?", [m.group(2)]


_CLAUSE = r"\b(?:who|whose|whom|which|that|known|best|widely|from|of|in|with|for|to|at|on|by|as)\b"


def profession(doc: Summary, countries: set[str]) -> Question | None:
    if not _asks_profession(doc):
        return None
    m = re.search(rf"\b(was|is) an? (?:{_NAT})(?:-born)? ([a-z][a-z ]*[a-z])(?=[,.;\s]|$)",
                  doc.first)
    if doc.topic != "People" or not m:
        return None
    # "actor and filmmaker who ..." → the roles before any clause: actor, filmmaker.
    words = re.split(_CLAUSE, m.group(2))[0]
    roles = [r.strip() for r in words.split(" and ") if len(r.strip()) > 3]
    if not roles or any(len(r.split()) > 2 for r in roles):
        return None
    answers = roles + [r.split()[-1] for r in roles]
    return "profession", f"What {m.group(1)} {doc.subject}'s profession?", answers


def capital(doc: Summary, countries: set[str]) -> Question | None:
    m = re.search(rf"\b[Ii]ts capital(?: and largest city)? is ({_NAME})", doc.text)
    return ("capital", f"What is the capital of {doc.subject}?", [m.group(1)]) if m else None


def region(doc: Summary, countries: set[str]) -> Question | None:
    m = re.search(r"\bis an? (?:landlocked |island |sovereign |transcontinental )?country "
                  r"(?:located )?in ((?:[a-z]+ )?[A-Z][a-z]+(?: [A-Z][a-z]+)?)", doc.first)
    if not m:
        return None
    place = m.group(1)  # "northern Central America" also accepts "Central America"
    return ("region", f"In which part of the world is the country {doc.subject}?",
            [place, re.sub(r"^[a-z]+ ", "", place)])


def city_country(doc: Summary, countries: set[str]) -> Question | None:
    m = re.search(r"\bis (?:a|the) (?:[a-z]+ )?(?:city|town|port|capital city|municipality)\b"
                  r"[^.]{0,60}? in (?:[a-z]+ ){0,2}(" + _NAME + ")", doc.first)
    if not m or m.group(1) not in countries:
        return None
    return "city_country", f"In which country is the city of {doc.subject}?", [m.group(1)]


def made_by(doc: Summary, countries: set[str]) -> Question | None:
    person = r"[A-Z][^\W\d_]+(?: [A-Z]\.)?(?: (?:de |da |van |von )?[A-Z][^\W\d_]+){1,2}"
    m = re.search(rf"\b({'|'.join(_MADE_BY)}) by (?:the [a-z]+ )?({person})", doc.first)
    if not m:
        return None
    return "made_by", f"Who {_MADE_BY[m.group(1)]} {doc.subject}?", [m.group(2)]


def year(doc: Summary, countries: set[str]) -> Question | None:
    m = re.search(rf"\b({'|'.join(_YEAR_VERBS)}) in (\d{{4}})\b", doc.first)
    if not m or doc.topic == "People":
        return None
    return "year", f"In what year was {doc.subject} {m.group(1)}?", [m.group(2)]


def population(doc: Summary, countries: set[str]) -> Question | None:
    m = re.search(r"population of (?:about |around |approximately |over |more than |nearly )?"
                  r"(\d[\d.,]* (?:million|billion))", doc.text)
    return ("population", f"What is the population of {doc.subject}?", [m.group(1)]) if m else None


def capital_of(doc: Summary, countries: set[str]) -> Question | None:
    m = re.search(rf"\bis the capital(?: and largest city)? of ({_NAME})", doc.first)
    if not m or m.group(1) not in countries:
        return None
    return "capital_of", f"{doc.subject} is the capital of which country?", [m.group(1)]


def atomic_number(doc: Summary, countries: set[str]) -> Question | None:
    m = re.search(r"\bchemical element\b.*?\batomic number (\d+)", doc.first)
    return ("atomic_number", f"What is the atomic number of {doc.subject.lower()}?",
            [m.group(1)]) if m else None


# What a work "is a 1975 film" was, asked with the verb people use for it.
_WORK_VERBS = {"film": "released", "album": "released", "song": "released",
               "video game": "released", "television series": "first broadcast",
               "novel": "published", "book": "published", "poem": "published",
               "short story": "published", "painting": "painted", "play": "first performed",
               "opera": "first performed", "musical": "first performed",
               "ballet": "first performed", "symphony": "first performed"}


def work_year(doc: Summary, countries: set[str]) -> Question | None:
    m = re.search(rf"\bis an? (\d{{4}}) (?:[A-Za-z-]+ ){{0,4}}?({'|'.join(_WORK_VERBS)})\b",
                  doc.first)
    if not m:
        return None
    return ("work_year", f"In what year was the {m.group(2)} {doc.subject} "
                         f"{_WORK_VERBS[m.group(2)]}?", [m.group(1)])


# Most specific first: the first maker that fits a summary asks its question.
MAKERS: tuple[Maker, ...] = (atomic_number, capital, capital_of, city_country, region,
                             population, work_year, made_by, year, nationality, profession)


def _normal(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9 ]", " ", text.lower()).split())


def questions() -> Iterator[tuple[str, dict]]:
    """(kind, NQ-open record) for every summary that states a short answer."""
    docs = wiki.load_summaries()
    countries = {_subject(d.title) for d in docs if re.search(r"\bcountry\b", d.description, re.I)}
    for article in docs:
        subject = _subject(article.title)
        if "," in subject:  # "X, 3rd Duke of Y": no one asks by that name
            continue
        first = _first_sentence(article.extract)
        doc = Summary(subject, first if _about_subject(first, subject) else "",
                      article.extract, article.topic)
        for maker in MAKERS:
            found = maker(doc, countries)
            if found is None:
                continue
            kind, question, answers = found
            answers = list(dict.fromkeys(answers))
            if any(_normal(a) in _normal(question) or _normal(a) in _normal(subject)
                   for a in answers):
                continue
            yield kind, {"question": question, "answer": answers}
            break


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args(argv)
    found = list(questions())
    random.Random(args.seed).shuffle(found)
    n_tune = len(found) // 6
    args.out.mkdir(parents=True, exist_ok=True)
    for name, part in (("tune", found[:n_tune]), ("eval", found[n_tune:])):
        with open(args.out / f"{name}.jsonl", "w") as f:
            for _, record in part:
                f.write(json.dumps(record, ensure_ascii=False) + "\n")
    kinds = Counter(kind for kind, _ in found)
    print(f"{len(found)} questions: tune {n_tune}, eval {len(found) - n_tune}; "
          + ", ".join(f"{k} {n}" for k, n in kinds.most_common()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
