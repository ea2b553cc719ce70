"""The built-in protocols, each after a published human evaluation of style transfer.

Guideline texts and example sentences are written for styleval; the scales follow the cited papers.
"""
from __future__ import annotations

from styleval.errors import UnknownNameError

from .base import Question, Example, Protocol

_FORMALITY = frozenset({"formal", "informal"})
_SENTIMENT = frozenset({"negative", "positive"})

_DA_STYLE = Question("style", "scale", "How well does the text match the target style?", 0, 100, widget="slider",
                   anchors=("not the target style at all", "completely in the target style"))
_DA_CONTENT = Question("content", "scale", "How much of the original meaning does the text keep?", 0, 100,
                     widget="slider", anchors=("none of the meaning is kept", "all of the meaning is kept"))
_DA_FLUENCY = Question("fluency", "scale", "How fluent and grammatical is the text?", 0, 100, widget="slider",
                     anchors=("incomprehensible", "perfectly fluent and grammatical"))

DIRECT_ASSESSMENT = Protocol(
    name="direct-assessment",
    title="Direct assessment (0-100 sliders)",
    citation="Lai et al. (2022), human evaluation of formality transfer with continuous scales",
    layout="single",
    aspects=(_DA_STYLE, _DA_CONTENT, _DA_FLUENCY),
    instructions=(
        "You will see an original sentence and a rewritten version that should have the target style.",
        "Move each slider to say how far you agree with the question: 0 is not at all, 100 is completely.",
        "A slider counts as answered once you move it; to answer exactly the middle, tick 'set' next to it.",
        "Judge each question on its own: a rewrite can be perfectly fluent and still lose the meaning.",
        "Some sentences are shown more than once, and some are deliberately damaged; just answer honestly.",
    ),
    examples=(
        Example("hey can u send me the file asap", ("Could you please send me the file as soon as possible?",),
                "Style about 95 (clearly formal), content about 95 (same request), fluency about 95.", _FORMALITY),
        Example("i dunno where the meeting is lol", ("I do not know the meeting.",),
                "Style about 80, content about 40 (the question of where is lost), fluency about 55.", _FORMALITY),
        Example("that movie was kinda boring tbh", ("Movie the boring was honestly rather.",),
                "Style about 50, content about 45, fluency about 5 (the word order is broken).", _FORMALITY),
        Example("the soup was cold and the waiter never came back .",
                ("the soup was hot and the waiter checked on us often .",),
                "Target positive: style about 95 (clearly positive), content about 85 (same soup and waiter, the "
                "opinion flipped as asked), fluency about 95.", _SENTIMENT),
        Example("the rooms were clean and the staff lovely .", ("the rooms were clean .",),
                "Target negative: style about 30 (no longer positive, but not negative either), content about 50 "
                "(the staff are lost), fluency about 95.", _SENTIMENT),
        Example("worst burger i have had in years .", ("burger years best the in had .",),
                "Target positive: style about 50, content about 40, fluency about 5 (the word order is broken).",
                _SENTIMENT),
    ),
    controls={"copy": {"content": (70, 100)}, "unrelated": {"content": (0, 30)}},
    degrade="scramble",
    qc_aspects=("content", "fluency"),
)

RAO_TETREAULT = Protocol(
    name="likert-ranking",
    title="Likert scales and overall ranking",
    citation="Rao & Tetreault (2018), GYAFC human evaluation",
    layout="multi",
    aspects=(
        Question("formality", "scale", "How formal is the text?", -3, 3, labels=(
            (-3, "very informal"), (-2, "informal"), (-1, "somewhat informal"), (0, "neutral"),
            (1, "somewhat formal"), (2, "formal"), (3, "very formal"))),
        Question("fluency", "scale", "How fluent is the text?", 1, 5, labels=(
            (1, "incomprehensible"), (2, "very awkward"), (3, "understandable with errors"), (4, "minor errors"),
            (5, "perfect"))),
        Question("meaning", "scale", "How close is the meaning to the original?", 1, 6, labels=(
            (1, "completely dissimilar"), (2, "not equivalent, shares some details"),
            (3, "roughly equivalent"), (4, "mostly equivalent"), (5, "equivalent, minor differences"),
            (6, "completely equivalent"))),
        Question("overall", "rank", "Rank the rewrites overall (1 = best; equal ranks allowed)", widget="select"),
    ),
    instructions=(
        "You will see one informal (or formal) sentence and several rewrites of it, in random order.",
        "Rate every rewrite for formality (-3 very informal to 3 very formal), fluency (1 to 5) and meaning "
        "preservation (1 to 6), then rank all rewrites from best (1) to worst, taking everything into account.",
        "Two rewrites that are equally good may share a rank.",
    ),
    examples=(
        Example("omg that party was sooo much fun!!",
                ("That party was very enjoyable.", "omg the party was fun", "The party were much funs."),
                "A: formality 2, fluency 5, meaning 5, rank 1. B: formality -2, fluency 4, meaning 6, rank 2. "
                "C: formality 1, fluency 2, meaning 4, rank 3.", _FORMALITY),
    ),
    controls={"unrelated": {"meaning": (1, 2)}},
    degrade="scramble",
    qc_aspects=("fluency", "meaning"),
)

MIR_RELATIVE = Protocol(
    name="relative",
    title="Relative judgments: naturalness, style difference, masked content",
    citation="Mir et al. (2019), Evaluating Style Transfer for Text",
    layout="pair",
    aspects=(
        Question("naturalness", "choice", "Which text is more natural, i.e. more likely written by a person?"),
        Question("style_difference", "scale", "How different is the style of this text from the original?", 1, 5,
               labels=((1, "same style"), (2, "slightly different"), (3, "different"), (4, "very different"),
                       (5, "completely different"))),
        Question("content", "scale", "Style words are hidden. How similar is the remaining content to the original?",
               1, 5, labels=((1, "unrelated"), (2, "a little similar"), (3, "somewhat similar"),
                             (4, "very similar"), (5, "identical")), masked=True),
    ),
    instructions=(
        "You will see an original sentence and two rewrites, A and B, from different systems in random order.",
        "First choose which of A and B reads more naturally, as if a person had written it (or say they are equal).",
        "Then say, for each rewrite, how much its style differs from the original (1 = same, 5 = completely).",
        "Last, the texts are shown with their style words hidden; judge only the remaining content.",
    ),
    examples=(
        Example("the waiter was rude and the soup was cold .",
                ("the waiter was friendly and the soup was hot .", "waiter friendly soup soup hot was the ."),
                "Naturalness: A. Style difference: A 5, B 4. Masked content: A 5 (same facts), B 3.", _SENTIMENT),
    ),
    controls={"unrelated": {"content": (1, 2)}},
    degrade="scramble",
    qc_aspects=("naturalness", "content"),
)

BABAKOV_SIMILARITY = Protocol(
    name="similarity",
    title="Three-level content similarity with training and control items",
    citation="Babakov et al. (2022), content preservation in style transfer (SGDD-TST)",
    layout="single",
    aspects=(
        Question("similarity", "scale", "Do the two texts mean the same?", 0, 2, labels=(
            (0, "different meaning"), (1, "similar, with some differences"), (2, "same meaning"))),
    ),
    instructions=(
        "You will see two sentences. Ignore differences in style (politeness, slang, rudeness, sentiment words) "
        "and judge only whether they say the same thing.",
        "Choose 'same meaning' when every fact is kept, 'similar' when something is added, lost or changed, and "
        "'different meaning' when they are about different things.",
        "The first few items are training: after each you will see the expected answer.",
    ),
    examples=(
        Example("shut up and fix ur stupid code", ("Please be quiet and correct your code.",),
                "Same meaning: the rudeness is gone, the request is kept."),
        Example("the bus was late again this morning", ("The train was late this morning.",),
                "Similar, with some differences: the vehicle and 'again' changed."),
        Example("my cat sleeps all day", ("The report is due on Friday.",), "Different meaning."),
    ),
    controls={"copy": {"similarity": (2, 2)}, "unrelated": {"similarity": (0, 0)}},
    degrade="scramble",
    training=True,
)

SAADANY_SENTIMENT = Protocol(
    name="sentiment-transfer",
    title="Sentiment transfer on a 1-10 scale",
    citation="Saadany et al. (2021), human evaluation of sentiment transfer",
    layout="single",
    aspects=(
        Question("sentiment_transfer", "scale",
               "How well does the rewrite express the target sentiment while keeping the topic? (1 = not at all, "
               "10 = perfectly)", 1, 10, labels=((1, "not at all"), (10, "perfectly"))),
    ),
    instructions=(
        "You will see a review sentence and a rewrite that should flip its sentiment (positive to negative or back).",
        "Give 10 when the rewrite clearly has the target sentiment and talks about the same thing, 1 when the "
        "sentiment did not change at all.",
    ),
    examples=(
        Example("the pasta was fresh and tasty .", ("the pasta was stale and bland .",),
                "10: the sentiment is flipped and the topic kept.", _SENTIMENT),
        Example("the staff were helpful .", ("the staff were helpful and nice .",),
                "1: still positive, nothing was transferred.", _SENTIMENT),
    ),
    controls={"copy": {"sentiment_transfer": (1, 3)}},
    degrade="copy_source",
)

PROTOCOLS: dict[str, Protocol] = {p.name: p for p in (DIRECT_ASSESSMENT, RAO_TETREAULT, MIR_RELATIVE,
                                                      BABAKOV_SIMILARITY, SAADANY_SENTIMENT)}


def get_protocol(name: str) -> Protocol:
    """A built-in protocol by name; an unknown name lists the available ones."""
    try:
        return PROTOCOLS[name]
    except KeyError:
        raise UnknownNameError("protocol", name, list(PROTOCOLS)) from None
