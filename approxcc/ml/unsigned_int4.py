"""Unsigned int4 weights through IREE: read as the program means them, by the int4 ukernel.

IREE 3.13 reads a `ui4` weight wrong twice over: its StableHLO input conversion rejects a
`util.global.load` of a `ui4` tensor, and its import folds the `convert` of a `ui4` tensor
into the contraction that consumes it (`linalg.vecmat` of i16 x i4) with the named op's
default *signed* cast, so codes 8-15 are read as -8..-1. So a weight parameter holding
unsigned int4 codes is a signless `i4` global named `p<k>` + `GLOBAL_SUFFIX`, bitcast to
`ui4` where it is loaded (`ml/build.py`), and this rewrite runs on the imported module
(iree-compile's `input` phase): each contraction becomes a `linalg.generic` whose body
extends its operands explicitly, and an i4 operand read from such a global (through copies,
transposes and reshapes) is zero-extended. That is also the form IREE's data tiling maps to
its `s16u4s32` mmt4d ukernel (a decode step's matvec reading half a byte a weight, VPDPBUSD
on AVX-512 VNNI) once the extension may fuse into the matmul's dispatch (`FLAGS`).
"""

from __future__ import annotations

from typing import Any

GLOBAL_SUFFIX = "_uint4"
# The zero extension fused into the matmul's dispatch, where the ukernel lowering finds it
# (else the widened i32 weight is a tensor of its own, hoisted into a copy 8x the codes).
FLAGS = ("--iree-dispatch-creation-block-matmul-producer-fusion=false",)
_RESHAPES = ("tensor.collapse_shape", "tensor.expand_shape")


def applies(stablehlo: str) -> bool:
    """The module reads unsigned int4 parameters."""
    return f'{GLOBAL_SUFFIX}"' in stablehlo


def rewrite(imported: str) -> str:
    """The imported module (`--compile-to=input`) with its contractions generalized and the
    i4 operands read from unsigned globals zero-extended."""
    from iree.compiler import ir, passmanager
    from iree.compiler.dialects import arith

    with ir.Context():
        module = ir.Module.parse(imported)
        passmanager.PassManager.parse(
            "builtin.module(util.func(linalg-generalize-named-ops))").run(module.operation)
        i4 = ir.IntegerType.get_signless(4)
        unsigned = []

        def find(op: ir.Operation) -> ir.WalkResult:
            if op.name == "arith.extsi" and op.operands[0].type == i4 \
                    and _from_unsigned_global(op.operands[0]):
                unsigned.append(op)
            return ir.WalkResult.ADVANCE

        module.operation.walk(find)
        for op in unsigned:
            with ir.InsertionPoint(op), op.location:
                zext = arith.ExtUIOp(op.results[0].type, op.operands[0])
            op.results[0].replace_all_uses_with(zext.result)
            op.erase()
        return str(module)


def _from_unsigned_global(value: Any) -> bool:
    """`value` (a block argument of a linalg.generic's body) holds elements of an unsigned
    global: its operand, followed up through element copies (a transpose's generic: one
    input, yielded as is) and reshapes, is a load of one."""
    from iree.compiler import ir

    if not isinstance(value, ir.BlockArgument):
        return False
    generic = value.owner.owner
    operand = generic.operands[value.arg_number]
    while not isinstance(operand.owner, ir.Block):
        op = operand.owner.operation
        if op.name == "util.global.load":
            return ir.FlatSymbolRefAttr(op.attributes["global"]).value.endswith(GLOBAL_SUFFIX)
        if op.name not in _RESHAPES and not _copies(op):
            return False
        operand = op.operands[0]
    return False


def _copies(op: Any) -> bool:
    """A linalg.generic of one input whose body yields that input: a copy or transpose."""
    if op.name != "linalg.generic" or len(op.regions[0].blocks[0].arguments) != 2:
        return False
    body = list(op.regions[0].blocks[0].operations)
    return len(body) == 1 and body[0].operands[0] == op.regions[0].blocks[0].arguments[0]
