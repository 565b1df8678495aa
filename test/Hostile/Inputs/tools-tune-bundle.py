"""Writes DIR/bundle.json: one candidate (DIR/c) and one launch shape
BATCHxSEQxSEQ, for attn-tune's bundle checks.
usage: tools-tune-bundle.py DIR BATCH SEQ"""
import json
import sys

d, batch, seq = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
bundle = {
    "format": "attn-tune-bundle", "version": 2, "compiler": "test-compiler",
    "chip": "sm_90a", "family": "naive-test",
    "shapes": [{"batch": batch, "seq_q": seq, "seq_kv": seq}],
    "candidates": [{"dir": "c", "block_m": 64, "block_n": 128,
                    "warp_rows": 32, "stages": 2, "heuristic": True}],
}
with open(d + "/bundle.json", "w") as f:
    json.dump(bundle, f)
