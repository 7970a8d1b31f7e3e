"""`python -m approxcc.transforms > docs/transforms.md`: the generated reference."""

from approxcc.registry import reference_docs

print(reference_docs(), end="")
