"""What a knob's target writes, saved before the target runs and put back before an exact
re-run (approx-lower-try's `recover(exact)`).

A write is a store (`memref.store`, `llvm.store`, `memref.copy`, `memref.atomic_rmw`) or
a pointer handed to a call, which may write through it. Each written address is traced back
through views (casts, descriptors, `getelementptr`, subviews) and knob block arguments to
the object it lies in:

- a local (`memref.alloca` of static shape, `llvm.alloca` of a constant count) or a
  non-constant global (`llvm.mlir.global`, `memref.get_global`): bounded, so saved. A scalar
  slot is saved as an SSA value (load before, store back); a local array or struct through a
  shadow slot at function entry, a global through a shadow global (both copied whole);
- anything else (a pointer argument, a loaded or returned pointer): its extent is unknown,
  so a store through it is reported (`-Wapprox-recover`) and left as the approximate run
  wrote it. A callee's own writes to memory it reaches by itself are not seen.

A global's shadow is one per knob, so a target that re-enters its own knob through
recursion overwrites the outer checkpoint of that global (locals are per activation).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from xdsl.dialects import arith, func, llvm, memref
from xdsl.dialects.builtin import (
    IntegerAttr,
    MemRefType,
    ModuleOp,
    UnrealizedConversionCastOp,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import SymbolTable

from approxcc.dialect import KnobOp
from approxcc.frontend.llvm_ops import memcpy_ops

_PTR = llvm.LLVMPointerType()
# Ops whose pointer-like result addresses the same object as their pointer-like operands.
_VIEWS = (UnrealizedConversionCastOp, llvm.ExtractValueOp, llvm.InsertValueOp, llvm.GEPOp,
          memref.SubviewOp, memref.CastOp, memref.ReinterpretCastOp, memref.ExpandShapeOp,
          memref.CollapseShapeOp)
_NO_OBJECT = (llvm.UndefOp, llvm.ZeroOp, llvm.ConstantOp, arith.ConstantOp, llvm.IntToPtrOp)
_CALLS = (func.CallOp, llvm.CallOp, llvm.CallIntrinsicOp)


def _pointer_like(type: Attribute) -> bool:
    return isinstance(type, MemRefType | llvm.LLVMPointerType | llvm.LLVMStructType)


@dataclass
class Writes:
    """The bounded objects a target writes (values defined before it, first write first) and
    the stores it makes through pointers of unknown extent, each with what it writes through."""

    objects: list[SSAValue] = field(default_factory=list[SSAValue])
    unbounded: list[tuple[Operation, str]] = field(default_factory=list[tuple[Operation, str]])


def _written(op: Operation) -> Iterator[tuple[SSAValue, bool]]:
    """The addresses `op` may write, each with whether the write is the op's own (a store)
    rather than a callee's."""
    if isinstance(op, memref.StoreOp | memref.AtomicRMWOp):
        yield op.memref, True
    elif isinstance(op, llvm.StoreOp):
        yield op.ptr, True
    elif isinstance(op, memref.CopyOp):
        yield op.destination, True
    elif isinstance(op, _CALLS):
        yield from ((v, False) for v in op.operands if _pointer_like(v.type))


def _bounded(value: SSAValue) -> bool:
    owner = value.owner
    if isinstance(owner, memref.AllocaOp | memref.GetGlobalOp):
        return isinstance(value.type, MemRefType) and value.type.has_static_shape()
    if isinstance(owner, llvm.AllocaOp):
        return isinstance(owner.size.owner, llvm.ConstantOp | arith.ConstantOp)
    if isinstance(owner, llvm.AddressOfOp):
        target = SymbolTable.lookup_symbol(owner, owner.global_name)
        return isinstance(target, llvm.GlobalOp)
    return False


def _constant_global(value: SSAValue) -> bool:
    """The address of a constant global: nothing may write it."""
    owner = value.owner
    if not isinstance(owner, llvm.AddressOfOp):
        return False
    target = SymbolTable.lookup_symbol(owner, owner.global_name)
    return not isinstance(target, llvm.GlobalOp) or target.constant is not None


def _describe(value: SSAValue) -> str:
    owner = value.owner
    if isinstance(owner, Block):
        parent = owner.parent_op()
        if isinstance(parent, func.FuncOp | llvm.FuncOp):
            assert isinstance(value, BlockArgument)
            return f"argument {value.index + 1} of '{parent.sym_name.data}'"
        return "a pointer carried by a loop"
    if isinstance(owner, llvm.LoadOp | memref.LoadOp):
        return "a pointer loaded from memory"
    if isinstance(owner, func.CallOp | llvm.CallOp) and owner.callee is not None:
        return f"a pointer returned by '{owner.callee.string_value()}'"
    return f"a pointer computed by '{owner.name}'"


def _origins(address: SSAValue, target: KnobOp) -> Iterator[SSAValue]:
    """The values `address` is derived from that are objects or opaque pointers: knob block
    arguments are followed to the knob operands, views to what they view."""
    pending, seen = [address], set[SSAValue]()
    while pending:
        value = pending.pop()
        if value in seen:
            continue
        seen.add(value)
        owner = value.owner
        if isinstance(value, BlockArgument) and isinstance(owner, Block) and \
                isinstance(knob := owner.parent_op(), KnobOp):
            pending.append(knob.operands[value.index])
        elif isinstance(owner, _VIEWS):
            pending += [v for v in owner.operands if _pointer_like(v.type)]
        elif isinstance(owner, memref.AllocaOp | llvm.AllocaOp) and target.is_ancestor(owner):
            continue  # made inside the target: the re-run makes it afresh
        elif not isinstance(owner, _NO_OBJECT) and not _constant_global(value):
            yield value


def written_memory(knob: KnobOp, skip: Operation) -> Writes:
    """What the knob's body (less `skip`, its try) writes, traced to objects."""
    writes = Writes()
    for op in knob.body.walk():
        if skip.is_ancestor(op):
            continue
        for address, own in _written(op):
            for origin in _origins(address, knob):
                if _bounded(origin):
                    if not any(_same_object(origin, o) for o in writes.objects):
                        writes.objects.append(_before(origin, knob))
                elif own:
                    writes.unbounded.append((op, _describe(origin)))
    return writes


def _same_object(a: SSAValue, b: SSAValue) -> bool:
    """Two addresses of one global are one object."""
    if isinstance(a.owner, llvm.AddressOfOp) and isinstance(b.owner, llvm.AddressOfOp):
        return a.owner.global_name == b.owner.global_name
    if isinstance(a.owner, memref.GetGlobalOp) and isinstance(b.owner, memref.GetGlobalOp):
        return a.owner.name_ == b.owner.name_
    return a == b


def _before(obj: SSAValue, knob: KnobOp) -> SSAValue:
    """`obj` as a value available before the knob: a global's address taken inside the
    target is taken again there."""
    owner = obj.owner
    if isinstance(owner, llvm.AddressOfOp | memref.GetGlobalOp) and knob.is_ancestor(owner):
        address = owner.clone()
        Rewriter.insert_op(address, InsertPoint.before(knob))
        return address.results[0]
    return obj


def _entry(knob: KnobOp) -> InsertPoint:
    """The start of the enclosing function's entry block (where shadow slots go, once)."""
    op: Operation | None = knob
    while op is not None and not isinstance(op, func.FuncOp | llvm.FuncOp):
        op = op.parent_op()
    if op is None or not op.regions[0].blocks:
        return InsertPoint.before(knob)
    return InsertPoint.at_start(op.regions[0].blocks[0])


def _object_type(value: SSAValue) -> Attribute:
    """The LLVM type of the object at an `llvm.alloca` or `llvm.mlir.addressof`."""
    owner = value.owner
    if isinstance(owner, llvm.AllocaOp):
        size = owner.size.owner
        assert isinstance(size, llvm.ConstantOp | arith.ConstantOp)  # _bounded checked
        count = size.value
        assert isinstance(count, IntegerAttr)
        elem = owner.elem_type
        return elem if count.value.data == 1 else llvm.LLVMArrayType(count.value.data, elem)
    assert isinstance(owner, llvm.AddressOfOp)
    target = SymbolTable.lookup_symbol(owner, owner.global_name)
    assert isinstance(target, llvm.GlobalOp)
    return target.global_type


@dataclass
class Checkpoint:
    """Saves the objects before the knob; `restore()` gives the ops that put them back."""

    knob: KnobOp
    objects: list[SSAValue]
    _restore: list[tuple[SSAValue, SSAValue]] = field(default_factory=list)

    def save(self) -> None:
        before = InsertPoint.before(self.knob)
        for n, obj in enumerate(self.objects):
            if isinstance(obj.type, MemRefType):
                if not obj.type.get_shape():
                    saved = memref.LoadOp.get(obj, [])
                    Rewriter.insert_op(saved, before)
                    self._restore.append((saved.res, obj))
                    continue
                shadow = memref.AllocaOp.get(obj.type.element_type, shape=obj.type.get_shape())
                Rewriter.insert_op(shadow, _entry(self.knob))
                Rewriter.insert_op(memref.CopyOp(obj, shadow.memref), before)
                self._restore.append((shadow.memref, obj))
                continue
            shadow_ptr = self._shadow(obj, n)
            Rewriter.insert_op(memcpy_ops(shadow_ptr, obj, _object_type(obj)), before)
            self._restore.append((shadow_ptr, obj))

    def _shadow(self, obj: SSAValue, n: int) -> SSAValue:
        """A slot of the object's type: at function entry for a local, a global for a
        global (which may be too large for the stack)."""
        type = _object_type(obj)
        if isinstance(obj.owner, llvm.AllocaOp):
            one = llvm.ConstantOp(IntegerAttr(1, i64), i64)
            align = obj.owner.alignment
            slot = llvm.AllocaOp(one, type, alignment=align.value.data if align else 16)
            Rewriter.insert_op([one, slot], _entry(self.knob))
            return slot.res
        module = self.knob.get_toplevel_object()
        assert isinstance(module, ModuleOp)
        name = f"__approx_checkpoint_{self.knob.knob_name.data}_{n}"
        zero = llvm.ZeroOp(result_types=[type])
        module.body.block.add_op(llvm.GlobalOp(
            type, name, "internal", alignment=16,
            body=Region(Block([zero, llvm.ReturnOp(zero.res)]))))
        address = llvm.AddressOfOp(name, _PTR)
        Rewriter.insert_op(address, InsertPoint.before(self.knob))
        return address.result

    def restore(self) -> list[Operation]:
        """The ops that put every saved object back (to run before the exact re-run)."""
        ops: list[Operation] = []
        for saved, obj in self._restore:
            if not isinstance(obj.type, MemRefType):
                ops += memcpy_ops(obj, saved, _object_type(obj))
            elif obj.type.get_shape():
                ops.append(memref.CopyOp(saved, obj))
            else:
                ops.append(memref.StoreOp.get(saved, obj, []))
        return ops
