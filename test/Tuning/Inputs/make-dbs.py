"""Writes <out>/<prefix><i>.json, i < count: one-entry tuning databases
with distinct keys (the sequence bucket varies), for the round-trip and
concurrent-writer tests."""
import json
import sys

out, prefix, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
for i in range(count):
    entry = {
        "key": {"gpu": "Test GPU", "sms": 8, "chip": "sm_90a",
                "compiler": "test-compiler", "family": "sm80-mma",
                "direction": "fwd", "dtype": "bf16", "head_dim": 64,
                "value_head_dim": 64, "heads_ratio": 1,
                "mask": "causal" if prefix == "b" else "none",
                "seq_q_bucket": 2 ** (i % 20), "seq_kv_bucket": 1 + i},
        "winner": {"block_m": 128, "block_n": 64, "warp_rows": 32,
                   "stages": 2},
        "time_ms": 0.5 + i,
        "tuned_shape": {"batch": 1, "heads_q": 2, "heads_kv": 2,
                        "seq_q": 2 ** (i % 20), "seq_kv": 1 + i},
        "tuned_at": "2026-01-01T00:00:00Z",
        "candidates": [
            {"block_m": 128, "block_n": 64, "warp_rows": 32, "stages": 2,
             "status": "ok", "time_ms": 0.5 + i, "rel_err": 0.001,
             "heuristic": True}],
    }
    with open(f"{out}/{prefix}{i}.json", "w") as f:
        json.dump({"format": "attn-tuning-db", "version": 1,
                   "entries": [entry]}, f)
