"""attn: an MLIR compiler for exact attention (FlashAttention) on NVIDIA GPUs.

`attn.runtime` launches compiled kernel directories on PyTorch tensors
through libattn_runtime.so (no MLIR needed on the GPU host).
"""
