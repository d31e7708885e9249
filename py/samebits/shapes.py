"""Matrix-product shapes of the reference models, shared by hashes and benchmarks.

Each entry is (name, m, n, k, count, b_transposed): the product C(m x n) =
A(m x k) B(k x n), how many times one forward pass runs it, and whether B is
read as the transpose of a stored matrix (the keys of attention scores).
"""
from __future__ import annotations

from typing import NamedTuple


class Product(NamedTuple):
    name: str
    m: int
    n: int
    k: int
    count: int
    b_transposed: bool = False


def transformer(rows: int, width: int, ffn: int, heads: int, layers: int, seq: int,
                batch: int) -> list[Product]:
    head = width // heads
    attention = batch * heads * layers
    return [
        Product("qkvo", rows, width, width, 4 * layers),
        Product("ffn_up", rows, ffn, width, layers),
        Product("ffn_down", rows, width, ffn, layers),
        Product("scores", seq, seq, head, attention, True),
        Product("context", seq, head, seq, attention),
    ]


MODELS: dict[str, list[Product]] = {
    # batch 32 x 128 tokens
    "bert-base-32x128": transformer(4096, 768, 3072, 12, 12, 128, 32),
    "minilm-l6-32x128": transformer(4096, 384, 1536, 12, 6, 128, 32),
    # encoder over 1500 frames, batch 1
    "whisper-small-enc-1500": transformer(1500, 768, 3072, 12, 12, 1500, 1),
}
