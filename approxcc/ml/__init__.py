"""The ML half of approxcc: `@approx.knob` on JAX functions (`approx`), variants
(`transforms`, `interpret`), `approxcc build model.py` (`build`) and the IREE runtime that
picks a variant per call (`runtime`). See approxcc/ml/README.md."""
