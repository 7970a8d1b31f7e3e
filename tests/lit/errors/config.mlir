// Configuration errors name the knob and point at its key inside the JSON file.
// RUN: printf '{\n  "knobs": {\n    "nope": {"value": 2}\n  }\n}\n' > %t.unknown.json
// RUN: not %approxcc opt %s --pass-pipeline='approx-apply-config{config=%t.unknown.json}' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: unknown.json:3:5: error: unknown knob 'nope' in configuration

// RUN: printf '{"knobs": {\n  "l": {"value": 3}}}' > %t.domain.json
// RUN: not %approxcc opt %s --pass-pipeline='approx-apply-config{config=%t.domain.json}' 2>&1 | FileCheck %s --check-prefix=DOMAIN
// DOMAIN: domain.json:2:3: error: knob 'l': value 3 is outside its domain [1, 2, 4]

// RUN: printf '{"knobs": {"l": {"thresholds": [5, 2], "decisions": [1, 2, 4]}}}' > %t.sorted.json
// RUN: not %approxcc opt %s --pass-pipeline='approx-apply-config{config=%t.sorted.json}' 2>&1 | FileCheck %s --check-prefix=SORTED
// SORTED: sorted.json:1:12: error: knob 'l': thresholds [5, 2] are not strictly increasing

// RUN: printf '{"knobs": {"l": {"thresholds": [2, 5], "decisions": [1, 2]}}}' > %t.count.json
// RUN: not %approxcc opt %s --pass-pipeline='approx-apply-config{config=%t.count.json}' 2>&1 | FileCheck %s --check-prefix=COUNT
// COUNT: count.json:1:12: error: knob 'l': 2 thresholds need 3 decisions, got 2

// RUN: printf '{"knobs": {"l": {"value": 2}\n}' > %t.malformed.json
// RUN: not %approxcc opt %s --pass-pipeline='approx-apply-config{config=%t.malformed.json}' 2>&1 | FileCheck %s --check-prefix=MALFORMED
// MALFORMED: malformed.json:2:2: error: malformed configuration: Expecting ',' delimiter

// RUN: printf '{"knobs": {"l": {"value": 2, "extra": 1}}}' > %t.shape.json
// RUN: not %approxcc opt %s --pass-pipeline='approx-apply-config{config=%t.shape.json}' 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: shape.json:1:12: error: knob 'l': expected {"value": int} or {"thresholds": [...], "decisions": [...]}

// A static knob takes a value, not a decision tree.
// RUN: printf '{"knobs": {"l": {"thresholds": [2], "decisions": [1, 2]}}}' > %t.static.json
// RUN: not %approxcc opt %s --pass-pipeline='approx-apply-config{config=%t.static.json}' 2>&1 | FileCheck %s --check-prefix=STATIC
// STATIC: static.json:1:12: error: knob 'l' is static: it takes {"value": v}, not thresholds and decisions

// Without params.values, the transform's own domain (the registry's) bounds the value.
// RUN: printf '{"knobs": {"s": {"value": 3}}}' > %t.transform.json
// RUN: not %approxcc opt %s --pass-pipeline='approx-apply-config{config=%t.transform.json}' 2>&1 | FileCheck %s --check-prefix=TRANSFORM
// TRANSFORM: transform.json:1:12: error: knob 's': value 3 is not valid for 'task_skipping' (must be 0 or 1)

// RUN: printf '[1]' > %t.top.json
// RUN: not %approxcc opt %s --pass-pipeline='approx-apply-config{config=%t.top.json}' 2>&1 | FileCheck %s --check-prefix=TOP
// TOP: top.json:1:1: error: configuration must be a JSON object

// RUN: not %approxcc opt %s --pass-pipeline='approx-apply-config{config=%t.missing.json}' 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: approxcc: error: cannot read configuration '{{.*}}missing.json': No such file or directory
func.func @k(%n: index) {
  "approx.knob"(%n) <{id = 0 : i64, name = "l", transform_types = ["loop_perforate"], params = {values = [1, 2, 4]}}> ({
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %k = %c0 to %t step %c1 {
    }
    "approx.yield"() : () -> ()
  }) : (index) -> ()
  "approx.knob"() <{id = 1 : i64, name = "s", transform_types = ["task_skipping"], params = {target = "statement"}}> ({
    "approx.yield"() : () -> ()
  }) : () -> ()
  func.return
}
