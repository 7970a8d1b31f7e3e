"""The clang-compatible driver: options → phases → jobs, diagnostics, toolchain."""
