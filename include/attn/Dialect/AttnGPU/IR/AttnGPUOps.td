//===- AttnGPUOps.td - attn's mid-level kernel IR ----------*- tablegen -*-===//
//
// Part of the attn project: an MLIR compiler for exact attention.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTNGPU_IR_ATTNGPUOPS_TD
#define ATTN_DIALECT_ATTNGPU_IR_ATTNGPUOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Dialect/LLVMIR/LLVMOpBase.td"

def AttnGPU_Dialect : Dialect {
  let name = "attn_gpu";
  let cppNamespace = "::mlir::attn_gpu";
  let summary = "attn's mid-level kernel IR: the kernels as schedules";
  let description = [{
    The vocabulary the attention kernels are scheduled in, between
    `attn.attention` and NVVM: mbarrier waits and arrivals, TMA tensor
    loads, named barriers, warpgroup MMAs with A from shared memory or from
    registers, the wgmma fence and the wait that threads the accumulators,
    the fast-math steps of the online softmax. `convert-attn-to-gpu` writes
    each kernel as a program of these ops (plus upstream arith/scf/LLVM/NVVM
    ops where those already say it: cp.async, ldmatrix, mma.sync, shuffles,
    setmaxnreg); `convert-attn-gpu-to-nvvm` lowers each op by one pattern.

    The IR is *scheduled*: every op that touches memory, a barrier or the
    asynchronous tensor cores declares its side effects, so no pass between
    here and NVVM reorders them; program order is issue order.

    Two levels share the dialect. The schedules' tiles are *fragments*
    (`!attn_gpu.frag`: a warp's 16 rows with their register layout), and
    the ops on them say what a kernel does with a tile: warpgroup MMAs
    that take and give accumulator fragments, the band mask, the online
    softmax step, the row rescale, P rounded into an A operand; the tiles
    TMA fills are *rings* (`!attn_gpu.ring`: stages of 128-byte-swizzled
    tiles), whose stages' tiles and wgmma descriptors come from their type.
    `lower-attn-gpu-tiles` rewrites each of those into the
    instruction-level ops on one thread's registers (f32 accumulators, i32
    packed operand pairs; `wgmma_ss`/`wgmma_rs` take a wgmma's N/2 f32
    accumulators in the m64nNk16 layout of the PTX ISA), which
    `convert-attn-gpu-to-nvvm` lowers. Indices are i32/i64, shared memory
    `!llvm.ptr<3>`.
  }];
  let useDefaultTypePrinterParser = 1;
}

include "attn/Dialect/AttnGPU/IR/AttnGPUTypes.td"

class AttnGPU_Op<string mnemonic, list<Trait> traits = []>
    : Op<AttnGPU_Dialect, mnemonic, traits>;

def AttnGPU_SharedPtr : LLVM_PointerInAddressSpace<3>;
def AttnGPU_GenericPtr : LLVM_PointerInAddressSpace<0>;
// Global memory, generic (0) or global (1) address space.
def AttnGPU_GlobalPtr : AnyTypeOf<[LLVM_PointerInAddressSpace<0>,
                                   LLVM_PointerInAddressSpace<1>]>;

//===----------------------------------------------------------------------===//
// mbarriers
//===----------------------------------------------------------------------===//

def AttnGPU_MBarrierInitOp : AttnGPU_Op<"mbarrier_init",
    [MemoryEffects<[MemWrite]>]> {
  let summary = "Initialise an mbarrier with an expected arrival count";
  let description = [{
    `mbarrier.init.shared::cta.b64`: the barrier at `barrier` (8 bytes of
    shared memory) starts in phase 0 expecting `count` arrivals.

    ```mlir
    attn_gpu.mbarrier_init %bar, count = 1 : !llvm.ptr<3>
    ```
  }];
  let arguments = (ins AttnGPU_SharedPtr:$barrier, I64Attr:$count);
  let assemblyFormat = "$barrier `,` `count` `=` $count attr-dict `:` qualified(type($barrier))";
  let hasVerifier = 1;
}

def AttnGPU_MBarrierInitFenceOp : AttnGPU_Op<"mbarrier_init_fence",
    [MemoryEffects<[MemWrite]>]> {
  let summary = "Make initialised mbarriers visible to the TMA unit";
  let description = [{
    `fence.mbarrier_init.release.cluster` then `fence.proxy.async.shared::cta`:
    barriers initialised before it are visible to the async proxy (TMA).
    A CTA barrier must follow before another thread uses them.

    ```mlir
    attn_gpu.mbarrier_init_fence
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def AttnGPU_MBarrierArriveOp : AttnGPU_Op<"mbarrier_arrive",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "One arrival on an mbarrier (a release of a ring slot)";
  let description = [{
    ```mlir
    attn_gpu.mbarrier_arrive %bar : !llvm.ptr<3>
    ```
  }];
  let arguments = (ins AttnGPU_SharedPtr:$barrier);
  let assemblyFormat = "$barrier attr-dict `:` qualified(type($barrier))";
}

def AttnGPU_MBarrierArriveExpectTxOp : AttnGPU_Op<"mbarrier_arrive_expect_tx",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "One arrival that also expects `bytes` of TMA transactions";
  let description = [{
    The producer's arrival on a full-barrier: the phase completes once
    the arrivals and the `bytes` of the TMA loads that signal this barrier
    have completed.

    ```mlir
    attn_gpu.mbarrier_arrive_expect_tx %bar, bytes = 16384 : !llvm.ptr<3>
    ```
  }];
  let arguments = (ins AttnGPU_SharedPtr:$barrier, I64Attr:$bytes);
  let assemblyFormat = "$barrier `,` `bytes` `=` $bytes attr-dict `:` qualified(type($barrier))";
  let hasVerifier = 1;
}

def AttnGPU_MBarrierWaitOp : AttnGPU_Op<"mbarrier_wait",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Wait until the phase of the given parity has completed";
  let description = [{
    Blocks the thread until the barrier's phase with parity `parity`
    (i32, 0 or 1) has completed (a `try_wait.parity` loop).

    ```mlir
    attn_gpu.mbarrier_wait %bar, %parity : !llvm.ptr<3>
    ```
  }];
  let arguments = (ins AttnGPU_SharedPtr:$barrier, I32:$parity);
  let assemblyFormat = "$barrier `,` $parity attr-dict `:` qualified(type($barrier))";
}

//===----------------------------------------------------------------------===//
// TMA
//===----------------------------------------------------------------------===//

def AttnGPU_TmaLoadOp : AttnGPU_Op<"tma_load",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "TMA load of one box of a tensor map into shared memory";
  let description = [{
    `cp.async.bulk.tensor.<rank>d.shared::cluster.global.tile` of the box
    at `coordinates` (innermost first, i32) of the tensor map `tensor_map`
    (the generic address of a `__grid_constant__` CUtensorMap parameter)
    into `dst`; its bytes complete on `barrier`.

    ```mlir
    attn_gpu.tma_load %dst, %map[%c0, %row, %h, %b], %bar
        : !llvm.ptr<3>, !llvm.ptr, !llvm.ptr<3>
    ```
  }];
  let arguments = (ins AttnGPU_SharedPtr:$dst, AttnGPU_GenericPtr:$tensor_map,
                       Variadic<I32>:$coordinates, AttnGPU_SharedPtr:$barrier);
  let assemblyFormat = [{
    $dst `,` $tensor_map `[` $coordinates `]` `,` $barrier attr-dict `:`
    qualified(type($dst)) `,` qualified(type($tensor_map)) `,` qualified(type($barrier))
  }];
  let hasVerifier = 1;
}

def AttnGPU_BulkReduceAddOp : AttnGPU_Op<"bulk_reduce_add",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Add `bytes` of f32 from shared memory into global memory";
  let description = [{
    `cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32`: the
    backward's dQ tile added into the f32 dQ accumulator by the TMA unit,
    asynchronously, in the current bulk group (wait for it with
    `nvvm.cp.async.bulk.wait_group`). NVVM has no op for it (only the
    tensor-map form): it lowers to inline PTX. `bytes` is a multiple of 16.

    ```mlir
    attn_gpu.bulk_reduce_add %dst, %src, %bytes : !llvm.ptr, !llvm.ptr<3>
    ```
  }];
  let arguments = (ins AttnGPU_GlobalPtr:$dst, AttnGPU_SharedPtr:$src,
                       I32:$bytes);
  let assemblyFormat = [{
    $dst `,` $src `,` $bytes attr-dict `:` qualified(type($dst)) `,` qualified(type($src))
  }];
}

def AttnGPU_GlobalReduceAddOp : AttnGPU_Op<"global_reduce_add",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Atomically add f32 values into global memory";
  let description = [{
    `ptr[i] += values[i]` with no result (a reduction: the backward's dQ
    accumulation), `width` values at a time: one `red.global.add.f32` per
    value, or with `width` 2 or 4 one `red.global.add.v2.f32` or `.v4.f32`
    per group (sm_90 and newer, the address 4·width-byte aligned): half or
    a quarter of the atomic instructions. Group i goes to `ptr` +
    i·`stride` bytes (default: the groups are consecutive), up to 32
    groups (a column of a row-major tile), each address the one pointer
    plus an immediate, so that no register holds it. Inline PTX: NVPTX
    emits LLVM's `atomicrmw fadd` as `atom` with a result, and has no
    vector form.

    ```mlir
    attn_gpu.global_reduce_add %ptr, %lo, %hi {width = 2} : !llvm.ptr<1>, f32, f32
    attn_gpu.global_reduce_add %ptr, %a, %b, %c {stride = 1024} : !llvm.ptr<1>, f32, f32, f32
    ```
  }];
  let arguments = (ins AttnGPU_GlobalPtr:$ptr, Variadic<F32>:$values,
                       OptionalAttr<I64Attr>:$width,
                       OptionalAttr<I64Attr>:$stride);
  let builders = [
    // Groups of `width` values, group i at ptr + i·stride bytes (stride 0:
    // consecutive).
    OpBuilder<(ins "::mlir::Value":$ptr, "::mlir::ValueRange":$values,
                   CArg<"int64_t", "1">:$width, CArg<"int64_t", "0">:$stride), [{
      build($_builder, $_state, ptr, values,
            width == 1 ? ::mlir::IntegerAttr()
                       : $_builder.getI64IntegerAttr(width),
            stride == 0 ? ::mlir::IntegerAttr()
                        : $_builder.getI64IntegerAttr(stride));
    }]>
  ];
  let extraClassDeclaration = [{
    int64_t getGroupWidth() { return getWidth().value_or(1); }
    /// Bytes from `ptr` to group i's first value.
    int64_t getGroupOffset(int64_t i) {
      return i * getStride().value_or(4 * getGroupWidth());
    }
  }];
  let assemblyFormat = [{
    $ptr `,` $values attr-dict `:` qualified(type($ptr)) `,` type($values)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Named barriers
//===----------------------------------------------------------------------===//

def AttnGPU_NamedBarrierSyncOp : AttnGPU_Op<"named_barrier_sync",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Wait on named barrier `id` until `threads` threads arrived";
  let description = [{
    `bar.sync id, threads`: how the consumer warpgroups take turns
    (ping-pong) and how a warpgroup waits for another's epilogue.

    ```mlir
    attn_gpu.named_barrier_sync %id, threads = 256
    ```
  }];
  let arguments = (ins I32:$id, I64Attr:$threads);
  let assemblyFormat = "$id `,` `threads` `=` $threads attr-dict";
  let hasVerifier = 1;
}

def AttnGPU_NamedBarrierArriveOp : AttnGPU_Op<"named_barrier_arrive",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Arrive on named barrier `id` without waiting";
  let description = [{
    `bar.arrive id, threads`.

    ```mlir
    attn_gpu.named_barrier_arrive %id, threads = 256
    ```
  }];
  let arguments = (ins I32:$id, I64Attr:$threads);
  let assemblyFormat = "$id `,` `threads` `=` $threads attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Warpgroup MMA
//===----------------------------------------------------------------------===//

def AttnGPU_WgmmaDescriptorOp : AttnGPU_Op<"wgmma_descriptor", [Pure]> {
  let summary = "The wgmma matrix descriptor of a 128-byte-swizzled tile";
  let description = [{
    The 64-bit shared-memory matrix descriptor of the tile at `tile`, laid
    out as TMA writes it with 128-byte swizzling (rows of 128 bytes,
    1024-byte aligned): start address, `leading_bytes` and `stride_bytes`
    as in the PTX ISA's descriptor format (multiples of 16 below 2^18).

    ```mlir
    %d = attn_gpu.wgmma_descriptor %tile, leading_bytes = 16,
        stride_bytes = 1024 : !llvm.ptr<3>
    ```
  }];
  let arguments = (ins AttnGPU_SharedPtr:$tile, I64Attr:$leading_bytes,
                       I64Attr:$stride_bytes);
  let results = (outs I64:$descriptor);
  let assemblyFormat = [{
    $tile `,` `leading_bytes` `=` $leading_bytes `,` `stride_bytes` `=`
    $stride_bytes attr-dict `:` qualified(type($tile))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shared-memory rings
//===----------------------------------------------------------------------===//

def AttnGPU_RingViewOp : AttnGPU_Op<"ring_view", [Pure]> {
  let summary = "Shared memory at `base` as a ring of tiles";
  let description = [{
    The ring's tiles start at `base` (1024-byte aligned, as the 128-byte
    swizzle needs).

    ```mlir
    %kv = attn_gpu.ring_view %base : !llvm.ptr<3> -> !attn_gpu.ring<2x128x128xbf16>
    ```
  }];
  let arguments = (ins AttnGPU_SharedPtr:$base);
  let results = (outs AttnGPU_RingType:$ring);
  let assemblyFormat = [{
    $base attr-dict `:` qualified(type($base)) `->` qualified(type($ring))
  }];
}

def AttnGPU_RingTileOp : AttnGPU_Op<"ring_tile", [Pure]> {
  let summary = "The shared-memory address of a ring stage's tile or panel";
  let description = [{
    The tile of stage `stage` (i32, below the ring's stages), or with
    `panel` its 64-column panel `panel`: where TMA writes it.

    ```mlir
    %t = attn_gpu.ring_tile %kv[%stage] : !attn_gpu.ring<2x128x128xbf16>
    %p = attn_gpu.ring_tile %kv[%stage] {panel = 1 : i64} : !attn_gpu.ring<2x128x128xbf16>
    ```
  }];
  let arguments = (ins AttnGPU_RingType:$ring, I32:$stage,
                       OptionalAttr<I64Attr>:$panel);
  let results = (outs AttnGPU_SharedPtr:$tile);
  let assemblyFormat = [{
    $ring `[` $stage `]` attr-dict `:` qualified(type($ring))
  }];
  let hasVerifier = 1;
}

def AttnGPU_RingDescriptorOp : AttnGPU_Op<"ring_descriptor", [Pure]> {
  let summary = "The wgmma descriptor of a ring stage's tile";
  let description = [{
    The shared-memory matrix descriptor wgmma reads stage `stage`'s tile
    through, from the ring's layout: K-major (the reduction runs along the
    tile's columns: leading offset 16 bytes, stride 8 rows of 128 bytes),
    or with `mn_major` along its rows (V in P·V: leading offset one panel,
    the same stride).

    ```mlir
    %d = attn_gpu.ring_descriptor %kv[%stage] {mn_major} : !attn_gpu.ring<2x128x128xbf16>
    ```
  }];
  let arguments = (ins AttnGPU_RingType:$ring, I32:$stage,
                       UnitAttr:$mn_major);
  let results = (outs I64:$descriptor);
  let assemblyFormat = [{
    $ring `[` $stage `]` attr-dict `:` qualified(type($ring))
  }];
}

def AttnGPU_WgmmaFenceOp : AttnGPU_Op<"wgmma_fence",
    [MemoryEffects<[MemRead, MemWrite]>, AllTypesMatch<["values", "results"]>]> {
  let summary = "wgmma.fence, with the registers about to feed a wgmma";
  let description = [{
    Orders the register writes of `values` (accumulators and register A
    operands, as registers or as fragments) before the wgmmas that follow;
    the values come out unchanged as `results`, which those wgmmas use.

    ```mlir
    %a:2 = attn_gpu.wgmma_fence %x, %y : f32, f32
    ```
  }];
  let arguments = (ins Variadic<AnyTypeOf<[F32, I32, AttnGPU_FragmentType]>>:$values);
  let results = (outs Variadic<AnyTypeOf<[F32, I32, AttnGPU_FragmentType]>>:$results);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

def AttnGPU_WgmmaCommitGroupOp : AttnGPU_Op<"wgmma_commit_group",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "wgmma.commit_group: close the group of wgmmas issued so far";
  let assemblyFormat = "attr-dict";
}

def AttnGPU_WgmmaWaitGroupOp : AttnGPU_Op<"wgmma_wait_group",
    [MemoryEffects<[MemRead, MemWrite]>, AllTypesMatch<["values", "results"]>]> {
  let summary = "Wait until at most `pending` wgmma groups are in flight";
  let description = [{
    `wgmma.wait_group pending`; the accumulators `values` of the groups it
    waits for (and registers that fed them, which may be overwritten only
    once the wgmma has read them) come out as `results`, so that their
    readers and writers are after the wait in the IR's data flow, not only
    in program order.

    ```mlir
    %acc:2 = attn_gpu.wgmma_wait_group 0, %x, %y : f32, f32
    ```
  }];
  let arguments = (ins I64Attr:$pending,
                       Variadic<AnyTypeOf<[F32, I32, AttnGPU_FragmentType]>>:$values);
  let results = (outs Variadic<AnyTypeOf<[F32, I32, AttnGPU_FragmentType]>>:$results);
  let assemblyFormat = "$pending (`,` $values^ `:` type($values))? attr-dict";
  let hasVerifier = 1;
}

class AttnGPU_WgmmaBase<string mnemonic> : AttnGPU_Op<mnemonic,
    [MemoryEffects<[MemRead, MemWrite]>, AllTypesMatch<["acc", "results"]>]> {
  let results = (outs Variadic<F32>:$results);
  let hasVerifier = 1;
  code commonDescription = [{
    D = A·B + (accumulate ? D : 0) on `wgmma.mma_async.m64n<n>k16.f32`,
    `element_type` f16 or bf16, issued asynchronously for the whole
    warpgroup: `acc` is this thread's N/2 f32 accumulators in, `results`
    the same registers out (read them only after a `wgmma_wait_group`).
    B is a shared-memory descriptor, K-major unless `transpose_b`.
  }];
}

def AttnGPU_WgmmaSSOp : AttnGPU_WgmmaBase<"wgmma_ss"> {
  let summary = "Warpgroup MMA, A and B from shared memory";
  let description = commonDescription # [{
    A is a shared-memory descriptor too, K-major unless `transpose_a`.

    ```mlir
    %d:4 = attn_gpu.wgmma_ss %da, %db, %c0, %c1, %c2, %c3
        {n = 8 : i64, element_type = bf16, accumulate = true}
        : f32, f32, f32, f32
    ```
  }];
  let arguments = (ins I64:$desc_a, I64:$desc_b, Variadic<F32>:$acc,
                       I64Attr:$n, TypeAttr:$element_type,
                       BoolAttr:$accumulate, UnitAttr:$transpose_a,
                       UnitAttr:$transpose_b);
  let assemblyFormat = "$desc_a `,` $desc_b `,` $acc attr-dict `:` type($acc)";
}

def AttnGPU_WgmmaRSOp : AttnGPU_WgmmaBase<"wgmma_rs"> {
  let summary = "Warpgroup MMA, A from registers and B from shared memory";
  let description = commonDescription # [{
    A is `a`: four i32 registers, each a packed pair of `element_type`, in
    the m16k16 fragment layout of the warp's 16 rows (how the softmax's P
    feeds P·V without a trip through shared memory). NVVM has no op for
    this form; it lowers to inline PTX.

    ```mlir
    %d:4 = attn_gpu.wgmma_rs %a0, %a1, %a2, %a3, %db, %c0, %c1, %c2, %c3
        {n = 8 : i64, element_type = bf16, accumulate = true}
        : f32, f32, f32, f32
    ```
  }];
  let arguments = (ins I32:$a0, I32:$a1, I32:$a2, I32:$a3, I64:$desc_b,
                       Variadic<F32>:$acc, I64Attr:$n, TypeAttr:$element_type,
                       BoolAttr:$accumulate, UnitAttr:$transpose_b);
  let assemblyFormat = [{
    $a0 `,` $a1 `,` $a2 `,` $a3 `,` $desc_b `,` $acc attr-dict `:` type($acc)
  }];
  let extraClassDeclaration = [{
    SmallVector<Value, 4> getARegisters() {
      return {getA0(), getA1(), getA2(), getA3()};
    }
  }];
}

//===----------------------------------------------------------------------===//
// Fragments: the tiles of the schedules
//===----------------------------------------------------------------------===//

def AttnGPU_FragUndefOp : AttnGPU_Op<"frag_undef", [Pure]> {
  let summary = "A fragment with no value (accumulators a wgmma overwrites)";
  let description = [{
    The registers of an MMA's first k-step, which overwrites them: no
    register is written (a 0.0 would be materialised between the wgmma
    fence and the wgmma, and ptxas would insert a second fence).

    ```mlir
    %s = attn_gpu.frag_undef : !attn_gpu.frag<16x128xf32, acc>
    ```
  }];
  let results = (outs AttnGPU_FragmentType:$result);
  let assemblyFormat = "attr-dict `:` qualified(type($result))";
}

def AttnGPU_FragSplatOp : AttnGPU_Op<"frag_splat", [Pure]> {
  let summary = "A fragment with every element `value`";
  let description = [{
    The online softmax's start: O = 0, m = -inf, l = 0.

    ```mlir
    %o = attn_gpu.frag_splat %zero : f32 -> !attn_gpu.frag<16x128xf32, acc>
    ```
  }];
  let arguments = (ins F32:$value);
  let results = (outs AttnGPU_FragmentType:$result);
  let assemblyFormat = "$value attr-dict `:` type($value) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def AttnGPU_FragFromRegistersOp : AttnGPU_Op<"frag_from_registers", [Pure]> {
  let summary = "A fragment from this thread's registers, in its layout";
  let description = [{
    The way in for tiles built register by register (an mma.sync tile, a
    score_mod applied per element): `registers` are the fragment's
    registers in the order its layout numbers them.

    ```mlir
    %f = attn_gpu.frag_from_registers %a, %b, %c, %d : f32, f32, f32, f32
        -> !attn_gpu.frag<16x8xf32, acc>
    ```
  }];
  let arguments = (ins Variadic<AnyTypeOf<[F32, I32]>>:$registers);
  let results = (outs AttnGPU_FragmentType:$result);
  let assemblyFormat = [{
    $registers attr-dict `:` type($registers) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def AttnGPU_FragRegistersOp : AttnGPU_Op<"frag_registers", [Pure]> {
  let summary = "This thread's registers of a fragment, in its layout";
  let description = [{
    The way out, the inverse of `frag_from_registers`.

    ```mlir
    %r:4 = attn_gpu.frag_registers %f : !attn_gpu.frag<16x8xf32, acc>
        -> f32, f32, f32, f32
    ```
  }];
  let arguments = (ins AttnGPU_FragmentType:$fragment);
  let results = (outs Variadic<AnyTypeOf<[F32, I32]>>:$registers);
  let assemblyFormat = [{
    $fragment attr-dict `:` qualified(type($fragment)) `->` type($registers)
  }];
  let hasVerifier = 1;
}

def AttnGPU_WarpgroupMmaOp : AttnGPU_Op<"warpgroup_mma",
    [MemoryEffects<[MemRead, MemWrite]>, AllTypesMatch<["acc", "result"]>]> {
  let summary = "Warpgroup MMA on fragments: D = A·B + (accumulate ? D : 0)";
  let description = [{
    One `wgmma.mma_async.m64nNk16` k-step for the whole warpgroup, N the
    accumulator fragment's columns, issued asynchronously (read `result`
    after a `wgmma_wait_group` that threads it). B is a shared-memory
    descriptor, K-major unless `transpose_b`. A is either a shared-memory
    descriptor (i64; `element_type` says f16 or bf16; K-major unless
    `transpose_a`) or an A-operand fragment, whose 16 columns from
    16·`a_k_step` on are this k-step's (how P feeds P·V from registers).

    ```mlir
    %s1 = attn_gpu.warpgroup_mma %qd, %kd, %s0
        {element_type = bf16, accumulate = false}
        : i64, !attn_gpu.frag<16x128xf32, acc>
    %o1 = attn_gpu.warpgroup_mma %p, %vd, %o0
        {accumulate = true, transpose_b, a_k_step = 3 : i64}
        : !attn_gpu.frag<16x128xbf16, a>, !attn_gpu.frag<16x64xf32, acc>
    ```
  }];
  let arguments = (ins AnyTypeOf<[I64, AttnGPU_OperandAFragment]>:$a,
                       I64:$desc_b, AttnGPU_AccFragment:$acc,
                       OptionalAttr<TypeAttr>:$element_type,
                       BoolAttr:$accumulate, UnitAttr:$transpose_a,
                       UnitAttr:$transpose_b,
                       DefaultValuedAttr<I64Attr, "0">:$a_k_step);
  let results = (outs AttnGPU_AccFragment:$result);
  let assemblyFormat = [{
    $a `,` $desc_b `,` $acc attr-dict `:` qualified(type($a)) `,`
    qualified(type($acc))
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// f16 or bf16: the A fragment's, or `element_type`.
    ::mlir::Type getInputType();
  }];
}

def AttnGPU_WarpMmaOp : AttnGPU_Op<"warp_mma",
    [Pure, AllTypesMatch<["acc", "result"]>]> {
  let summary = "mma.sync m16n8k16 on fragments: one 8-column tile of acc";
  let description = [{
    `mma.sync.aligned.m16n8k16.row.col.f32` for one warp: columns
    8·`n_tile`.. of the accumulator fragment `acc` += A·B, A the 16
    columns from 16·`a_k_step` on of the A-operand fragment `a`, B a 16x8
    (k x n) tile given as this thread's two packed registers `b0`, `b1`
    in mma's B layout (as ldmatrix loads them). The other columns of
    `acc` come out unchanged: the sm80 kernels' S = Q·Kᵀ and O += P·V,
    one tile at a time in the order their ldmatrix loads come.

    ```mlir
    %s1 = attn_gpu.warp_mma %q, %b0, %b1, %s0 {n_tile = 3 : i64}
        : !attn_gpu.frag<16x16xbf16, a>, !attn_gpu.frag<16x64xf32, acc>
    ```
  }];
  let arguments = (ins AttnGPU_OperandAFragment:$a, I32:$b0, I32:$b1,
                       AttnGPU_AccFragment:$acc, I64Attr:$n_tile,
                       DefaultValuedAttr<I64Attr, "0">:$a_k_step);
  let results = (outs AttnGPU_AccFragment:$result);
  let assemblyFormat = [{
    $a `,` $b0 `,` $b1 `,` $acc attr-dict `:` qualified(type($a)) `,`
    qualified(type($acc))
  }];
  let hasVerifier = 1;
}

def AttnGPU_MaskScoresOp : AttnGPU_Op<"mask_scores",
    [Pure, AllTypesMatch<["scores", "results"]>, AttrSizedOperandSegments]> {
  let summary = "-inf for the scores outside the key range and the band";
  let description = [{
    Masks a warp's score fragments of one key block: fragment i holds rows
    16·i on. Each test compares a compile-time offset with one per-thread
    value, so that a thread's element at column c and row r of its
    fragments, counted from its own first (c = 8·j + e % 2 for register
    4·j + e, r = 16·i + 8·(e / 2)), stays visible when

    * c < `keys_left` (the keys of the block before the sequence end),
    * c >= `keys_before`, if given (the key range's start),
    * c - r <= `row_minus_key` + `window_right`, if given (causal: 0),
    * c - r >= `row_minus_key` - `window_left`, if given,

    and becomes -inf otherwise. `row_minus_key` is the thread's first
    row's aligned key minus its first column's key.

    ```mlir
    %m = attn_gpu.mask_scores %s keys_left %left row_minus_key %rk
        {window_right = 0 : i64} : !attn_gpu.frag<16x128xf32, acc>
    ```
  }];
  let arguments = (ins Variadic<AttnGPU_AccFragment>:$scores, I32:$keys_left,
                       Optional<I32>:$row_minus_key,
                       Optional<I32>:$keys_before,
                       OptionalAttr<I64Attr>:$window_left,
                       OptionalAttr<I64Attr>:$window_right);
  let results = (outs Variadic<AttnGPU_AccFragment>:$results);
  let assemblyFormat = [{
    $scores `keys_left` $keys_left (`row_minus_key` $row_minus_key^)?
    (`keys_before` $keys_before^)? attr-dict `:` qualified(type($scores))
  }];
  let hasVerifier = 1;
}

def AttnGPU_MaskLimitOp : AttnGPU_Op<"mask_limit",
    [Pure, AllTypesMatch<["scores", "result"]>]> {
  let summary = "-inf for the scores past one linear limit";
  let description = [{
    One edge of a mask as the backward kernels test it: a thread's element
    at column c and row r of the fragment, counted from its own first
    (c = 8·j + e % 2, r = 8·(e / 2) for register 4·j + e), stays when
    `col`·c + `row`·r <= `limit` and becomes -inf otherwise; each test is
    one compile-time constant against the per-thread `limit`. With Sᵀ
    (rows are keys, columns queries) a causal edge is col = -1, row = 1,
    the keys past Nk col = 0, row = 1.

    ```mlir
    %m = attn_gpu.mask_limit %s, %lim {col = -1 : i64, row = 1 : i64}
        : !attn_gpu.frag<16x64xf32, acc>
    ```
  }];
  let arguments = (ins AttnGPU_AccFragment:$scores, I32:$limit,
                       I64Attr:$col, I64Attr:$row);
  let results = (outs AttnGPU_AccFragment:$result);
  let assemblyFormat = [{
    $scores `,` $limit attr-dict `:` qualified(type($scores))
  }];
}

def AttnGPU_OnlineSoftmaxOp : AttnGPU_Op<"online_softmax",
    [NoMemoryEffect, AllTypesMatch<["scores", "p"]>]> {
  let summary = "One key block's online-softmax step, in the exp2 domain";
  let description = [{
    For the masked scores `scores` of one key block and the running row
    max `m` (of c·s) and thread-partial row sum `l`:
    m' = max(m, c · rowmax(scores)) (across the row's four threads),
    alpha = 2^(m - m'), p = 2^(c · s - m'), l' = alpha · l + rowsum(p)
    (this thread's columns). A row that has seen no key keeps m' = -inf
    and shifts by 0, so p and alpha are 0, never NaN. `c` is
    scale·log2(e), or log2(e) where a score_mod took the scale. Of every 8
    column tiles of 8 keys, the first `exp2_fma_tiles` take 2^x on the FMA
    pipe (`attn_gpu.exp2 {fma}`), the rest on the MUFU.

    ```mlir
    %p, %m1, %l1, %alpha = attn_gpu.online_softmax %s, %m0, %l0, %c
        : !attn_gpu.frag<16x128xf32, acc>
    ```
  }];
  let arguments = (ins AttnGPU_AccFragment:$scores, AttnGPU_RowsFragment:$m,
                       AttnGPU_RowsFragment:$l, F32:$c,
                       DefaultValuedAttr<I64Attr, "0">:$exp2_fma_tiles);
  let results = (outs AttnGPU_AccFragment:$p, AttnGPU_RowsFragment:$new_m,
                      AttnGPU_RowsFragment:$new_l, AttnGPU_RowsFragment:$alpha);
  let assemblyFormat = [{
    $scores `,` $m `,` $l `,` $c attr-dict `:` qualified(type($scores))
  }];
  let hasVerifier = 1;
}

def AttnGPU_ScaleRowsOp : AttnGPU_Op<"scale_rows",
    [Pure, AllTypesMatch<["fragment", "result"]>]> {
  let summary = "Each row of an accumulator fragment times its row's factor";
  let description = [{
    The online softmax's rescale of O by alpha.

    ```mlir
    %o1 = attn_gpu.scale_rows %o0, %alpha : !attn_gpu.frag<16x64xf32, acc>
    ```
  }];
  let arguments = (ins AttnGPU_AccFragment:$fragment,
                       AttnGPU_RowsFragment:$factors);
  let results = (outs AttnGPU_AccFragment:$result);
  let assemblyFormat = [{
    $fragment `,` $factors attr-dict `:` qualified(type($fragment))
  }];
}

def AttnGPU_ToOperandOp : AttnGPU_Op<"to_operand", [Pure]> {
  let summary = "An f32 accumulator fragment rounded into an A operand";
  let description = [{
    Rounds each element to the result's f16 or bf16 and packs the pairs
    in the A-operand layout: the probabilities P become P·V's A from
    registers, at half the registers of the f32 fragment.

    ```mlir
    %a = attn_gpu.to_operand %p : !attn_gpu.frag<16x128xf32, acc>
        -> !attn_gpu.frag<16x128xbf16, a>
    ```
  }];
  let arguments = (ins AttnGPU_AccFragment:$fragment);
  let results = (outs AttnGPU_OperandAFragment:$result);
  let assemblyFormat = [{
    $fragment attr-dict `:` qualified(type($fragment)) `->`
    qualified(type($result))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Online-softmax steps on registers
//===----------------------------------------------------------------------===//

def AttnGPU_Exp2Op : AttnGPU_Op<"exp2", [Pure, SameOperandsAndResultType]> {
  let summary = "2^x of the softmax, on the MUFU or on the FMA pipe";
  let description = [{
    `ex2.approx.ftz.f32` (the default), or with `fma` a degree-3 minimax
    polynomial on the FMA pipe for x <= 0 (relative error 8.8e-5, below
    bf16's rounding of P; FlashAttention-4's exp2 emulation), which kernels
    take for part of a tile when the MUFU is the bottleneck. -inf gives 0
    either way.

    ```mlir
    %p = attn_gpu.exp2 %x : f32
    %q = attn_gpu.exp2 %y {fma} : f32
    ```
  }];
  let arguments = (ins F32:$x, UnitAttr:$fma);
  let results = (outs F32:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
}

def AttnGPU_Log2Op : AttnGPU_Op<"log2", [Pure, SameOperandsAndResultType]> {
  let summary = "lg2.approx.ftz.f32 (the log-sum-exp of the epilogue)";
  let description = [{
    ```mlir
    %l = attn_gpu.log2 %x : f32
    ```
  }];
  let arguments = (ins F32:$x);
  let results = (outs F32:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
}

def AttnGPU_TanhOp : AttnGPU_Op<"tanh", [Pure, SameOperandsAndResultType]> {
  let summary = "tanh.approx.f32 (softcap and score_mod's math.tanh)";
  let description = [{
    ```mlir
    %t = attn_gpu.tanh %x : f32
    ```
  }];
  let arguments = (ins F32:$x);
  let results = (outs F32:$result);
  let assemblyFormat = "$x attr-dict `:` type($x)";
}

//===----------------------------------------------------------------------===//
// Scheduling aids
//===----------------------------------------------------------------------===//

def AttnGPU_OpaqueOp : AttnGPU_Op<"opaque",
    [MemoryEffects<[MemRead, MemWrite]>, AllTypesMatch<["values", "results"]>]> {
  let summary = "The same values, hidden from LLVM's optimisers";
  let description = [{
    Opaque register moves that LLVM can neither hoist, re-associate nor see
    through. The schedules use them on per-iteration base pointers and
    indices, so that the constant offsets of many unrolled fragment
    accesses stay immediates instead of each becoming a register hoisted
    out of the loop and live across it. One op moves several values (one
    instruction each).

    ```mlir
    %p, %i = attn_gpu.opaque %base, %index : !llvm.ptr<3>, i32
    ```
  }];
  let arguments = (ins Variadic<AnyTypeOf<[I32, I64, LLVM_AnyPointer]>>:$values);
  let results = (outs Variadic<AnyTypeOf<[I32, I64, LLVM_AnyPointer]>>:$results);
  let assemblyFormat = "$values attr-dict `:` type($values)";
  let hasVerifier = 1;
}

#endif // ATTN_DIALECT_ATTNGPU_IR_ATTNGPUOPS_TD
