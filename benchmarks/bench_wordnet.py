"""Benchmark (issue #46): starting METEOR's WordNet reader, styleval's reading of the index files against NLTK's.

``StylevalWordNetReader`` reads the four ``index.POS`` files with Python's own line reader; NLTK's
``_load_lemma_pos_offset_map`` reads them through its seekable stream reader. Both build the same map
(``tests/test_wordnet.py::test_fast_index_parse_equals_nltks``). Each reader is built ``--repeat`` times, alternating,
in one process; prints the medians of wall-clock and process CPU seconds (CPU time moves less with the load of shared
cores).

Run: .venv/bin/python benchmarks/bench_wordnet.py --repeat 5
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    from styleval.resources import wordnet

    info = wordnet.ensure_wordnet()
    ours = wordnet._reader_class()
    nltk_parse = {"_load_lemma_pos_offset_map": WordNetCorpusReader._load_lemma_pos_offset_map}
    nltks = type("NltkIndexParse", (ours,), nltk_parse)
    found: dict[str, list[tuple[float, float]]] = {"nltk": [], "styleval": []}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # no Open Multilingual WordNet here
        for _ in range(args.repeat):
            for name, cls in (("nltk", nltks), ("styleval", ours)):
                wall, cpu = time.perf_counter(), time.process_time()
                cls(str(info.path), None)
                found[name].append((time.perf_counter() - wall, time.process_time() - cpu))
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in found.items()}
    for name, (wall, cpu) in med.items():
        print(f"{name:<9} reader start-up: {wall:.2f} s wall, {cpu:.2f} CPU-s (median of {args.repeat})")
    print(f"nltk / styleval: {med['nltk'][0] / med['styleval'][0]:.2f}x wall, "
          f"{med['nltk'][1] / med['styleval'][1]:.2f}x CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
