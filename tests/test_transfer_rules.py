"""Rule-based formality transfer: each rule on hand-written cases, both directions."""
from __future__ import annotations

import pytest

from styleval.training.transfer import FormalityRules, to_formal, to_informal


@pytest.mark.parametrize("informal, formal", [
    ("i dunno", "I do not know."),                                   # slang, "i", capital, final stop
    ("wow!!!", "Wow!"),                                                # repeated punctuation
    ("that was sooo good", "That was so good."),                      # repeated letters
    ("lol that's funny", "That's funny."),                            # interjection dropped; 's kept (ambiguous)
    ("we can't go", "We cannot go."),                                 # irregular contraction
    ("they won't come", "They will not come."),
    ("she didn't call", "She did not call."),                         # n't
    ("we're late", "We are late."),                                   # 're
    ("ur late", "You are late."),                                     # ur -> you are before adjective
    ("ur mom called", "Your mom called."),                           # ur -> your otherwise
    ("ur going home", "You are going home."),                         # ur before -ing
    ("can u help me", "Can you help me?"),                           # question by its first word
    ("dont forget it", "Do not forget it."),                          # imperative, not a question
    ("see you on monday in london", "See you on Monday in London."),  # proper nouns
    ("i love my iphone", "I love my iPhone."),
    ("  spaced   out  ", "Spaced out."),                             # whitespace normalised
    ("", ""),
])
def test_to_formal(informal, formal):
    assert to_formal(informal) == formal


@pytest.mark.parametrize("formal, informal", [
    ("I do not know.", "idk"),
    ("It is late.", "it's late"),
    ("You are going to love it.", "you're gonna love it"),
    ("Thank you, please call me tomorrow.", "thank u, pls call me tmrw"),
    ("We cannot go.", "we can't go"),
    ("The USA is big.", "the USA is big"),
    ("By the way, I am here.", "btw, i'm here"),
])
def test_to_informal(formal, informal):
    assert to_informal(formal) == informal


def test_rules_are_extensible():
    rules = FormalityRules(slang={"cya": "see you"})
    assert rules.to_formal("cya") == "See you."
    assert rules.to_formal("u") == "U."  # the default list is replaced, not merged


def test_transfer_verb_rewrites_a_file(tmp_path):
    from styleval.cli.main import main

    src = tmp_path / "in.txt"
    src.write_text("i dunno\nwe can't go\n")
    out = tmp_path / "out.txt"
    assert main(["transfer", "--rules", "formality", "--direction", "informal->formal", str(src), "-o", str(out)]) == 0
    assert out.read_text() == "I do not know.\nWe cannot go.\n"
    assert main(["transfer", "--rules", "formality", "--direction", "positive->negative", str(src)]) == 2
