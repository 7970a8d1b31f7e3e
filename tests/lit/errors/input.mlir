// Parse errors and bad pipelines are diagnostics, never tracebacks.
// RUN: not %approxcc opt %s --split-input-file 2>&1 | FileCheck %s
// RUN: not %approxcc opt %s --pass-pipeline=approx-nothing 2>&1 | FileCheck %s --check-prefix=PASS
// PASS: approxcc: error: unknown pass 'approx-nothing'
// RUN: not %approxcc opt %s --pass-pipeline='approx-apply-config' 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: approxcc: error: pass 'approx-apply-config': approx-apply-config requires argument "config"

// CHECK-NOT: Traceback
// CHECK: input.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: Operation arith.bogus is not registered
func.func @f() {
  %x = arith.bogus : i32
  func.return
}

// -----

// The line numbers of later chunks count from the start of the file.
// CHECK: input.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: Operation math.bogus is not registered
func.func @g() {
  %y = math.bogus : f32
  func.return
}
