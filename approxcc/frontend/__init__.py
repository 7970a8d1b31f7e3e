"""C/C++ → MLIR over libclang: approx.knob around each annotated region."""
