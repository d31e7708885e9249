"""The models hash suite's pinned digests and its network groups, read by the
graph tests and by every host's tests (Python, Pyodide, Node, browsers):
written once here."""

# models suite v1, exact mode: the same on every path, thread count and runtime
PINNED = {
    "resnet50": "f87766cf617a0a6a0b6c4caed5de61c3ec146082b80c68e1efe81e10fa05d1f0",
    "mobilenet_v3_large": "656b4efdf02c7779bd3a0c24a9bfa035add962567f72426b3811bd1c2fbedbf4",
    "bert_base": "0debcc97baa3a828e3d19cddfddfc2b9e58bb5807dcf7b65dc2a2e3de4601c3e",
    "minilm_l6": "70a08cf0ff48a0ed7e253f510ba917c464d294ebb201ff2229201521dbefd060",
    "whisper_small_encoder": "58c26e0b25da1b19c2f358d9a971b225f6321344870df0240684dc6715dab975",
}
# the networks cheap enough to run on every path in the default suite; the
# two large ones run on every path in the slow suite (python -m pytest -m slow)
SMALL = ("resnet50", "mobilenet_v3_large", "minilm_l6")
LARGE = ("bert_base", "whisper_small_encoder")
