"""The runtimes' weights files: memory-mapped, and one copy a content in a process."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from approxcc.ml.stored_weights import load_weights

ARRAYS = [np.arange(12, dtype=np.float32).reshape(3, 4),
          np.asfortranarray(np.arange(6, dtype=np.int8).reshape(2, 3)),
          np.zeros((0, 3)), np.array(5, np.uint16), np.arange(70_000, dtype=np.int64)]


@pytest.mark.parametrize("save", [np.savez, np.savez_compressed])
def test_weights_read_as_numpy_writes_them(tmp_path: Path, save: object) -> None:
    save(tmp_path / "w.npz", *ARRAYS)   # type: ignore[operator]
    loaded = load_weights(tmp_path / "w.npz")
    assert [(a.dtype, a.shape) for a in loaded] == [(a.dtype, a.shape) for a in ARRAYS]
    assert all(np.array_equal(a, b) for a, b in zip(loaded, ARRAYS, strict=True))
    assert not loaded[4].flags.writeable


def test_builds_holding_the_same_weights_share_one_copy(tmp_path: Path) -> None:
    """A system loads a build a prompt length, each with the same weights file: the
    process keeps one copy of it in each form (mapped; on jax's device)."""
    for build in ("prefill_80", "prefill_96"):
        (tmp_path / build / "weights").mkdir(parents=True)
    first = tmp_path / "prefill_80" / "weights" / "0123abcd.npz"
    np.savez(first, *ARRAYS)
    other = shutil.copy(first, tmp_path / "prefill_96" / "weights")
    calls = []

    def doubled(arrays: list[np.ndarray]) -> list[np.ndarray]:
        calls.append(len(arrays))
        return [a * 2 for a in arrays]

    assert load_weights(first) is load_weights(Path(other))
    converted = load_weights(first, "doubled", doubled)
    assert load_weights(Path(other), "doubled", doubled) is converted and calls == [5]
    assert np.array_equal(converted[0], ARRAYS[0] * 2)
    del converted
    load_weights(first, "doubled", doubled)    # let go by every holder: loaded again
    assert calls == [5, 5]
