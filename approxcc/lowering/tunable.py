"""approx-tunable: knob parameters come from a runtime config table instead of constants.

Runs after approx-emit-management. Every knob gets slots in one per-module table
`@__approx_table` (an internal, mutable `!llvm.array<N x i64>` initialised with the current,
normally exact, configuration): a static knob one slot (its value), a dynamic knob N
threshold slots then N + 1 decision slots. `approx.transform`'s value and
`approx.decision_tree`'s thresholds and decisions become `llvm.load`s from the table. A
manifest (one line per knob, docs/approx-ir.md §3) and the table are registered with the
runtime through the external global `@__approx_entry_<hash>` = {manifest, table} in section
`approx_knobs`, which runtime/approxrt.c walks before `main` to apply `APPROX_CONFIG`.
"""

from __future__ import annotations

import hashlib
import math
import struct
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import llvm
from xdsl.dialects.arith import ExtFOp, ExtSIOp, IndexCastOp, TruncFOp, TruncIOp
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float64Type,
    IndexType,
    IntegerType,
    ModuleOp,
    StringAttr,
    TensorType,
    f64,
    i8,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from approxcc.diagnostics import CompileError
from approxcc.dialect import DecisionTreeOp, KnobOp, TransformOp, verify_knobs

TABLE = "__approx_table"
MANIFEST = "__approx_manifest"
ENTRY_PREFIX = "__approx_entry_"
SECTION = "approx_knobs"
ANCHOR_PREFIX = "__approx_anchor_"
RUNTIME_ANCHOR = "approx_runtime_anchor"

_PTR = llvm.LLVMPointerType()


def f64_bits(value: float) -> int:
    """The bits of an f64 as the signed i64 the table stores."""
    return struct.unpack("<q", struct.pack("<d", value))[0]


def _from_i64(value: SSAValue, type: Attribute) -> tuple[list[Operation], SSAValue]:
    """An i64 table entry as `type`: an index, an integer, or (f64 bits) a float."""
    ops: list[Operation]
    if isinstance(type, IndexType):
        ops = [IndexCastOp(value, type)]
    elif isinstance(type, IntegerType):
        width = type.width.data
        ops = [] if width == 64 else [TruncIOp(value, type) if width < 64
                                      else ExtSIOp(value, type)]
    else:
        assert isinstance(type, AnyFloat)
        ops = [llvm.BitcastOp(value, f64)]
        if not isinstance(type, Float64Type):
            bits = type.bitwidth
            ops.append(TruncFOp(ops[0].results[0], type) if bits < 64
                       else ExtFOp(ops[0].results[0], type))
    return ops, ops[-1].results[0] if ops else value


@dataclass
class TunableKnob(RewritePattern):
    """Gives one knob its table slots and replaces its management constants by loads.

    `table` and `manifest` accumulate over the module, in walk order."""

    table: list[int] = field(default_factory=list[int])
    manifest: list[str] = field(default_factory=list[str])

    @op_type_rewrite_pattern
    def match_and_rewrite(self, knob: KnobOp, rewriter: PatternRewriter, /) -> None:
        name = knob.knob_name.data
        management = [op for op in knob.body.block.ops
                      if isinstance(op, TransformOp | DecisionTreeOp)]
        trees = [op for op in management if isinstance(op, DecisionTreeOp)]
        statics = [op for op in management
                   if isinstance(op, TransformOp) and op.transform_value is not None]
        if len(knob.transform_types) != 1 or len(trees) + len(statics) != 1:
            raise CompileError(f"approx-tunable: knob '{name}' needs exactly one transform "
                               "type and one approx.transform or approx.decision_tree "
                               "(run approx-emit-management first)", knob.source_loc)
        slot = len(self.table)
        address = rewriter.insert(llvm.AddressOfOp(TABLE, _PTR),
                                  InsertPoint.at_start(knob.body.block)).result

        def load(value: int, type: Attribute, before: Operation) -> SSAValue:
            index = len(self.table)
            self.table.append(value)
            element = llvm.GEPOp(address, [index], i64)
            loaded = llvm.LoadOp(element, i64, alignment=8)
            converts, result = _from_i64(loaded.dereferenced_value, type)
            rewriter.insert([element, loaded, *converts], InsertPoint.before(before))
            return result

        if statics:
            (transform,) = statics
            assert transform.transform_value is not None
            initial = [transform.transform_value.value.data]
            value = load(initial[0], IndexType(), transform)
            rewriter.replace(transform, TransformOp(transform.transform_type, value))
            kind = "static"
        else:
            (tree,) = trees
            if tree.is_ssa_form:
                raise CompileError(f"approx-tunable: knob '{name}' is already tunable",
                                   knob.source_loc)
            assert tree.thresholds is not None and tree.decisions is not None  # verified
            state_type = tree.state.type
            integer_state = isinstance(state_type, IntegerType)
            thresholds = [load(math.ceil(t.value.data) if integer_state
                               else f64_bits(float(t.value.data)), state_type, tree)
                          for t in tree.thresholds]
            initial = [d.value.data for d in tree.decisions]
            decisions = [load(d, IndexType(), tree) for d in initial]
            rewriter.replace(tree, DecisionTreeOp(tree.state, thresholds, decisions,
                                                     tree.transform_type))
            kind = f"dynamic {len(thresholds)} {'i' if integer_state else 'f'}"
        domain = knob.param("values")
        values = ([v.value.data for v in domain] if isinstance(domain, ArrayAttr)
                  else sorted(set(initial)))
        self.manifest.append(f"{name} {slot} {kind} {','.join(map(str, values))}")


def _registration(module: ModuleOp, table: list[int], manifest: str) -> list[Operation]:
    """The table, the manifest and the entry that registers both with the runtime."""
    table_type = llvm.LLVMArrayType(len(table), i64)
    text = manifest.encode() + b"\0"
    # Unique per translation unit: its knobs and the symbols it defines.
    symbols = [name.data for op in module.body.block.ops
               if isinstance(name := op.properties.get("sym_name"), StringAttr)]
    digest = hashlib.sha256("\n".join([manifest, *symbols]).encode()).hexdigest()[:16]
    entry_type = llvm.LLVMStructType.from_type_list([_PTR, _PTR])
    undef = llvm.UndefOp(entry_type)
    manifest_address = llvm.AddressOfOp(MANIFEST, _PTR)
    with_manifest = llvm.InsertValueOp(DenseArrayBase.from_list(i64, [0]), undef.res,
                                       manifest_address.result)
    table_address = llvm.AddressOfOp(TABLE, _PTR)
    with_table = llvm.InsertValueOp(DenseArrayBase.from_list(i64, [1]), with_manifest.res,
                                    table_address.result)
    initializer = Block([undef, manifest_address, with_manifest, table_address, with_table,
                         llvm.ReturnOp(with_table.res)])
    # An external global holding the runtime anchor's address: the object's undefined
    # reference that pulls the runtime (its APPROX_CONFIG constructor) out of the archive.
    anchor_address = llvm.AddressOfOp(RUNTIME_ANCHOR, _PTR)
    anchor = Block([anchor_address, llvm.ReturnOp(anchor_address.result)])
    return [
        llvm.GlobalOp(table_type, TABLE, "internal", alignment=8,
                      value=DenseIntOrFPElementsAttr.from_list(TensorType(i64, [len(table)]),
                                                               table)),
        llvm.GlobalOp(llvm.LLVMArrayType(len(text), i8), MANIFEST, "internal", constant=True,
                      value=StringAttr(text.decode())),
        llvm.GlobalOp(entry_type, f"{ENTRY_PREFIX}{digest}", "external", constant=True,
                      section=SECTION, body=Region(initializer)),
        llvm.GlobalOp(i8, RUNTIME_ANCHOR, "external", constant=True),
        llvm.GlobalOp(_PTR, f"{ANCHOR_PREFIX}{digest}", "external", constant=True,
                      body=Region(anchor)),
    ]


@dataclass(frozen=True)
class TunablePass(ModulePass):
    name = "approx-tunable"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        verify_knobs(op)
        knob_slots = TunableKnob()
        PatternRewriteWalker(knob_slots, apply_recursively=False).rewrite_module(op)
        if not knob_slots.table:
            return
        manifest = "".join(f"{line}\n" for line in knob_slots.manifest)
        op.body.block.add_ops(_registration(op, knob_slots.table, manifest))
