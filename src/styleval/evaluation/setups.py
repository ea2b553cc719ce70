"""The field's published evaluation setups by name (``styleval evaluate --setup NAME``).

A setup is a protocol another paper reported its table with: the models (hub ids pinned to a commit), what each
model's output is turned into (a decision or a probability), and the formula of its overall score. styleval runs
each as metric specs over the one model path (:mod:`styleval.models.spec`), so the figures carry the same signatures,
intervals and paired tests as any other score. Where a paper's model is not a transformers checkpoint on the hub,
the setup names the stand-in it uses and says so in ``differences`` (printed with the results and in
``docs/field-models.md``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import InputError, ResourceUnavailableError, UnknownNameError
from ..metrics.spec import render_token


@dataclass(frozen=True)
class SetupModel:
    """One hub model of a setup: its role (``style``, ``similarity``, ``fluency``), hub id and pinned commit."""

    role: str
    hub_id: str
    revision: str
    note: str

    @property
    def pinned(self) -> str:
        """The id as styleval's model parameters take it: ``org/name@commit``."""
        return f"{self.hub_id}@{self.revision}"


@dataclass(frozen=True)
class FieldSetup:
    """A published protocol: where it comes from, its models, the metric specs that compute it and its formula."""

    name: str
    title: str
    paper: str
    code: str  # repository and commit of the evaluation code the formula was read from
    formula: str
    models: tuple[SetupModel, ...]
    # the metrics as (name, parameters); a parameter value "<role>" stands for that role's model, and a value
    # that is itself a (name, parameters) pair is a component metric (of the overall score, which comes last)
    metrics: tuple[tuple[str, dict], ...]
    overall: str  # the column label of the overall score in the results
    differences: tuple[str, ...] = field(default=())
    needs_references: bool = False

    def model(self, role: str) -> SetupModel:
        for m in self.models:
            if m.role == role:
                return m
        raise KeyError(role)


MetricPlan = tuple[str, dict]


def _j_metrics(against: str) -> tuple[MetricPlan, ...]:
    """STA (a decision), SIM (sentence cosine against ``against``), FL (CoLA decision at 0.5) and J of the three."""
    style: MetricPlan = ("style_accuracy", {"model": "<style>"})
    similarity: MetricPlan = ("sentence_cosine", {"model": "<similarity>", "against": against})
    fluency: MetricPlan = ("acceptability", {"model": "<fluency>", "acceptable_label": "LABEL_0"})
    joint: MetricPlan = ("j", {"style": style, "similarity": similarity, "fluency": fluency, "fluency_threshold": 0.5})
    return style, similarity, fluency, joint


def _hm_metrics() -> tuple[MetricPlan, ...]:
    style: MetricPlan = ("style_accuracy", {"model": "<style>"})
    bleu: MetricPlan = ("bleu", {"against": "references"})
    return style, bleu, ("hm", {"style": style, "content": bleu})


_TOXICITY = SetupModel("style", "s-nlp/roberta_toxicity_classifier", "71af465f4ed1a47cd8639252191463171834ad5a",
                       "RoBERTa-base toxicity classifier (Jigsaw 2018-2020), labels neutral / toxic")
_COLA = SetupModel("fluency", "cointegrated/roberta-large-cola-krishna2020", "efffc0dbebedfdb84747a32b30ec0c3df15812b1",
                   "Krishna et al.'s RoBERTa-large CoLA classifier converted to transformers; LABEL_0 = acceptable")
_LABSE = SetupModel("similarity", "sentence-transformers/LaBSE", "5245bbd97a2c2804b16081d0a2e91aebb75eac7a",
                    "LaBSE sentence encoder (the similarity model of the TextDetox 2024 evaluation)")
_FORMALITY = SetupModel("style", "s-nlp/roberta-base-formality-ranker", "507700d5f40abdcee951bd2f859d48aed67367ba",
                        "RoBERTa-base formality classifier (GYAFC + Pavlick & Tetreault 2016), labels informal/formal")

_WIETING = ("SIM: the papers use Wieting et al. (2019)'s subword-averaging paraphrase model (sim.pt with a "
            "SentencePiece vocabulary), which is not a transformers checkpoint; styleval uses LaBSE cosine instead, so "
            "SIM and J are not numerically comparable with the papers' tables, only STA and FL are")

SETUPS: dict[str, FieldSetup] = {
    s.name: s for s in (
        FieldSetup(
            name="paradetox",
            title="ParaDetox J (Logacheva et al. 2022)",
            paper="Logacheva et al. 2022, ParaDetox: Detoxification with Parallel Data (ACL), Sec. 5.1",
            code="s-nlp/paradetox@1ed71122a154f4b5fb7da6096f9d80680a9fe273 evaluation_detox/metric.py; "
                 "s-nlp/detox@7755e3aa52d3fb352ba7b891e532e2e71284d8e6 emnlp2021/metric/metric.py",
            formula="J = mean over outputs of STA·SIM·FL; STA = 1 when the toxicity classifier's argmax is 'neutral', "
                    "SIM = cosine of the output's and the source's sentence embeddings, FL = 1 when "
                    "P(acceptable) > 0.5 under the CoLA classifier",
            models=(_TOXICITY, _LABSE, _COLA),
            metrics=_j_metrics("source"),
            overall="j",
            differences=(_WIETING,
                         "FL: the paper detokenises outputs with six string replacements before the CoLA classifier; "
                         "styleval gives the classifier the text as written",
                         "FL: styleval passes at P(acceptable) >= 0.5, the paper at > 0.5 (equal only on a tie)"),
        ),
        FieldSetup(
            name="krishna2020",
            title="J(A,S,F) (Krishna, Wieting & Iyyer 2020), formality",
            paper="Krishna et al. 2020, Reformulating Unsupervised Style Transfer as Paraphrase Generation (EMNLP), "
                  "Sec. 4",
            code="martiansideofthemoon/style-transfer-paraphrase@51d823ef2bf44dd1055b9052ac8e8659b55eed12 "
                 "style_paraphrase/evaluation/scripts/evaluate_formality.sh and micro_eval.py",
            formula="J(A,S,F) = mean over outputs of A·S·F; A = 1 when the style classifier's argmax is the target "
                    "style, S = the highest SIM between the output and the references, F = 1 when the CoLA "
                    "classifier's argmax is 'acceptable'",
            models=(_FORMALITY, _LABSE, _COLA),
            metrics=_j_metrics("references"),
            overall="j",
            differences=(_WIETING,
                         "A: the paper's accuracy classifier is a fairseq RoBERTa-large trained on GYAFC, not on the "
                         "hub; styleval uses s-nlp's RoBERTa-base formality classifier (GYAFC + PT16), so A is not "
                         "numerically comparable either",
                         "F is Krishna et al.'s own CoLA classifier (converted), so F is comparable"),
            needs_references=True,
        ),
        FieldSetup(
            name="gyafc",
            title="GYAFC formality: accuracy, BLEU against the four references, their harmonic mean",
            paper="Rao & Tetreault 2018 (GYAFC; BLEU against four references); Luo et al. 2019 and Lai et al. 2021 "
                  "(the harmonic mean of accuracy and BLEU as the overall score)",
            code="sacrebleu corpus BLEU (13a tokenisation, exponential smoothing off at corpus level) on the four "
                 "GYAFC references",
            formula="HM = 2·ACC·(BLEU/100) / (ACC + BLEU/100); ACC = share of outputs whose formality classifier "
                    "argmax is the target style, BLEU = corpus BLEU against all references",
            models=(_FORMALITY,),
            metrics=_hm_metrics(),
            overall="hm",
            differences=("ACC: Luo et al. and Lai et al. used their own classifiers (a TextCNN, a BERT); styleval "
                         "uses s-nlp's RoBERTa-base formality classifier, so ACC and HM follow that model",),
            needs_references=True,
        ),
    )
}


def get_setup(name: str) -> FieldSetup:
    key = name.strip().lower()
    if key not in SETUPS:
        raise UnknownNameError("setup", name, sorted(SETUPS))
    return SETUPS[key]


def parse_model_dirs(items: list[str] | tuple[str, ...]) -> dict[str, str]:
    """``--model-dir ID=DIR`` items as a map from hub id (without a revision) to a local folder."""
    out: dict[str, str] = {}
    for item in items:
        hub_id, sep, folder = item.partition("=")
        hub_id, folder = hub_id.strip().split("@")[0], folder.strip()
        if not sep or not hub_id or not folder:
            raise InputError(f"--model-dir {item!r}: expected HUB_ID=DIR, e.g. s-nlp/roberta_toxicity_classifier=./tox")
        if hub_id in out:
            raise InputError(f"--model-dir names {hub_id!r} twice")
        out[hub_id] = folder
    return out


def resolved_models(setup: FieldSetup, model_dirs: dict[str, str], *, hub_allowed: bool) -> dict[str, str]:
    """The model parameter of each role: the local folder the user gave for its hub id, else the pinned hub id.

    Without hub access every model must have a local folder; otherwise one error names the models to fetch."""
    unknown = sorted(set(model_dirs) - {m.hub_id for m in setup.models})
    if unknown:
        raise InputError(f"--model-dir: setup {setup.name!r} uses no model {', '.join(map(repr, unknown))}; its "
                         f"models are {', '.join(m.hub_id for m in setup.models)}")
    missing = [m for m in setup.models if m.hub_id not in model_dirs]
    if missing and not hub_allowed:
        listed = ", ".join(m.pinned for m in missing)
        flags = " ".join(f"--model-dir {m.hub_id}=DIR" for m in missing)
        raise ResourceUnavailableError(f"setup {setup.name!r} needs {listed} from the model hub: set "
                                       "STYLEVAL_ALLOW_HUB=1 to download them, or fetch them elsewhere and give "
                                       f"{flags}")
    return {m.role: model_dirs.get(m.hub_id, m.pinned) for m in setup.models}


def _render(plan: MetricPlan, models: dict[str, str]) -> str:
    name, params = plan
    parts = []
    for key, value in params.items():
        if isinstance(value, tuple):
            value = _render(value, models)
        elif isinstance(value, str) and value.startswith("<") and value.endswith(">"):
            value = models[value[1:-1]]
        parts.append(f"{key}={render_token(value)}")
    return f"{name}:{';'.join(parts)}" if parts else name


def setup_specs(setup: FieldSetup, models: dict[str, str]) -> list[str]:
    """The setup's metric specs with each role's model filled in (the overall score last)."""
    return [_render(plan, models) for plan in setup.metrics]
