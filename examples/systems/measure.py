"""Exact vs closed-book accuracy of a system and the time profile of its exact answers.

    python examples/systems/measure.py examples/systems/rag_bm25 --limit 60

Closed-book is the exact LLM asked the question without any passage (the pipeline's
`closed_book`); retrieval matters when the exact system answers well above it. For a RAG
system it also says which half bounds the accuracy: the share of questions whose gold answer
stands in the passages the exact retrieval found (`answer_in_passages`), and how many of
those the LLM then answers (`reader_accuracy`).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from approxcc.system import load_system
from approxcc.system.application import CompoundSystem, correct
from approxcc.system.questions import Question, load_questions


def in_passages(system: CompoundSystem, q: Question) -> bool | None:
    """A gold answer stands in the exact retrieval's passages (None: the system retrieves
    none)."""
    pipeline = system.pipeline
    if not hasattr(pipeline, "retrieve") or system.library is None:
        return None
    ids, _ = pipeline.retrieve(system.library.load(None), q.question)
    text = " ".join(f"{pipeline.articles[d].title} {' '.join(pipeline.passage(d))}"
                    for d in ids)
    return correct(q, text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("system")
    parser.add_argument("--questions", type=Path, help="default: the system's tune questions")
    parser.add_argument("--limit", type=int, default=60)
    args = parser.parse_args()
    system = load_system(args.system)
    questions = load_questions(args.questions or system.project.tune_questions, args.limit)
    with tempfile.TemporaryDirectory() as work:
        system.build(Path(work))
        right = {"exact": 0, "closed_book": 0}
        found: list[bool] = []            # answer in the passages, per question
        read = 0                          # ... and answered right
        system.stages.reset_profile()
        start = time.perf_counter()
        for q in questions:
            answer = system.answer(q, None)
            book = system.pipeline.closed_book(q.question)
            right["exact"] += correct(q, answer)
            right["closed_book"] += correct(q, book)
            there = in_passages(system, q)
            if there is not None:
                found.append(there)
                read += there and correct(q, answer)
            print(json.dumps({"question": q.question, "gold": q.answers, "rag": answer,
                              "closed_book": book, "in_passages": there}), flush=True)
        n = len(questions)
        profile = {k: round(v / n, 4) for k, v in system.stages.reset_profile().items()}
        print(json.dumps({"questions": n, "exact_accuracy": right["exact"] / n,
                          "closed_book_accuracy": right["closed_book"] / n,
                          **({"answer_in_passages": sum(found) / n,
                              "reader_accuracy": read / max(1, sum(found))} if found else {}),
                          "seconds_per_question": round(sum(profile.values()), 4),
                          "profile": profile,
                          "wall_s": round(time.perf_counter() - start, 1)}))


if __name__ == "__main__":
    main()
