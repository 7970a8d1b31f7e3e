"""The ML half of approxcc: `@approx.knob` on JAX functions (`approx`, `program`), variants
(`transforms`, `interpret`), the approx IR of a model and its passes (`ir`, `passes`),
`approxcc model.py` (`build`, `iree`) and the IREE runtime that picks a variant per call
(`runtime`). See docs/ml.md and approxcc/ml/README.md."""
