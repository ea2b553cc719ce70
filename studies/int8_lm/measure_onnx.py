"""Issue #46, item 4, second backend: does ONNX Runtime's dynamic int8 keep SmolLM2's figures close enough to
styleval's float32 pass to be used? Same rule (studies/log.md, "int8 rule"), same texts and figures as measure.py,
whose text selection, agreement figures and rule check are imported here.

SmolLM2-135M (the float32 folder styleval converts from the GGUF) is exported once with torch.onnx from the native
Llama module that styleval scores with (lm/native.py): input ``input_ids`` of a right-padded batch, output
``logits``. With right padding the causal mask alone keeps padding out of every real position (as in native.py),
so the graph needs no attention-mask input; the runner checks that batches are right-padded. Variants, each made by
``onnxruntime.quantization.quantize_dynamic`` from that export (MatMuls with a constant weight only; the embedding
Gather and the vocabulary projection stay float32, as in the torch int8 scheme):

* ``onnx-float32``: the export itself (checks the export against the torch pass);
* ``int8-tensor``: int8 weights per tensor; ``int8-channel``: per output channel;
* ``int8-channel-keep-down``: per channel, with the 30 MLP down-projections left float32 (their inputs, the
  SiLU-gated MLP activations, carry the largest outliers).

All variants run through styleval's own ``token_logprobs`` (same packing, prefix and end-token conventions), the
ONNX model standing in for the torch module; the passes alternate in one process and the speed-up is the median
time of styleval's float32 torch pass over the variant's median.

Run: STYLEVAL_THREADS=1 .venv/bin/python studies/int8_lm/measure_onnx.py --n 150 --repeat 3 --work /tmp/int8-onnx
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any


sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import agreement, rule, select_texts  # noqa: E402

VARIANTS = ("onnx-float32", "int8-tensor", "int8-channel", "int8-channel-keep-down")
OPSET = 17


def export(model: Any, target: Path) -> None:
    """``model`` (a native Llama) as ONNX at ``target``: ``input_ids`` (batch, tokens) -> ``logits``."""
    import torch

    class Logits(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
            return self.inner(input_ids).logits

    sample = torch.tensor([[1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 0, 0]])
    target.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(Logits(model.eval()), (sample,), str(target), input_names=["input_ids"],
                          output_names=["logits"], opset_version=OPSET, dynamo=False,
                          dynamic_axes={"input_ids": {0: "batch", 1: "tokens"},
                                        "logits": {0: "batch", 1: "tokens"}})


def weight_matmuls(path: Path) -> dict[str, list[str]]:
    """Names of the MatMul nodes whose B input is an initializer, grouped: ``head`` (the vocabulary projection),
    ``down`` (the MLP down-projections) and ``other``."""
    import onnx

    graph = onnx.load(str(path), load_external_data=False).graph
    inits = {i.name for i in graph.initializer}
    shapes = {i.name: tuple(i.dims) for i in graph.initializer}
    groups: dict[str, list[str]] = {"head": [], "down": [], "other": []}
    for node in graph.node:
        if node.op_type != "MatMul" or node.input[1] not in inits:
            continue
        shape = shapes[node.input[1]]
        if "lm_head" in node.name or shape[-1] > 10_000:  # (hidden, vocabulary)
            groups["head"].append(node.name)
        elif "down_proj" in node.name:
            groups["down"].append(node.name)
        else:
            groups["other"].append(node.name)
    return groups


def quantize(src: Path, variant: str, target: Path) -> dict[str, int]:
    """The int8 ``variant`` of ``src`` at ``target``; returns how many weight MatMuls were quantized / kept."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    groups = weight_matmuls(src)
    keep = groups["head"] + (groups["down"] if variant.endswith("keep-down") else [])
    quantize_dynamic(src, target, weight_type=QuantType.QInt8, per_channel=variant != "int8-tensor",
                     op_types_to_quantize=["MatMul"], nodes_to_exclude=keep,
                     extra_options={"MatMulConstBOnly": True})
    return {"quantized": sum(map(len, groups.values())) - len(keep), "kept_float32": len(keep)}


@dataclasses.dataclass
class _Out:
    logits: Any


class OrtCausalLM:
    """An ONNX Runtime session standing in for the torch module inside ``styleval.lm.causal``: called with
    right-padded ``input_ids`` it returns the logits (no output-embedding module, so causal.py takes its
    full-logits path)."""

    def __init__(self, path: Path) -> None:
        import onnxruntime as ort
        import torch

        from styleval.models.pool import thread_count

        options = ort.SessionOptions()
        options.intra_op_num_threads = thread_count()  # what styleval's ONNX encoder uses
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self._device = torch.zeros(1)

    def parameters(self) -> Any:
        yield self._device  # CausalLM.device reads the first parameter's device

    def get_output_embeddings(self) -> None:
        return None

    def __call__(self, input_ids: Any, attention_mask: Any = None) -> _Out:
        import torch

        if attention_mask is not None and bool((attention_mask[:, 1:] > attention_mask[:, :-1]).any()):
            raise ValueError("the ONNX export takes right-padded batches only")
        logits = self.session.run(None, {"input_ids": input_ids.numpy()})[0]
        return _Out(logits=torch.from_numpy(logits))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=150, help="outputs per system (the rule: 150 + 150)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--work", type=Path, required=True, help="folder for the export and its int8 copies")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    args = parser.parse_args()
    variants = [v for v in args.variants.split(",") if v]
    unknown = set(variants) - set(VARIANTS)
    if unknown:
        parser.error(f"unknown variant(s) {sorted(unknown)}; known: {', '.join(VARIANTS)}")

    from styleval.lm.causal import token_logprobs
    from styleval.lm.loading import load_causal_lm

    texts = select_texts(args.n)
    lm = load_causal_lm()
    assert lm.backend == "native", lm.backend
    fp32 = args.work / "onnx-float32.onnx"
    made: dict[str, Any] = {}
    if not fp32.is_file():
        t0 = time.perf_counter()
        export(lm.model, fp32)
        made["export_seconds"] = round(time.perf_counter() - t0, 1)
    paths = {"onnx-float32": fp32}
    for v in variants:
        if v == "onnx-float32":
            continue
        paths[v] = args.work / f"{v}.onnx"
        if not paths[v].is_file():
            made[v] = quantize(fp32, v, paths[v])
    lms = {"torch-float32": lm, **{v: dataclasses.replace(lm, model=OrtCausalLM(paths[v])) for v in variants}}
    times: dict[str, list[float]] = {k: [] for k in lms}
    res = {}
    for _ in range(args.repeat):
        for name, model in lms.items():
            t0 = time.perf_counter()
            res[name] = token_logprobs(model, texts, with_end=True)
            times[name].append(time.perf_counter() - t0)
            print(name, round(times[name][-1], 2), file=sys.stderr, flush=True)
    base = statistics.median(times["torch-float32"])
    out: dict[str, Any] = {"texts": len(texts), "tokens": int(sum(len(lp) for lp in res["torch-float32"].logprobs)),
                           "repeat": args.repeat, "seconds_torch_float32": round(base, 2),
                           "times": {k: [round(t, 2) for t in v] for k, v in times.items()}, "made": made,
                           "file_mib": {v: round(p.stat().st_size / 2**20, 1) for v, p in paths.items()}}
    for v in variants:
        fig = {"seconds": round(statistics.median(times[v]), 2),
               "speedup": round(base / statistics.median(times[v]), 3), **agreement(res["torch-float32"], res[v])}
        checks = rule(fig)
        out[v] = {**fig, "rule": checks, "passes": all(checks.values())}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
