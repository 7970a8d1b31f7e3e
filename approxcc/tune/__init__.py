"""Tuning: QoS metrics, the knob search, the Pareto archive."""
